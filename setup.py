"""The one thing pyproject.toml cannot say without an experimental table: the C helpers,
for per-token probabilities (inference/local/_step.c) and for every token's bytes at once
(inference/core/_pieces.c). A compiler is already required to build llama-cpp-python; the
flags let -O3 vectorise the max over the vocabulary. Optional: a Python without its C
headers (Debian's python3 without python3-dev) still installs, and scriptorium reads
probabilities with numpy instead, a few percent slower, and the token pieces with one
ctypes call each."""

from setuptools import Extension, find_namespace_packages, setup

# Folder -> installed package; every package below each folder is found, none listed by hand.
TOP_LEVEL = {"app": "scriptorium.app", "inference": "scriptorium.inference", "prompts": "scriptorium.prompts"}


def packages() -> list[str]:
    """Every folder below each top-level one, as a package: data folders too (app/locale and
    its language folders hold only catalogs), since setuptools warns that it will stop
    installing data from a folder that is not a listed package."""
    found = []
    for folder, name in TOP_LEVEL.items():
        found.append(name)
        found += [f"{name}.{sub}" for sub in find_namespace_packages(folder, exclude=["__pycache__", "*.__pycache__"])]
    return found


setup(
    packages=packages(),
    ext_modules=[
        Extension(
            "scriptorium.inference.local._step",
            sources=["inference/local/_step.c"],
            extra_compile_args=["-O3", "-ffinite-math-only", "-fno-signed-zeros"],
            optional=True,
        ),
        Extension(
            "scriptorium.inference.core._pieces",
            sources=["inference/core/_pieces.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
    ],
)
