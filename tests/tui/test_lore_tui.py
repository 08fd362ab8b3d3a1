"""The lorebook in the app: the entries the draft's end mentions reach the prompt, the KV
panel's split counts them, F4 on a token says which were in its prompt, the session
records them per suggestion, and entries dropped for room are said. The editor screen
is tested in test_lore_screen_tui.py."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import generated, ready, spying_loader, typed, until, window_marked

from scriptorium.app.sessions import SessionStore
from scriptorium.inference.window.lore import LoreEntry, Lorebook

BOOK = Lorebook(
    (
        LoreEntry("Lucia", ("Lucia",), "Lucia ha sedici anni.", priority=5),
        LoreEntry("Marco", ("Marco",), "Marco è il fratello.", priority=3),
        LoreEntry("Torre", ("torre",), "La torre è crollata.", priority=1),
    )
)
TEXT = "Una casa sul lago. Poi arrivò Lucia."


def draft_with_lore(tmp_path: Path, lorebook: Lorebook, text: str = TEXT) -> Path:
    """A draft file whose session (as an earlier run left it) holds `lorebook`."""
    path = tmp_path / "storia.md"
    path.write_text(text + "\n", encoding="utf-8")
    store = SessionStore()
    session = store.open_draft(path)
    session.lore = lorebook
    store.save(session)
    return path


async def test_the_lore_the_draft_mentions_is_sent_counted_inspected_and_recorded(
    random_model: Path, tmp_path: Path
) -> None:
    draft = draft_with_lore(tmp_path, BOOK)

    load, spies = spying_loader()
    async with ready(random_model, draft=draft, loader=load, size=(160, 50)) as (app, pilot):
        await window_marked(pilot)
        assert app.main.draft.lorebook == BOOK
        assert [(f.name, f.key, f.kept) for f in app.main.draft.last_lore] == [("Lucia", "Lucia", True)]
        done = await generated(pilot, "ctrl+g")
        prompt = spies[-1].last["prompt"]
        assert prompt == "Lucia ha sedici anni.\n\n" + TEXT
        window = app.main.last_generation[0].window
        assert window is not None and window.prompt_tokens == done.prompt_tokens
        [fired] = window.lore
        assert (fired.name, fired.kept) == ("Lucia", True) and fired.tokens == window.lore_tokens > 0
        kv = "\n".join(str(line) for line in app.main.sidebar.kv.lines(60))
        assert f"lore {window.lore_tokens}·draft {window.draft_tokens}·free" in kv
        # F4 on a token of the suggestion: how it was sampled, and the lore its prompt held.
        await pilot.press("f4")
        await pilot.pause()
        assert app.main.sidebar.probabilities.border_subtitle == "greedy · lore: Lucia"
        await pilot.press("escape")
        # The session records, for this suggestion, what fired.
        assert app.sessions.draft.generations[-1].lore == window.lore


async def test_a_half_typed_key_does_not_change_the_prompt(random_model: Path, tmp_path: Path) -> None:
    draft = draft_with_lore(tmp_path, BOOK, "Una casa sul lago.")

    async with ready(random_model, draft=draft, size=(120, 40)) as (app, pilot):
        await pilot.press("ctrl+end")
        await typed(pilot, " Poi arrivò Marc")
        await window_marked(pilot)
        assert app.main.draft.last_lore == ()
        await pilot.press("o")  # "Marco", but the word may go on ("Marcone"): not yet
        await window_marked(pilot)
        assert app.main.draft.last_lore == ()
        await pilot.press(",")
        await window_marked(pilot)
        assert [f.name for f in app.main.draft.last_lore] == ["Marco"]


async def test_entries_dropped_for_room_are_said_once(random_model: Path, tmp_path: Path) -> None:
    draft = draft_with_lore(tmp_path, Lorebook(BOOK.entries, budget=0), TEXT + " E Marco.")

    async with ready(random_model, draft=draft, size=(120, 40)) as (app, pilot):
        await until(
            pilot,
            lambda: any("Left out for room" in n.message for n in app.notices),
            "the lore left out said",
        )
        said = [n.message for n in app.notices if "Left out for room" in n.message]
        assert said[0].startswith("Left out for room: Lucia (") and ", Marco (" in said[0]
        await pilot.press("ctrl+end")  # the same entries left out: not said again
        await typed(pilot, " Poi")
        await window_marked(pilot)
        assert len([n for n in app.notices if "Left out for room" in n.message]) == 1
