"""What the app does before its first frame, which the author waits for: the main screen's
widgets are styled as they mount and not again, and the key bar is built once."""

from __future__ import annotations

from textual.css.stylesheet import Stylesheet
from textual.widgets._footer import FooterKey
from tui_helpers import make_app

from scriptorium.app.tui.screens.main_screen import MainScreen


async def test_the_main_screen_is_not_restyled_whole_before_the_first_frame(monkeypatch) -> None:
    """Its widgets are styled as they mount. The screen's first resize set its size classes
    (-wide, -tall...) and restyled every widget again: they are set before it is shown, so
    that resize changes nothing. Textual restyled it whole as it was pushed, as it does a
    screen that comes back from under a dialog: the main screen skips that the first time."""
    restyled: list[int] = []
    update_nodes = Stylesheet.update_nodes

    def counting(self: Stylesheet, nodes, animate: bool = False) -> None:  # type: ignore[no-untyped-def]
        nodes = list(nodes)
        if len(nodes) > 1:  # the screen with its widgets, not the screen alone
            restyled.extend(len(nodes) for node in nodes if isinstance(node, MainScreen))
        update_nodes(self, nodes, animate)

    monkeypatch.setattr(Stylesheet, "update_nodes", counting)

    for size, classes in (((160, 48), {"-wide", "-tall"}), ((70, 24), {"-slim", "-short"})):
        restyled.clear()
        app = make_app(None)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            assert restyled == []
            assert {name for name in app.main.classes if name.startswith("-")} >= classes
            assert not app.main.classes & ({"-wide", "-tall", "-slim", "-short", "-narrow"} - classes)


async def test_bindings_that_change_nothing_shown_leave_the_key_bar_as_it_is() -> None:
    """The screen says its bindings changed whenever the focus moves (twice before the first
    frame); the bar was rebuilt each time, every key made and styled again."""

    app = make_app(None)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        keys = list(app.main.query(FooterKey))
        assert keys
        app.main.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert list(app.main.query(FooterKey)) == keys
        app.main.query_one("#sampler").focus()  # other keys on the bar: built anew
        await pilot.pause()
        await pilot.pause()
        assert list(app.main.query(FooterKey)) != keys


async def test_the_collector_paused_for_start_up_works_again_after_the_first_frame() -> None:
    """`scriptorium` pauses the garbage collector while it imports and builds the app: what
    start-up makes lives as long as the app. The app's first frame resumes it."""
    import gc

    from scriptorium.app.tui.process_tuning import pause_collector_for_start_up

    try:
        pause_collector_for_start_up()
        assert not gc.isenabled()
        app = make_app(None)
        async with app.run_test() as pilot:
            await pilot.pause()
            assert gc.isenabled()
    finally:
        gc.enable()
