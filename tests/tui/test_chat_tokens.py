"""Chat replies keep their tokens (issue 6): colouring and inspecting the last reply."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.widgets import Markdown, OptionList
from tui_helpers import generated, GREEDY, ready, spying_loader, typed

from scriptorium.app.tui.screens.alternatives_screen import AlternativesScreen
from scriptorium.app.tui.token_spans import bucket
from scriptorium.app.tui.widgets.chat_reply import AssistantMessage
from scriptorium.app.tui.widgets.token_text import ReplyTokens, TokenLegend


async def test_a_reply_can_be_coloured_and_inspected_token_by_token(sentence_model: Path) -> None:
    async with ready(sentence_model, mode="chat", size=(120, 40)) as (app, pilot):
        await typed(pilot, "Ciao!")
        done = await generated(pilot, "enter")
        _, events, _ = app.main.last_generation
        chat = app.main.chat
        view = chat.query_one(ReplyTokens)
        assert view.text == done.text
        assert all(done.text[r.start : r.end] == r.text for r in view.records)
        assert [r.id for r in view.records] == [e.id for e in events if e.text][: len(view.records)]
        reply = view.reply
        assert isinstance(reply, Markdown) and reply.display and not view.display
        await pilot.press("f8")
        assert view.display and not reply.display and chat.query_one(TokenLegend).display
        rendered = view.render()
        first = view.records[0]
        assert rendered.plain == done.text
        assert any(
            span.start == first.start
            and span.style == view.get_component_rich_style(f"reply-tokens--{bucket(first.p)}")
            for span in rendered.spans
        )
        await pilot.press("f4", "left")
        record = view.records[-2]
        panel = app.main.sidebar.probabilities
        assert chat.inspection.inspected == len(view.records) - 2
        assert panel.event.id == record.id and panel.event.top == record.top
        # ← moved the token cursor, not the input's.
        assert chat.input.value == ""
        await pilot.press("escape", "f8")
        assert chat.inspection.inspected is None and reply.display and not view.display


async def test_inspection_reaches_every_reply_not_only_the_last(sentence_model: Path) -> None:
    async with ready(sentence_model, mode="chat", size=(120, 40)) as (app, pilot):
        await typed(pilot, "Ciao!")
        await generated(pilot, "enter")
        await typed(pilot, "E poi?")
        await generated(pilot, "enter")
        chat = app.main.chat
        first, second = chat.query(ReplyTokens)
        panel = app.main.sidebar.probabilities
        await pilot.press("f4")
        assert (chat.inspection.inspected_reply, chat.inspection.inspected) == (1, len(second.records) - 1)
        await pilot.press("up")
        assert (chat.inspection.inspected_reply, chat.inspection.inspected) == (0, 0)
        assert first.cursor == 0 and second.cursor is None and first.display and not second.display
        assert panel.event.id == first.records[0].id and panel.event.top == first.records[0].top
        # ← at a reply's first token stays there; → past its last token enters the next reply.
        await pilot.press("left")
        assert (chat.inspection.inspected_reply, chat.inspection.inspected) == (0, 0)
        for _ in range(len(first.records)):
            await pilot.press("right")
        assert (chat.inspection.inspected_reply, chat.inspection.inspected) == (1, 0)
        assert panel.event.id == second.records[0].id
        await pilot.press("left")
        assert (chat.inspection.inspected_reply, chat.inspection.inspected) == (0, len(first.records) - 1)
        # ↑ and ↓ are the chat's own keys again once inspection ends.
        await pilot.press("escape", "up")
        assert chat.inspection.inspected is None and chat.input.value == "E poi?"


async def test_regenerated_and_branched_replies_are_kept_as_versions(random_model: Path) -> None:
    loader, spies = spying_loader()

    # Sampled hot, so that writing the reply again gives another text.
    hot = GREEDY.with_changes(temperature=1.5, top_k=0, top_p=1.0, seed=None, preset="custom")
    async with ready(random_model, mode="chat", loader=loader, sampler=hot, size=(120, 40)) as (app, pilot):
        chat = app.main.chat
        await typed(pilot, "Ciao!")
        await generated(pilot, "enter")
        first = chat.messages[-1]["content"]
        await generated(pilot, "ctrl+r")
        rerolled = chat.messages[-1]["content"]
        assert rerolled != first
        assert len(chat.versions) == 2 and chat.versions.title() == "version 2/2 · re-roll"
        # Shown under the reply, with the keys that move between versions.
        reply = chat.query(AssistantMessage).last()
        assert reply.has_class("-noted") and str(reply.border_subtitle).startswith("version 2/2 · re-roll · alt+")
        # Branch at the third token from the end, taking another alternative.
        await pilot.press("f4", "left", "left")
        old_records = list(chat.query(ReplyTokens).last().records)
        index = chat.inspection.inspected
        record = old_records[index]
        alternative = next(c for c in record.top if c.id != record.id)
        await pilot.press("ctrl+b")
        assert isinstance(app.screen, AlternativesScreen)
        app.screen.query_one(OptionList).highlighted = list(record.top).index(alternative)
        done = await generated(pilot, "enter")
        branched = chat.messages[-1]["content"]
        prefix = rerolled[: record.start] + alternative.text
        assert branched == prefix + done.text
        assert spies[0].last["prompt"].endswith(prefix)
        view = chat.query(ReplyTokens).last()
        assert view.text == branched
        # The reply's tokens: the old ones up to the branch, the chosen one, then the new ones.
        assert [r.id for r in view.records[:index]] == [r.id for r in old_records[:index]]
        assert view.records[index].id == alternative.id and view.records[index].start == record.start
        assert all(branched[r.start : r.end] == r.text for r in view.records)
        assert chat.versions.title().startswith("version 3/3 · branch at")
        # alt+← goes back through the versions; the conversation and the session follow.
        await pilot.press("alt+left")
        assert chat.messages[-1]["content"] == rerolled
        await pilot.press("alt+left")
        assert chat.messages[-1]["content"] == first
        assert app.sessions.save_chat(chat.messages)
        turns = app.sessions.chat.turns
        assert turns[-1].content == first and turns[-1].generation is not None
        await pilot.press("alt+right", "alt+right")
        assert chat.messages[-1]["content"] == branched
        assert app.sessions.save_chat(chat.messages)
        assert app.sessions.chat.turns[-1].content == branched
        # A new message starts a new reply: the versions were the last reply's.
        await typed(pilot, "E poi?")
        await generated(pilot, "enter")
        assert len(chat.versions) == 1 and chat.versions.title() == ""


async def test_a_reply_that_becomes_last_again_is_kept_as_a_version_when_regenerated(sentence_model: Path) -> None:
    """Taking back the last message leaves the reply before it last: Ctrl+R on it must keep
    it as a version (alt+← brings it back), as it does for a reply just written; and its
    note no longer counts the versions it had before a turn followed it."""

    async with ready(sentence_model, mode="chat", size=(120, 40)) as (app, pilot):
        chat = app.main.chat
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        await generated(pilot, "ctrl+r")
        await typed(pilot, "E poi?")
        await generated(pilot, "enter")
        await pilot.press("ctrl+u", "up")
        assert chat.input.value == "E poi?" and [m["role"] for m in chat.messages] == ["user", "assistant"]
        last = chat.transcript.query(AssistantMessage).last()
        assert last.border_subtitle == ""  # not 'version 2/2', whose other version is gone
        kept = chat.messages[-1]["content"]
        await generated(pilot, "ctrl+r")
        assert chat.versions.title() == "version 2/2 · re-roll"
        await pilot.press("alt+left")
        assert chat.versions.title().startswith("version 1/2") and chat.messages[-1]["content"] == kept


async def test_a_reopened_conversations_last_reply_is_kept_as_a_version_when_regenerated(sentence_model: Path) -> None:
    async with ready(sentence_model, mode="chat", size=(120, 40)) as (app, pilot):
        chat = app.main.chat
        # As a saved session is shown when it is opened (F5, --resume).
        await chat.restore([{"role": "user", "content": "Ciao"}, {"role": "assistant", "content": "Salve."}])
        await generated(pilot, "ctrl+r")
        assert chat.versions.title() == "version 2/2 · re-roll"
        await pilot.press("alt+left")
        assert chat.messages[-1]["content"] == "Salve."


async def test_an_empty_last_reply_cannot_be_branched_at_an_earlier_replys_token(sentence_model: Path) -> None:
    """A reply cut off before its first token has no tokens to inspect: Ctrl+B while
    inspecting the reply before it must not write a 'version' of the empty reply that starts
    with a word from the earlier one."""

    async with ready(sentence_model, mode="chat", size=(120, 40)) as (app, pilot):
        chat = app.main.chat
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        stop_at_la = app.engine_state.sampler.with_changes(stop=(" La",))  # the model's reply starts with it
        app.engine_state = replace(app.engine_state, sampler=stop_at_la)
        await pilot.pause()
        await typed(pilot, "E poi?")
        await generated(pilot, "enter")
        assert chat.messages[-1] == {"role": "assistant", "content": ""}
        await pilot.press("f4")
        assert chat.inspection.inspected is not None and chat.inspection.inspected_reply == 0
        await pilot.press("ctrl+b")
        assert not isinstance(app.screen, AlternativesScreen)


async def test_a_taken_back_reply_does_not_stay_on_screen_as_coloured_tokens(sentence_model: Path) -> None:
    """With colours on (F8) a reply is drawn as its tokens: ↑ takes the last message and
    its reply back, and the reply's tokens must go with it."""

    async with ready(sentence_model, mode="chat", size=(120, 40)) as (app, pilot):
        chat = app.main.chat
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        await pilot.press("f8", "up")
        assert chat.messages == [] and chat.input.value == "Ciao"
        assert not chat.transcript.query(ReplyTokens)


