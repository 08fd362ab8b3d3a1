"""The one thing pyproject.toml cannot say without an experimental table: the C helper
for per-token probabilities (inference/_step.c). A compiler is already required to build
llama-cpp-python; the flags let -O3 vectorise the max over the vocabulary. Optional: a
Python without its C headers (Debian's python3 without python3-dev) still installs, and
scriptorium reads probabilities with numpy instead, a few percent slower."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "scriptorium.inference._step",
            sources=["inference/_step.c"],
            extra_compile_args=["-O3", "-ffinite-math-only", "-fno-signed-zeros"],
            optional=True,
        )
    ]
)
