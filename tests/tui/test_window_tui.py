"""Memory, the author's note and the window in the app: what the model is sent, what does
not fit, the KV panel's split, and the marker showing where the model's window starts in
the draft. The memory and note dialogs themselves are in test_pinned_dialogs_tui.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from textual.widgets import TextArea

from tui_helpers import generated, GREEDY, HeldCounts, ready, spying_loader, typed, until, window_marked, write_pinned

from scriptorium.app.sessions import SessionStore
from scriptorium.app.tui.widgets.draft_editor import OUTSIDE
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.window.window import MARGIN_TOKENS, boundaries, prompt_budget

PARAGRAPH = "Il gatto nero dorme sul tetto. La casa era buia nella notte più lunga."
LONG = "\n\n".join(f"{PARAGRAPH} Poi il cane corre verso la porta {i}." for i in range(120))


def long_draft(tmp_path: Path) -> Path:
    """A draft file far longer than the short context's window."""
    draft = tmp_path / "long.md"
    draft.write_text(LONG, encoding="utf-8")
    return draft


async def test_memory_and_note_are_edited_kept_and_sent(random_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(random_model, loader=load, size=(160, 50)) as (app, pilot):
        await typed(pilot, "Una casa.")
        await pilot.press("enter", "enter")
        await typed(pilot, "Un gatto.")
        await write_pinned(pilot, "alt+e", "Il gatto si chiama Nero.")
        await write_pinned(pilot, "alt+n", "[Tono cupo.]", depth="1")
        assert app.screen is app.main
        session = app.sessions.draft
        assert session is not None
        assert (session.memory, session.note, session.note_depth) == ("Il gatto si chiama Nero.", "[Tono cupo.]", 1)
        done = await generated(pilot, "ctrl+g")
        prompt = spies[-1].last["prompt"]
        assert prompt == "Il gatto si chiama Nero.\n\nUna casa.\n\n[Tono cupo.]\n\nUn gatto."
        window = app.main.last_generation[0].window
        assert window is not None and window.prompt_tokens == done.prompt_tokens
        assert window.memory_tokens > 0 and window.note_tokens > 0
        kv = "\n".join(str(line) for line in app.main.sidebar.kv.lines(60))
        assert f"mem {window.memory_tokens}·note {window.note_tokens}·draft {window.draft_tokens}·free" in kv
        # Escape leaves the memory as it was.
        await pilot.press("alt+e")
        await pilot.pause()
        app.screen.query_one("#pinned-text", TextArea).text = "gone"
        await pilot.press("escape")
        assert session.memory == "Il gatto si chiama Nero."
        # Kept in the session file.
        assert SessionStore().load(session.id).note == "[Tono cupo.]"


async def test_the_marker_dims_what_the_model_does_not_see(short_context_model: Path, tmp_path: Path) -> None:
    draft = long_draft(tmp_path)

    async with ready(short_context_model, draft=draft, size=(120, 40)) as (app, pilot):
        editor = app.main.draft.editor
        await window_marked(pilot)  # the marker follows the loaded model
        start = editor.window_start
        assert start > 0 and start in boundaries(LONG)[0]
        row, column = editor.document.get_location_from_index(start)
        assert editor.row_styles(0)[0] == (0, None, OUTSIDE)
        if column:
            assert editor.row_styles(row)[0] == (0, column, OUTSIDE)
        assert all(name != OUTSIDE for _, _, name in editor.row_styles(row + 1))
        done = await generated(pilot, "ctrl+g")
        window = app.main.last_generation[0].window
        # The marker showed what the model then saw. (Not read from the editor now: once the
        # marker is measured again with the suggestion showing, it marks the next continuation's
        # window, from the suggestion's end, and on a loaded machine that came before this line.)
        assert window is not None and window.start == start
        assert done.prompt_tokens <= app.engine_state.backend.n_ctx - done.completion_tokens
        # Typing at the end moves the window on once typing pauses.
        await pilot.press("tab")  # accept the suggestion
        await pilot.press("end")
        await typed(pilot, " Poi il gatto dorme sul tetto nella notte più lunga.")
        await window_marked(pilot)
        assert editor.window_start >= start


async def test_the_marker_on_a_book_counts_only_the_end_of_it(short_context_model: Path, tmp_path: Path) -> None:
    book = "\n\n".join(f"{PARAGRAPH} Poi il cane corre verso la porta {i}." for i in range(3000))  # ~300 KB
    draft = tmp_path / "book.md"
    draft.write_text(book, encoding="utf-8")
    counted: list[int] = []

    def load(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        engine = Engine.load(options, on_progress)
        count = engine.count_tokens

        def recorded(text: str) -> int:
            counted.append(len(text))
            return count(text)

        engine.count_tokens = recorded  # type: ignore[method-assign]
        return engine

    async with ready(short_context_model, draft=draft, loader=load, size=(120, 40)) as (app, pilot):
        await window_marked(pilot)
        editor, backend = app.main.draft.editor, app.engine_state.backend
        assert editor.window_start > len(book) - 20_000 and editor.window_start in boundaries(book)[0]
        bound = (
            prompt_budget(backend.n_ctx, app.main.draft.engine_state.sampler.max_tokens) + MARGIN_TOKENS
        ) * backend.longest_piece_chars
        assert counted and max(counted) <= bound < len(book) // 10


async def test_no_key_waits_for_the_window_to_be_counted(random_model: Path) -> None:
    """Counting tokens asks the engine's process, or a server that may hang. The window
    marker is counted off the UI thread, and a continuation's prompt is fitted in the
    generation's worker: keys are taken while a count is held, Esc ends a continuation
    still being fitted at once, and it leaves nothing in the session (nothing ran)."""
    counts = HeldCounts()
    counts.hold()

    try:
        async with ready(random_model, loader=counts.loader()) as (app, pilot):
            editor = app.main.draft.editor
            await typed(pilot, "Una casa.")
            await counts.wait_counting()  # the marker's count started, and is held
            await typed(pilot, " Un gatto.")
            assert editor.text == "Una casa. Un gatto."  # taken while the count is held
            counts.release()
            await app.workers.wait_for_complete()
            counts.hold()
            await pilot.press("ctrl+g")
            await counts.wait_counting()
            assert app.main.is_generating
            await typed(pilot, " Nero.")
            assert editor.text == "Una casa. Un gatto. Nero."
            await pilot.press("escape")
            assert not app.main.is_generating and editor.ghost is None
            counts.release()
            await app.workers.wait_for_complete()
            session = app.sessions.draft
            assert session is not None
            # The worker's GenerationWithdrawn reaches the App through the screen: one pause
            # was not always enough on a loaded machine for it to be handled.
            await until(pilot, lambda: not session.generations, "the withdrawn continuation forgotten")
            assert not [n for n in app.notices if n.severity == "error"]
            # The engine was never asked, so it is free for the next continuation.
            await generated(pilot, "ctrl+g")
            assert len(session.generations) == 1 and session.generations[0].tokens
    finally:
        counts.release()


async def test_memory_too_long_for_the_window_is_said_and_nothing_runs(random_model: Path) -> None:
    async with ready(random_model, size=(160, 50)) as (app, pilot):
        await typed(pilot, "Una casa.")
        await write_pinned(pilot, "alt+e", "Il gatto nero dorme sul tetto. " * 200)
        await pilot.press("ctrl+g")
        await app.main.wait_until_idle()
        await app.workers.wait_for_complete()
        await pilot.pause()
        said = [n for n in app.notices if n.title == "Window"]
        assert said and "memory" in said[-1].message
        assert app.main.draft.editor.ghost is None and app.main.draft.editor.text == "Una casa."
        session = app.sessions.draft
        assert session is not None and session.generations == []


async def test_a_memory_too_long_for_the_window_is_said_when_kept(short_context_model: Path) -> None:
    """'Memory kept: the model sees it in every prompt' would be untrue: the window's
    measure finds at once that memory and note leave no room, and says so, once."""

    async with ready(short_context_model, size=(160, 50)) as (app, pilot):
        await typed(pilot, "Una casa.")
        await write_pinned(pilot, "alt+e", LONG[:3000])
        await window_marked(pilot)

        def said() -> list[str]:
            return [n.message for n in app.notices if "the memory alone takes" in n.message]

        assert len(said()) == 1
        await typed(pilot, " Un gatto.")  # typing on: the same problem is not said again
        await window_marked(pilot)
        assert len(said()) == 1


async def test_the_kv_panel_shows_the_room_left_whole_beside_memory_and_note(random_model: Path) -> None:
    """At the panel's own width (the author's 140-column terminal gives it 28 cells), the
    split 'mem 13·note 19·draft 64·free 160' was cut to '…·fre…': the room left, the number
    an author with a 256-token window watches, was never shown once memory and note were set."""

    async with ready(random_model, size=(140, 40)) as (app, pilot):
        await typed(pilot, "Una casa.")
        await pilot.press("enter", "enter")
        await typed(pilot, "Un gatto nero dorme sul tetto.")
        await write_pinned(pilot, "alt+e", "Il gatto si chiama Nero. La casa è sul fiume.")
        await write_pinned(pilot, "alt+n", "[Tono cupo, frasi brevi.]")
        done = await generated(pilot, "ctrl+g")
        window = app.main.last_generation[0].window
        assert window is not None and window.memory_tokens >= 10 and window.note_tokens >= 10
        kv = app.main.sidebar.kv
        width = kv.content_size.width
        assert width <= 31  # the side panels' own width (a column of the wide layout's 70), not a roomy one
        split = kv.lines(width)[5].plain
        free = app.engine_state.backend.n_ctx - done.prompt_tokens
        numbers = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", split)]
        assert numbers == [window.memory_tokens, window.note_tokens, window.draft_tokens, free], split
        assert "…" not in split and all(label in split for label in ("mem", "note", "draft", "free"))


async def test_the_kv_panel_says_the_cache_was_shifted_in_its_own_width(
    short_context_model: Path, tmp_path: Path
) -> None:
    """'reused 455 of 487 tok (shifted)' is wider than the panel: it was drawn as
    'reused 455 of 487 tok (shift', the word that says the cache slid with the window cut."""
    draft = long_draft(tmp_path)

    async with ready(short_context_model, draft=draft, size=(140, 40)) as (app, pilot):
        await generated(pilot, "ctrl+g")
        await pilot.press("tab", "end")
        await typed(pilot, " Poi il gatto dorme sul tetto nella notte più lunga.")
        done = await generated(pilot, "ctrl+g")
        assert done.cache_reuse == "shifted"
        kv = app.main.sidebar.kv
        drawn = kv.render_line(4).text.rstrip()
        assert f"{done.reused_tokens}" in drawn and f"{done.prompt_tokens}" in drawn and "shifted" in drawn, drawn


async def test_a_note_at_depth_zero_leaves_its_paragraph_break_in_the_draft(random_model: Path) -> None:
    """At depth 0 the note closes the window in its own paragraph and the model writes on
    after it: the suggestion glued to the draft's last word ("dormeLa notte")."""

    load, spies = spying_loader()
    async with ready(random_model, loader=load, size=(160, 50)) as (app, pilot):
        await typed(pilot, "Il gatto dorme")
        await write_pinned(pilot, "alt+n", "[Tono cupo.]", depth="0")
        done = await generated(pilot, "ctrl+g")
        assert spies[-1].last["prompt"] == "Il gatto dorme\n\n[Tono cupo.]\n\n"
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and ghost.text.startswith("\n\n")
        written = ghost.text[2:]
        assert written and done.stop_reason != "cancelled"
        await pilot.press("tab")
        await pilot.pause()
        assert app.main.draft.text == "Il gatto dorme\n\n" + written


async def test_a_suggestion_from_the_cursor_dims_the_text_after_it_which_the_model_does_not_see(
    short_context_model: Path, tmp_path: Path
) -> None:
    draft = long_draft(tmp_path)
    middle = LONG.index("Poi il cane corre verso la porta 60.")  # mid-line: the rest of its line is unseen too

    async with ready(short_context_model, draft=draft, size=(120, 40)) as (app, pilot):
        editor = app.main.draft.editor
        editor.move_cursor(editor.document.get_location_from_index(middle))
        await generated(pilot, "ctrl+o")
        await window_marked(pilot)
        ghost = editor.ghost
        assert ghost is not None and ghost.from_cursor
        window = app.main.last_generation[0].window
        # The space before the cursor stays in the prompt: healing backs up over it (inference/local/healing.py).
        assert window is not None and (window.end, window.spaces_left_out) == (middle, 0)
        assert 0 < window.start < middle
        row, column = ghost.anchor

        def dimmed(at_row: int) -> list[tuple[int, int | None]]:
            return [(start, end) for start, end, name in editor.row_styles(at_row) if name == OUTSIDE]

        assert dimmed(row) == [(column, None)]  # what the model saw ends at the suggestion
        assert all(dimmed(after) == [(0, None)] for after in range(row + 1, editor.document.line_count))
        assert window.start <= editor.window_start < middle  # the next one sees the suggestion too
        seen_from = editor.document.get_location_from_index(editor.window_start)[0]
        assert all(not dimmed(seen) for seen in range(seen_from + 1, row))
        # Thrown away, the suggestion takes its marker with it: the next continues from the end.
        await pilot.press("escape", "escape")
        await window_marked(pilot)
        assert not dimmed(editor.document.line_count - 1)


async def test_a_suggestion_longer_than_the_window_thrown_away_gives_the_draft_its_marker_back(
    short_context_model: Path, tmp_path: Path
) -> None:
    draft = long_draft(tmp_path)
    writes_a_window = GREEDY.with_changes(max_tokens=400)  # the prompt keeps half the context, the suggestion the rest

    async with ready(short_context_model, draft=draft, sampler=writes_a_window, size=(120, 40)) as (app, pilot):
        await window_marked(pilot)
        editor = app.main.draft.editor
        before = editor.window_start
        assert 0 < before < len(LONG)
        await generated(pilot, "ctrl+g")
        await window_marked(pilot)
        ghost = editor.ghost
        assert ghost is not None and len(ghost.tokens) >= prompt_budget(app.engine_state.backend.n_ctx, 400)
        await generated(pilot, "ctrl+g")  # more: the model now sees the suggestion only
        assert editor.window_start == len(LONG)  # none of the draft
        await pilot.press("escape", "escape")  # thrown away
        await window_marked(pilot)
        assert editor.ghost is None and editor.window_start == before


async def test_the_kv_split_adds_up_to_the_prompt_llama_cpp_evaluated(random_model: Path) -> None:
    """A cache moved with the window keeps the window's first words as it spelled them
    (" Poi" where the new prompt has "Poi"): llama.cpp then evaluates a token more or less
    than the window counted, and the panel said 'reused 106 of 106' beside a split adding
    up to 107. The split is of what was evaluated."""

    async with ready(random_model, size=(160, 40)) as (app, pilot):
        await typed(pilot, "Una casa. Un gatto nero dorme sul tetto.")
        await write_pinned(pilot, "alt+e", "Il gatto si chiama Nero.")
        done = await generated(pilot, "ctrl+g")
        window = app.main.last_generation[0].window
        assert window is not None
        kv = app.main.sidebar.kv
        evaluated = done.prompt_tokens - 1  # as a respelled lead leaves it
        kv.show_reuse(evaluated - 3, evaluated, "shifted")
        kv.show_window(window)
        numbers = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", kv.lines(60)[5].plain)]
        assert numbers[0] == window.memory_tokens and sum(numbers[:-1]) == evaluated
        assert numbers[-1] == app.engine_state.backend.n_ctx - evaluated