async def test_a_branch_late_in_a_long_reply_leaves_older_turns_out_not_the_prompts_start(random_model: Path) -> None:
    """The reply up to the branch point was added after the turns were fitted: past the
    prompt's room, the engine cut the prompt's start ("the text is longer than the context"),
    the system prompt and the chat format's opening with it, while older turns stayed."""
    from scriptorium import prompts

    loader, spies = spying_loader()

    # 512-token context, 200 to write: 312 for the prompt.
    async with ready(
        random_model, mode="chat", loader=loader, sampler=GREEDY.with_changes(max_tokens=200), size=(120, 40)
    ) as (app, pilot):
        chat = app.main.chat
        # The old turns fit the prompt's room alone (275 tokens), not with the reply's start.
        await chat.restore(
            [{"role": "user", "content": "Ciao" + " parola" * 180}, {"role": "assistant", "content": "Bene."}]
        )
        await typed(pilot, "E poi?")
        await generated(pilot, "enter")
        # The 171st token from the reply's end: reached from the reply's first token, in
        # the fewest key presses (each waits for the app to settle).
        await pilot.press("f4")
        target = chat.inspection.inspected - 170
        await pilot.press("up", "down", *["right"] * target)
        assert chat.inspection.inspected == target
        records = chat.query(ReplyTokens).last().records
        record = records[chat.inspection.inspected]
        engine = app.engine_state.backend
        assert engine is not None
        system = prompts.packaged_text(prompts.CHAT_SYSTEM).strip()
        before = engine.chat_prompt([{"role": "system", "content": system}, *chat.messages[:-1]])
        prefix = chat.messages[-1]["content"][: record.start] + record.text
        assert engine.count_tokens(before) <= 312 < engine.count_tokens(before + prefix)
        await pilot.press("ctrl+b")
        assert isinstance(app.screen, AlternativesScreen)
        app.notices.clear()
        await generated(pilot, "enter")
        prompt = spies[0].last["prompt"]
        assert prompt.startswith(before[: before.index(system)]) and system in prompt
        assert "parola" not in prompt and "E poi?" in prompt
        assert engine.count_tokens(prompt) <= 312
        said = [n.message for n in app.notices]
        assert any(m.startswith("The 2 oldest messages no longer fit") for m in said), said


async def test_an_inspected_reply_keeps_its_place_and_frame(sentence_model: Path) -> None:
    """F4 drew the reply as its tokens without the reply's bar, margin and padding: at 80
    columns its words moved to other lines and places, under the key that was to show them."""

    async with ready(sentence_model, mode="chat", size=(80, 24)) as (app, pilot):
        await typed(pilot, "Ciao!")
        await generated(pilot, "enter")
        view = app.main.chat.query_one(ReplyTokens)
        shown = view.reply.content_region  # type: ignore[attr-defined]
        await pilot.press("f4")
        await pilot.pause()
        assert view.display and view.content_region.x == shown.x and view.content_region.width == shown.width
        assert view.styles.border_left == view.reply.styles.border_left  # type: ignore[attr-defined]
