"""Ctrl+g wrote a text; `f` fixed the seed it drew, and ctrl+r wrote another text twice, while
`continue --seed` gave the first one back. A re-roll evaluated only the prompt's last token
again, on the cache the first run left, and llama.cpp computes a position batched or alone a
little differently: enough to move every probability, so the same seed drew other tokens. A
fixed seed's prompt is evaluated afresh, as `continue` evaluates it. Checked on the random
model (attention on: its numbers depend on the batching) by every token's id and probability,
exactly: equal arithmetic draws equal tokens, whatever the margins."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tui_helpers import generated, ready

from scriptorium.inference.core.settings import preset

SCRIPTORIUM = str(Path(sys.executable).with_name("scriptorium"))
TEMPERATURE_ONE = preset("prose").with_changes(temperature=1.0, max_tokens=8)
TEXT = "La notte era lunga e il gatto guardò la luna sopra il porto"


def continued_with_seed(draft: Path, model: Path, seed: int) -> list[tuple[int, float]]:
    """`continue --json --seed`: each token's id and probability."""
    result = subprocess.run(
        [
            SCRIPTORIUM,
            "continue",
            str(draft),
            "--model",
            str(model),
            "--preset",
            "prose",
            "--temperature",
            "1",
            "--max-tokens",
            "8",
            "--seed",
            str(seed),
            "--ctx",
            "512",
            "--threads",
            "1",
            "--flash-attn",
            "on",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return [(line["id"], line["p"]) for line in lines if line["type"] == "token"]


async def test_a_fixed_seed_rerolls_the_first_text_and_continue_writes_it_too(
    random_model: Path, tmp_path: Path
) -> None:
    draft = tmp_path / "porto.md"
    draft.write_text(TEXT, encoding="utf-8")

    runs: list[list[tuple[int, float]]] = []

    async def scenario() -> None:
        async with ready(random_model, draft=draft, sampler=TEMPERATURE_ONE, size=(120, 40)) as (app, pilot):
            await pilot.press("ctrl+end")
            first = await generated(pilot, "ctrl+g")
            runs.append([(e.id, e.p) for e in app.main.last_generation[1]])
            await pilot.press("ctrl+t", "f", "escape")
            assert app.engine_state.sampler.seed == first.seed is not None
            assert any(n.title == "Seed" and "afresh" in n.message for n in app.notices)
            for _ in range(2):
                again = await generated(pilot, "ctrl+r")
                assert again.seed == first.seed
                runs.append([(e.id, e.p) for e in app.main.last_generation[1]])
        runs.append(continued_with_seed(draft, random_model, first.seed))

    await scenario()
    first, *others = runs
    assert len(first) == 8 and len(others) == 3 and all(other == first for other in others)
