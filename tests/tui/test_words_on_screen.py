"""Words on screen at 120×40 and 80×24: what the panels, titles and notices say reads whole
and in the writer's terms (issue 37, "Words on screen")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tui_helpers import drawn_border, drawn_lines, generated, GREEDY, ready, typed

from scriptorium.app.tui.widgets.suggestion_view import line_words


async def test_a_suggestion_from_the_cursor_is_titled_by_its_lines_first_words(random_model: Path) -> None:
    """ "from line 1:364 · replaces 11 characters · …": a position no writer counts, and a
    title cut at 120 columns. The line's first words say which line; the title reads whole."""

    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, "Lucia scese al porto quella mattina, " * 8)
        await pilot.press(*["left"] * 11)
        await generated(pilot, "ctrl+o")
        await pilot.pause()
        title = drawn_border(app.main.draft.suggestion)
        assert title == "suggestion from ‘Lucia scese al…’", title


def test_line_words_cut_at_a_word_and_say_so() -> None:
    assert line_words("Lucia scese al porto") == "‘Lucia scese al…’"
    assert line_words("  Lucia  ") == "‘Lucia’"
    assert line_words("Precipitevolissimevolmente disse") == "‘Precipitevoliss…’"
    assert line_words("   ") == "the start of a line"


async def test_a_fixed_seed_reads_whole_in_the_sampler_panel_at_120_columns(random_model: Path) -> None:
    """ "seed 2904346228 (fixe": the value was cut while eleven cells beside "seed" stood blank."""

    async with ready(random_model, sampler=replace(GREEDY, seed=2904346228), size=(120, 40)) as (app, pilot):
        await pilot.press("ctrl+t")
        await pilot.pause()
        shown = drawn_lines(app.main.sidebar.sampler)
        seed = [line for line in shown if line.lstrip().startswith("seed")]
        assert len(seed) == 1 and seed[0].rstrip().endswith("2904346228 (fixed)"), shown


async def test_the_key_bar_keeps_tune_at_80_columns(random_model: Path) -> None:
    """At 80×24 the bar dropped "^t Tune" first: the one key that reaches the sampler."""

    async with ready(random_model, size=(80, 24)) as (app, pilot):
        await pilot.pause()
        bars = [app.screen._compositor.render_strips()[23].text]
        await typed(pilot, "Lucia scese al porto.")
        await generated(pilot, "ctrl+g")
        await pilot.pause()
        bars.append(app.screen._compositor.render_strips()[23].text)
        assert all("^t Tune" in bar and "Quit" in bar for bar in bars), bars


async def test_resume_shows_the_sessions_title_not_untitled(random_model: Path) -> None:
    """--resume of a draft with no file said "untitled" over a session the author had titled."""
    from scriptorium.app.sessions import SessionStore

    SessionStore().create_draft(title="Il porto di Lucia", text="Lucia scese al porto.")

    async with ready(random_model, resume=True, size=(120, 40)) as (app, pilot):
        await pilot.pause()
        status = app.main.status
        line = app.screen._compositor.render_strips()[status.region.y].text
        assert "Il porto di Lucia" in line and "untitled" not in line, line


async def test_an_untitled_draft_is_titled_by_its_first_words_as_they_stand(random_model: Path) -> None:
    """The first autosave titled the session, and the title stayed as the words stood then:
    "C'era una volta una casa s" on a busy machine, which a screenshot caught. A title the
    author gives stays theirs."""
    from tui_helpers import autosaved

    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, "C'era una volta una casa s")
        await autosaved(pilot)
        assert app.sessions.draft is not None and app.sessions.draft.title == "C'era una volta una casa s"
        await typed(pilot, "ul mare.")
        await autosaved(pilot)
        assert app.sessions.draft.title == "C'era una volta una casa sul"
        line = app.screen._compositor.render_strips()[app.main.status.region.y].text
        assert "casa sul" in line, line
        app.sessions.rename(app.sessions.draft.id, "Il porto di Lucia")
        await typed(pilot, " Poi")
        await autosaved(pilot)
        assert app.sessions.draft.title == "Il porto di Lucia"
