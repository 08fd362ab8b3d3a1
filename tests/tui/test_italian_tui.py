"""The interface in Italian ([ui] language, or an Italian locale): the footer, the help, the
palette, the panels with Italian numbers ("2.048", "3.500,0 tok/s") and the notices; and an
explicit English that an Italian locale does not override."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, OptionList
from textual.widgets._footer import FooterKey
from tui_helpers import (
    autosaved,
    drawn_border,
    drawn_lines,
    generated,
    make_app,
    model_ready,
    ready,
    typed,
    until,
    write_pinned,
)

from scriptorium.app.cli.main import build_parser
from scriptorium.app.cli.tui_cmd import build_app
from scriptorium.app.i18n.language import Language
from scriptorium.app.models import choice as model_choice
from scriptorium.app.tui.branches import shown_label, version_label
from scriptorium.app.tui.screens.alternatives_screen import AlternativesScreen
from scriptorium.app.tui.screens.compare_screen import CompareScreen
from scriptorium.app.tui.screens.context_screen import ContextScreen
from scriptorium.app.tui.screens.help_screen import HelpScreen
from scriptorium.app.tui.screens.load_model_screen import LoadModelScreen
from scriptorium.app.tui.screens.lore_entry_screen import LoreEntryScreen
from scriptorium.app.tui.screens.lore_screen import LoreScreen
from scriptorium.app.tui.screens.model_picker import ModelPickerScreen, WelcomeScreen
from scriptorium.app.tui.screens.pinned_screen import PinnedScreen

OPENING = "C'era una volta una casa sul lago."


def footer_names(app: Any) -> list[str]:
    return [key.description for key in app.main.query(FooterKey)]


async def suggestion_written(pilot: Any) -> None:
    """The model ready, the opening typed, and its suggestion written (ctrl+g)."""
    pilot.app.main.draft.editor.insert(OPENING)
    await generated(pilot, "ctrl+g")


async def test_the_footer_help_and_palette_speak_italian(phrases_model: Path) -> None:
    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        idle = " ".join(drawn_lines(app.main.sidebar.probabilities))
        assert "premi ^g per continuare la bozza" in idle, idle
        names = footer_names(app)
        assert {"Continua", "Tasti", "Modo", "Esci"} <= set(names), names
        assert not {"Continue", "Keys", "Mode", "Quit"} & set(names), names
        commands = [command.title for command in app.get_system_commands(app.main)]
        assert "Bozza: Continua" in commands and "Generale: Esci" in commands, commands
        assert "Tema" in commands and "Theme" not in commands, commands  # Textual's own, too
        await pilot.press("f1")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        sections = {row[0] for row in app.keys.rows()}
        assert {"Generale", "Bozza", "Pannello del sampler"} <= sections
        assert ("Esci", "Esci da scriptorium") in {(row[2], row[3]) for row in app.keys.rows()}
        assert app.keys.key_display("app.quit") == "^q"  # the keys and ids are not translated


async def test_the_panels_write_numbers_the_italian_way(phrases_model: Path) -> None:
    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        await suggestion_written(pilot)
        sidebar = app.main.sidebar
        model = drawn_lines(sidebar.model)
        assert any("contesto 512 (addestrato 2.048)" in line for line in model), model  # "2,048" in English
        speed = drawn_lines(sidebar.speed)
        label, value, unit = speed[0].rsplit(maxsplit=2)
        assert (label, unit) == ("TTFT dal tasto", "ms") and value[-2] == ",", speed  # "661,5 ms"
        assert drawn_border(sidebar.probabilities).startswith("Probabilità · token ")
        assert drawn_border(sidebar.kv) == "Cache KV" and drawn_border(sidebar.speed).startswith("Velocità")
        assert any("token" in line and "/ 512 token" in line for line in drawn_lines(sidebar.kv))
        assert " Bozza " in app.main.status.render().plain and "parole" in app.main.status.render().plain


async def test_notices_speak_italian(phrases_model: Path, tmp_path: Path) -> None:
    async with ready(
        phrases_model,
        draft=tmp_path / "racconto.md",
        language=Language.load("it"),
        size=(160, 48),
    ) as (app, pilot):
        await suggestion_written(pilot)
        await pilot.press("escape")  # a first Esc on a finished suggestion asks
        await pilot.press("ctrl+s")
        await pilot.pause()
        said = [notice.message for notice in app.notices]
        assert "Tenuto. esc di nuovo scarta il suggerimento." in said, said
        assert "Salvato racconto.md" in said, said
        await pilot.press("alt+h")  # the messages screen says them again, under an Italian heading
        heading = str(app.screen.query_one("#messages-title").render())
        assert heading.endswith("messaggi in questa esecuzione, il più recente in fondo · Esc chiude"), heading


async def test_the_context_viewer_speaks_italian(phrases_model: Path) -> None:
    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        app.main.draft.editor.load_text(OPENING)
        await write_pinned(pilot, "alt+e", "Un romanzo sul lago.")
        await pilot.press("f6")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await until(pilot, lambda: screen._next is not None, "the next prompt made")
        assert str(screen.query_one("#context-title").render()) == "Il prossimo prompt: quello che ^g invierebbe ora"
        counts = str(screen.query_one("#context-counts").render())
        assert "memoria " in counts and "La finestra inizia all'inizio della bozza" in counts, counts
        assert "── memoria ──" in str(screen.query_one("#context-prompt").render())
        await pilot.press("tab")  # no generation yet: the last prompt says so
        await pilot.pause()
        said = str(screen.query_one("#context-counts").render())
        assert said == "Ancora nessuna generazione: tab mostra il prossimo prompt.", said


def no_demo_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """As without the demo extra: discovery finds only what the test puts in models_dir."""
    monkeypatch.setattr(model_choice, "demo_available", lambda: False)
    monkeypatch.setattr(model_choice.demo_model, "demo_entry", lambda cache_dir: None)


async def test_the_model_picker_and_the_load_dialog_speak_italian(
    phrases_model: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_demo_model(monkeypatch)
    shutil.copy(phrases_model, models_dir / "frasi.gguf")

    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        await pilot.press("f10")
        screen = app.screen
        assert isinstance(screen, ModelPickerScreen)
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert str(screen.query_one(".dialog-title").render()) == "Scegli un modello"
        listed = str(screen.query_one("#picker-models", OptionList).get_option_at_index(0).prompt)
        assert listed.endswith(" MiB · cartella dei modelli") and "," in listed.split(" · ")[-2], listed
        assert str(screen.query_one("#picker-adapters", OptionList).get_option_at_index(0).prompt) == "nessuno"
        await pilot.press("escape")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert isinstance(app.screen, LoadModelScreen)
        assert str(app.screen.query_one(".dialog-title").render()) == "Carica un modello"
        assert str(app.screen.query_one("#load").label) == "Carica"


async def test_the_welcome_screen_speaks_italian(
    tmp_path: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_demo_model(monkeypatch)
    config = tmp_path / "config.toml"
    config.write_text('[ui]\nlanguage = "it"\n', encoding="utf-8")

    app = build_app(build_parser(None).parse_args(["--config", str(config)]))
    async with app.run_test(size=(160, 48)) as pilot:
        await model_ready(pilot)
        assert isinstance(app.screen, WelcomeScreen)
        assert str(app.screen.query_one(".dialog-title").render()).startswith("Benvenuto in scriptorium")
        intro = str(app.screen.query_one("#picker-intro").render())
        assert intro.startswith("Indica a scriptorium un file di modello GGUF in uno di questi modi:"), intro
        assert "  • avvialo con  scriptorium --model FILE.gguf" in intro, intro
        said = str(app.screen.query_one("#picker-models", OptionList).get_option_at_index(0).prompt)
        assert said == "Nessun modello GGUF trovato (sopra c'è scritto dove metterne uno).", said


async def test_the_compare_screen_speaks_italian(phrases_model: Path) -> None:
    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        app.main.draft.editor.load_text(OPENING)
        await pilot.press("f11")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert str(screen.query_one(".dialog-title").render()) == "Confronta modelli su questa bozza"
        headings = [str(column.label) for column in screen.query_one("#compare-table", DataTable).columns.values()]
        assert headings[:2] == ["modello", "bit/car"], headings
        screen.query_one("#compare-scales", Input).value = "0 mezzo"
        await pilot.click("#compare-start")
        await until(pilot, lambda: bool(app.notices), "the notice")
        said = [notice.message for notice in app.notices]
        assert "Scale LoRA: 'mezzo' non è un numero." in said, said
        # The loaded model against itself: the figures in Italian, in both tables.
        screen.query_one("#compare-scales", Input).value = ""
        models = screen.query_one("#compare-models", Input)
        models.value += " " + models.value
        models.focus()
        await pilot.press("enter")  # the first notice may lie over the button
        table = screen.query_one("#compare-table", DataTable)
        for _ in range(1800):  # the children load the model on a busy machine: up to three minutes
            if table.row_count == 2 and not screen.running:
                break
            await pilot.pause(0.1)
        said = [notice.message for notice in app.notices]
        assert table.row_count == 2 and not screen.running, said
        bits = str(table.get_row_at(1)[1])  # bits per character: "2,3456", as "2.3456" in English
        assert bits[-5] == "," and bits[-4:].isdigit(), bits
        paragraphs = screen.query_one("#compare-paragraphs", DataTable)
        assert [str(column.label) for column in paragraphs.columns.values()][1] == "paragrafo"
        assert str(paragraphs.get_row_at(0)[-1]) == "+0,000"


async def test_the_lorebook_and_the_note_speak_italian(phrases_model: Path) -> None:
    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        await pilot.press("alt+l")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LoreScreen)
        assert str(screen.query_one("#lore-title").render()).startswith("Lorebook · a aggiunge · Invio modifica")
        table = screen.query_one("#lore-table", DataTable)
        assert [str(column.label) for column in table.columns.values()][:3] == ["attiva", "nome", "chiavi"]
        assert str(table.get_row_at(0)[1]) == "Ancora nessuna voce: a ne aggiunge una"
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, LoreEntryScreen)
        await pilot.press("ctrl+s")  # neither a name nor a key
        await until(pilot, lambda: bool(app.notices), "the notice")
        assert app.notices[-1].message == "dai alla voce un nome o una chiave"
        assert app.notices[-1].title == "Voce di lore"
        await pilot.press("escape", "escape")
        await pilot.press("alt+n")
        await pilot.pause()
        note = app.screen
        assert isinstance(note, PinnedScreen)
        note.query_one("#pinned-depth", Input).value = "tanti"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(app.notices) > 1, "the notice")
        said = app.notices[-1].message
        assert said.startswith("la profondità della nota dev'essere un numero intero da 0 a ") and said.endswith(
            ", non 'tanti'"
        ), said


async def test_a_model_that_fails_to_load_is_said_in_italian(phrases_model: Path, tmp_path: Path) -> None:
    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert isinstance(app.screen, LoadModelScreen)
        app.screen.query_one("#model-path", Input).value = str(tmp_path / "manca.gguf")
        await pilot.press("enter")
        await until(pilot, lambda: any(n.title == "Modello non caricato" for n in app.notices), "the notice")
        (said,) = [n.message for n in app.notices if n.title == "Modello non caricato"]
        assert said.endswith("\nScrivi ancora con scriptorium-test-phrases; premi ^l per caricare un altro modello."), (
            said
        )


async def test_a_draft_file_changed_elsewhere_is_said_in_italian(tmp_path: Path) -> None:
    draft = tmp_path / "porto.md"
    draft.write_text("Lucia scese al porto.\n", encoding="utf-8")

    app = make_app(None, draft=draft, language=Language.load("it"))
    async with app.run_test(size=(160, 48)) as pilot:
        with draft.open("a", encoding="utf-8") as handle:
            handle.write("Una riga scritta con un altro programma.\n")
        await pilot.press("ctrl+home", "end")
        await typed(pilot, " Il mare era calmo.")
        await autosaved(pilot)
        assert app.sessions.conflict
        (said,) = [n.message for n in app.notices if n.title == "Non salvato"]
        assert said.startswith(
            "porto.md è cambiato sul disco dall'ultimo salvataggio di scriptorium; il file della bozza non è "
            "stato sovrascritto (la sessione "
        ), said
        assert said.endswith(". Premi ^s per scegliere quale testo tenere (in ogni caso non si perde nulla)."), said
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("enter")  # keep mine in the file, the other program's beside it
        await until(pilot, lambda: any(n.title == "File della bozza" for n in app.notices), "the notice")
        (kept,) = [n.message for n in app.notices if n.title == "File della bozza"]
        assert kept.startswith("porto.md era stato cambiato da un altro programma: quel testo è conservato in ")
        assert kept.endswith(", accanto. Il file ora contiene il tuo testo."), kept


async def test_the_alternatives_dialog_and_the_find_bar_speak_italian(phrases_model: Path) -> None:
    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        await suggestion_written(pilot)
        await pilot.press("f4", "ctrl+b")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AlternativesScreen)
        assert str(screen.query_one(".dialog-title").render()).startswith("Scrivi qualcos'altro al posto di “")
        chosen = str(screen.query_one(OptionList).get_option_at_index(0).prompt)
        assert chosen.endswith("%  (scelto)") and "," in chosen, chosen  # greedy: the first is the one taken
        screen.query_one(Input).focus()
        await pilot.press("enter")  # no word typed
        await pilot.pause()
        assert app.notices[-1].message == "Scrivi una parola, o premi Esc per tenere il testo."
        await pilot.press("escape", "escape")
        await pilot.press("ctrl+f")
        await pilot.pause()
        labels = [str(label.render()) for label in app.main.query(".find-label")]
        assert labels == ["Trova       ", "Sostituisci "], labels


async def test_a_versions_label_is_said_in_italian(phrases_model: Path) -> None:
    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        await suggestion_written(pilot)
        await generated(pilot, "ctrl+r")  # the same prompt again: a second version
        ghost = app.main.draft.editor.ghost
        assert ghost is not None
        assert version_label(ghost, app.language) == "versione 2/2 · rigenerata"
        assert version_label(ghost) == "version 2/2 · re-roll"  # kept in English, as the session keeps it
        # Labels made of a value, as sessions keep them:
        assert shown_label("branch at “mare”", app.language) == "ramo da “mare”"
        assert shown_label("candidate · seed 42", app.language) == "candidato · seed 42"


async def test_a_prompt_that_cannot_be_made_is_titled_in_italian(phrases_model: Path) -> None:
    async with ready(phrases_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        app.main.draft.editor.insert(OPENING)
        await write_pinned(pilot, "alt+e", " ".join(["Un romanzo sul lago."] * 300))  # more than the window
        await pilot.press("ctrl+g")
        await until(pilot, lambda: any(n.severity == "error" for n in app.notices), "the failure")
        titles = [n.title for n in app.notices if n.severity == "error"]
        assert titles == ["Finestra"], titles


async def test_an_unnamed_draft_and_nothing_to_resume_are_said_in_italian() -> None:
    app = make_app(None, resume=True, language=Language.load("it"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert "senza titolo" in app.main.status.render().plain, app.main.status.render().plain
        said = [n.message for n in app.notices if n.title == "Sessioni"]
        assert said == ["Non c'è ancora nessuna sessione da riprendere: questa è nuova."], said


async def test_a_model_file_written_again_is_said_in_italian(
    phrases_model: Path, random_model: Path, tmp_path: Path
) -> None:
    model = tmp_path / "mio.gguf"
    shutil.copy(random_model, model)

    async with ready(model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        with model.open("r+b") as file:  # in place, as a converter writes it
            file.truncate(0)
            file.write(phrases_model.read_bytes())
        await typed(pilot, "C'era")
        await pilot.press("ctrl+g")
        await until(pilot, lambda: any(n.title == "File del modello cambiato" for n in app.notices), "the notice")
        (said,) = [n.message for n in app.notices if n.title == "File del modello cambiato"]
        assert said == (
            "mio.gguf è cambiato sul disco da quando è stato caricato, quindi il modello caricato potrebbe non "
            "corrispondergli più: premi ^l per caricare quello che contiene ora."
        ), said


async def test_a_draft_file_moved_away_is_said_in_italian(tmp_path: Path) -> None:
    draft = tmp_path / "bozza.md"
    draft.write_text("Uno.\n", encoding="utf-8")

    app = make_app(None, draft=draft, language=Language.load("it"))
    async with app.run_test(size=(160, 48)) as pilot:
        draft.rename(tmp_path / "capitolo-1.md")  # a file manager renamed it
        await pilot.press("ctrl+home", "end")
        await typed(pilot, " Due.")
        await autosaved(pilot)
        said = [n.message for n in app.notices if n.title == "File della bozza"]
        assert said == [
            f"{draft} è stato eliminato o spostato da un altro programma dall'ultimo salvataggio di scriptorium: "
            "è stato riscritto lì."
        ], said


@pytest.mark.parametrize(("setting", "expected"), [("en", "en"), ("auto", "it")])
async def test_the_config_language_beats_an_italian_locale(
    random_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, expected: str
) -> None:
    monkeypatch.delenv("LANGUAGE")  # the suite's own English (tests/conftest.py)
    monkeypatch.setenv("LANG", "it_IT.UTF-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[ui]\nlanguage = "{setting}"\n', encoding="utf-8")
    argv = ["--config", str(config), "--model", str(random_model), "--ctx", "512"]

    app = build_app(build_parser(None).parse_args(argv))
    assert app.language.code == expected
    async with app.run_test(size=(120, 36)) as pilot:
        await model_ready(pilot)
        assert ("Quit" in footer_names(app)) == (expected == "en"), footer_names(app)
        assert drawn_border(app.main.sidebar.speed) == ("Speed" if expected == "en" else "Velocità")
