"""A llama-server started with a draft model speculates on its own, and streams every token of a
verifying pass with no probabilities (`result.prob = 1.0f` and `// TODO: set result.probs` in
its source). The app marks the guesses it accepted, says "no p from the server" where their bars
would be, never 100%, gives them no probability colour, and the Speed panel shows the server's
totals."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tui_helpers import GREEDY, generated, ready, typed

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from gguf_loop import PROMPT as LOOP_PROMPT  # noqa: E402
from gguf_loop import loop_transitions  # noqa: E402
from gguf_models import write_llama_model  # noqa: E402
from llama_server import LlamaServer, server_binary  # noqa: E402

from scriptorium.app.cli.common import SERVER_MODEL  # noqa: E402
from scriptorium.app.tui.token_spans import bucket  # noqa: E402
from scriptorium.inference.core.events import has_probability  # noqa: E402
from scriptorium.inference.remote.remote import remote_loader  # noqa: E402


def text_of(panel, width: int = 60) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(line.plain for line in panel.lines(width))


@pytest.fixture(scope="module")
def loop_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Repeats one phrase, each word winning by 0.3 logits or more (gguf_loop.py); as its own
    draft it guesses what greedy decoding writes."""
    transitions, default_next = loop_transitions()
    return write_llama_model(
        tmp_path_factory.mktemp("loop") / "loop.gguf", kind="markov", transitions=transitions, default_next=default_next
    )


async def test_the_servers_guessed_tokens_show_no_probability_never_100_percent(
    loop_model: Path, tmp_path: Path
) -> None:
    server_binary()

    async def scenario(server: LlamaServer) -> None:
        async with ready(
            SERVER_MODEL,
            loader=remote_loader(server.url),
            sampler=GREEDY.with_changes(max_tokens=16),
            size=(160, 48),
        ) as (app, pilot):
            await typed(pilot, LOOP_PROMPT.strip())
            done = await generated(pilot, "ctrl+g")
            counts = done.speculation
            assert counts is not None and counts.guesser == "server" and counts.accepted > 0
            assert "· no p" in text_of(app.main.sidebar.speed, 40)
            tokens = app.main.draft.editor.ghost.tokens
            guessed = [index for index, token in enumerate(tokens) if token.drafted]
            assert len(guessed) == counts.accepted
            assert all(not has_probability(tokens[i].p) and bucket(tokens[i].p) is None for i in guessed)
            assert all(has_probability(t.p) or bucket(t.p) is None for t in tokens)
            await pilot.press("f4", *["left"] * (len(tokens) - 1 - guessed[-1]))
            await pilot.pause()
            panel = app.main.sidebar.probabilities
            shown = text_of(panel)
            assert "no p from the server" in shown and "100" not in shown and "nan" not in shown
            assert "· guessed" in panel.border_title
            await pilot.press("escape", "f8")
            await pilot.pause()
            rendered = app.main.draft.suggestion._text()
            offset = len(rendered.plain) - len(app.main.draft.editor.ghost.text)
            style = rendered.get_style_at_offset(app.console, offset + tokens[guessed[-1]].start)
            assert style.underline  # marked guessed, and drawn in no probability's colour (bucket None)

    draft = ("--spec-type", "draft-simple", "--model-draft", str(loop_model))
    with LlamaServer(loop_model, tmp_path, *draft) as server:
        await scenario(server)
