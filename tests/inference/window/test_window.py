"""The window, pure: what of the draft fits with memory and note, cut where a reader would
cut. Tokens are counted here by a stand-in (one per word, one BOS); the engine's own count
is tested in test_window_engine.py."""

from __future__ import annotations

import unicodedata

import pytest

from scriptorium.inference.window.window import (
    WindowError,
    boundaries,
    build_window,
    check_note_depth,
    prompt_budget,
)
from scriptorium.inference.window.chat_window import ChatFormatError, fit_chat
from scriptorium.inference.vocab.tokenizer import CharacterGuard, UnencodableTextError


def words(text: str) -> int:
    """One token per word plus a BOS: enough to test the fitting, not the tokenizer."""
    return 1 + len(text.split())


PARAGRAPHS = [f"Paragraph {i} opens here. It goes on a little, then it ends." for i in range(40)]
DRAFT = "\n\n".join(PARAGRAPHS)


@pytest.mark.parametrize(
    ("draft", "end", "prompt", "left_out"),
    [
        ("Una casa. \t ", None, "Una casa.", 3),
        ("Una casa. Un gatto.", 10, "Una casa.", 1),  # from the cursor after a space
        ("Una casa.\n", None, "Una casa.\n", 0),  # a newline is the author's: kept
        ("Una casa.\n  ", None, "Una casa.\n", 2),
        ("   ", None, "", 3),
    ],
)
def test_the_spaces_ending_the_text_are_left_out_of_the_prompt(
    draft: str, end: int | None, prompt: str, left_out: int
) -> None:
    window = build_window(draft, budget=100, count=words, end=end, note="[Nota.]", note_depth=0)
    # The note's paragraph break follows the text as the model reads it, not the spaces.
    assert window.prompt == prompt + ("\n\n" if prompt and not prompt.endswith("\n") else "") + "[Nota.]\n\n"
    assert (window.end, window.spaces_left_out) == (len(prompt), left_out)


def test_a_short_draft_is_all_in_the_window() -> None:
    window = build_window("Una casa. Un gatto.", budget=100, count=words)
    assert (window.start, window.dropped_tokens, window.prompt) == (0, 0, "Una casa. Un gatto.")
    assert window.prompt_tokens == words(window.prompt)


@pytest.mark.parametrize("budget", [12, 30, 57, 100, 200])
def test_a_long_draft_is_cut_on_a_sentence_start_and_fits(budget: int) -> None:
    window = build_window(DRAFT, budget=budget, count=words, memory="Memory: a synopsis.")
    assert window.prompt_tokens <= budget
    assert window.start in boundaries(DRAFT)[0]
    assert window.start > 0 and DRAFT[window.start - 1].isspace() and DRAFT[window.start].isupper()
    assert window.prompt.startswith("Memory: a synopsis.\n\n")
    assert window.prompt.endswith(DRAFT[-30:])
    # The largest that fits: one more sentence would not.
    earlier = max(b for b in boundaries(DRAFT)[0] if b < window.start)
    assert words("Memory: a synopsis.\n\n" + DRAFT[earlier:]) > budget
    assert window.dropped_tokens == words(DRAFT[: window.start]) - 1


def characters(text: str) -> int:
    """One token per character: a stand-in for text written without spaces."""
    return 1 + len(text)


def test_text_written_without_spaces_is_cut_at_a_sentence_or_a_character_not_dropped() -> None:
    """Japanese and Chinese end a sentence with 。！？ and no space, Thai has neither: with
    no sentence or word start to cut at, a paragraph longer than the room left the model
    no draft at all (the 46M model's 256 tokens hold a few lines of it)."""
    japanese = "東京の夜は静かだった。彼女は窓の外を見て、「まだ？」と言った。" * 20
    window = build_window(japanese, budget=100, count=characters)
    assert window.prompt_tokens <= 100 and window.start in boundaries(japanese)[0]
    assert japanese[window.start - 1] in "。」" and window.prompt.endswith(japanese[-20:])
    assert characters(japanese[max(b for b in boundaries(japanese)[0] if b < window.start) :]) > 100
    thai = "สวัสดีครับวันนี้อากาศดีมาก" * 40  # its vowel marks are combining characters
    window = build_window(thai, budget=100, count=characters)
    assert 90 <= window.prompt_tokens <= 100 and window.prompt == thai[window.start :]
    assert not unicodedata.combining(thai[window.start])


@pytest.mark.parametrize("sentence", ["राम घर गया। वह खुश था। ", "هل أنت هنا؟ ومن معك؟ ", "وہ گھر گیا۔ "])
def test_hindi_arabic_and_urdu_sentence_ends_are_sentence_ends(sentence: str) -> None:
    """Their full stops and question marks (। ؟ ۔) were not sentence ends: the window began
    at whatever word fitted, in the middle of a sentence."""
    draft = sentence * 40
    window = build_window(draft, budget=60, count=words)
    assert window.start in boundaries(draft)[0] and draft[: window.start].rstrip()[-1] in "।؟.۔"


def test_a_sentence_longer_than_the_room_is_cut_at_a_word_never_inside_one() -> None:
    draft = "Short one. " + " ".join(f"parola{i}" for i in range(200))
    window = build_window(draft, budget=50, count=words)
    assert window.prompt_tokens <= 50
    assert draft[window.start - 1] == " " and draft[window.start :].startswith("parola")


def test_the_window_ends_at_the_cursor() -> None:
    end = DRAFT.index("Paragraph 20")
    window = build_window(DRAFT, budget=1000, count=words, end=end)
    assert window.end == end and window.prompt == DRAFT[:end]


def test_the_note_sits_its_depth_of_paragraphs_before_the_end() -> None:
    window = build_window(DRAFT, budget=120, count=words, memory="M.", note="[Tone: grim]", note_depth=2)
    before, after = window.prompt.split("[Tone: grim]\n\n")
    assert after == "\n\n".join(PARAGRAPHS[-2:])
    assert window.note_at == DRAFT.index(PARAGRAPHS[-2])
    assert window.prompt_tokens <= 120 and before.startswith("M.\n\n")
    assert window.note_tokens == words("[Tone: grim]") - 1 and window.memory_tokens == words("M.") - 1
    assert window.memory_tokens + window.note_tokens + window.draft_tokens == window.prompt_tokens


def test_a_note_deeper_than_the_window_opens_it_and_depth_zero_closes_it() -> None:
    deep = build_window("One.\n\nTwo.", budget=100, count=words, note="N", note_depth=5)
    assert deep.prompt == "N\n\nOne.\n\nTwo."
    closing = build_window("One.\n\nTwo.", budget=100, count=words, note="N", note_depth=0)
    assert closing.prompt == "One.\n\nTwo.\n\nN\n\n"


def test_paragraphs_of_one_line_each_count_for_the_notes_depth() -> None:
    """Many write one paragraph a line, with no blank line between: the note then went
    to the top of the window, whatever its depth."""
    window = build_window("Uno.\nDue.\nTre.\nQuattro.", budget=100, count=words, note="N", note_depth=2)
    assert window.prompt == "Uno.\nDue.\nN\n\nTre.\nQuattro."


def test_memory_and_note_that_do_not_fit_are_said_never_cut() -> None:
    with pytest.raises(WindowError, match="memory and the author's note take 41 tokens, more than the 30"):
        build_window(DRAFT, budget=30, count=words, memory="m " * 30, note="n " * 10)


def test_what_takes_the_room_is_named_as_it_is() -> None:
    """A template of 2M tokens was "the memory and the author's note take 2,000,002 tokens",
    neither given."""
    huge = "parola " * 50
    with pytest.raises(WindowError, match="^the prompt template alone takes 51 tokens, more than the 30"):
        build_window(DRAFT, budget=30, count=words, wrap=lambda text: huge + text)
    with pytest.raises(WindowError, match="^the memory and the prompt template take 81 tokens"):
        build_window(DRAFT, budget=30, count=words, memory="m " * 30, wrap=lambda text: huge + text)


def test_the_template_wraps_the_window_and_counts() -> None:
    window = build_window(DRAFT, budget=60, count=words, wrap=lambda text: f"Story:\n{text}")
    assert window.prompt.startswith("Story:\n") and window.prompt_tokens <= 60


def test_budget_and_depth_rules() -> None:
    assert prompt_budget(256, 64) == 192 and prompt_budget(256, 200) == 128 and prompt_budget(256, 400) == 128
    assert check_note_depth(3) == 3
    with pytest.raises(WindowError, match="--note-depth must be a whole number from 0 to 100, not -1"):
        check_note_depth(-1, "--note-depth")


def render(messages: list[dict[str, str]]) -> str:
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages)


def test_chat_drops_the_oldest_turns_and_keeps_system_and_memory() -> None:
    turns = [{"role": "system", "content": "Be brief."}]
    for i in range(10):
        turns += [{"role": "user", "content": f"question {i} " * 3}, {"role": "assistant", "content": f"answer {i}"}]
    turns.append({"role": "user", "content": "last question"})
    chat = fit_chat(turns, budget=40, count=words, render=render, memory="Remember the cat.")
    assert chat.prompt_tokens <= 40 and chat.dropped_turns > 0
    assert chat.messages[0] == {"role": "system", "content": "Be brief.\n\nRemember the cat."}
    assert chat.messages[1]["role"] == "user" and chat.messages[-1]["content"] == "last question"
    assert chat.messages[1:] == turns[1 + chat.dropped_turns :]
    with pytest.raises(WindowError, match="system prompt, memory and the last message"):
        fit_chat(turns, budget=5, count=words, render=render)


def guarded_words(missing: str):
    """The word count of a vocabulary with no byte tokens and no piece for `missing`."""
    pieces = {chr(c) for c in range(0x20, 0x7F)} | {"▁", "\n"}
    guard = CharacterGuard(frozenset(pieces - set(missing)), (), (), add_space_prefix=False)

    def count(text: str) -> int:
        guard.check(text, special=True)
        return words(text)

    return count


def test_a_chat_format_the_vocabulary_cannot_encode_is_refused_as_the_models() -> None:
    """A vocabulary with neither byte tokens nor a newline piece: the chat said "cannot encode
    '\\n' at character 18 (line 1, column 18). Remove or replace it", of a newline the
    author never wrote (the turns' separator)."""
    turns = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "ciao"}]
    with pytest.raises(ChatFormatError, match="this model cannot chat: its chat format writes '\\\\n' "):
        fit_chat(turns, budget=40, count=guarded_words("\n"), render=render)


def test_a_character_the_vocabulary_cannot_encode_is_placed_in_the_message_that_has_it() -> None:
    turns = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "ciao ~ come va"}]
    with pytest.raises(UnencodableTextError, match="'~' .* at character 6 \\(line 1, column 6\\) of your message"):
        fit_chat(turns, budget=40, count=guarded_words("~"), render=render)


@pytest.mark.parametrize(
    "template", ["{draft}", "Continua:\n{draft}", "{draft}\n\n(di nuovo) {draft}", "Senza segnaposto: "]
)
def test_every_draft_character_of_the_prompt_is_found_in_the_draft(template: str) -> None:
    """Scoring scores the prompt and colours the draft: each character of the draft's own
    text in the prompt maps back to where it is in the draft, and nothing else does."""

    def wrap(text: str) -> str:
        return template.replace("{draft}", text) if "{draft}" in template else template + text

    window = build_window(DRAFT, budget=120, count=words, memory="Memoria.", note="[Nota.]", note_depth=2, wrap=wrap)
    assert window.start > 0 and window.note_at is not None and window.note_at < window.end
    mapped = {i: window.draft_offset(i) for i in range(len(window.prompt))}
    found = [i for i, at in mapped.items() if at is not None]
    assert all(window.prompt[i] == DRAFT[mapped[i]] for i in found)
    # Every draft character of the window, once each (the first copy, for a template that repeats it).
    assert sorted(mapped[i] for i in found) == list(range(window.start, window.end))
    assert "Memoria." not in "".join(window.prompt[i] for i in found)
    assert "[Nota.]" not in "".join(window.prompt[i] for i in found)


def test_a_reply_going_on_from_a_branch_counts_with_the_turns() -> None:
    """A branched reply's start was added after the turns were fitted: past the budget, the
    engine then cut the prompt's start (the system prompt, the memory, the author's last
    message) instead of the oldest turns leaving."""
    turns = [{"role": "system", "content": "Be brief."}]
    for i in range(4):
        turns += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    turns.append({"role": "user", "content": "last question"})
    reply_start = " word" * 20
    assert words(render(turns)) <= 40 < words(render(turns) + reply_start)
    chat = fit_chat(turns, budget=40, count=words, render=render, reply_start=reply_start)
    assert chat.prompt_tokens <= 40 and chat.dropped_turns > 0 and chat.prompt.endswith(reply_start)
    assert chat.messages[0] == turns[0] and chat.messages[-1]["content"] == "last question"
    with pytest.raises(WindowError, match="the last message and the reply up to where it goes on"):
        fit_chat(turns, budget=25, count=words, render=render, reply_start=reply_start)


def test_two_of_the_authors_turns_in_a_row_reach_a_strict_template_as_one() -> None:
    """A message whose reply failed (a server gone) stays; the next one made two user turns
    in a row, and a template that wants the roles to alternate (Gemma's, Mistral's) refused
    every message from then on: "Conversation roles must alternate"."""
    from gguf_models import STRICT_CHAT_TEMPLATE as strict

    from scriptorium.inference.window.chat import render_chat
    from scriptorium.inference.core.errors import ScriptoriumError

    turns = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "unanswered"},
        {"role": "user", "content": "again"},
    ]
    with pytest.raises(ScriptoriumError, match="alternate"):
        render_chat(turns, strict, None, "")
    chat = fit_chat(turns, budget=40, count=words, render=lambda kept: render_chat(kept, strict, None, ""))
    assert chat.messages[-1] == {"role": "user", "content": "unanswered\n\nagain"}
    assert chat.prompt.endswith("user: unanswered\n\nagain\nassistant:")


def test_a_short_last_sentence_after_one_longer_than_the_room_keeps_the_words_that_fit() -> None:
    """The 256-token model with a memory and a note: the last sentence ran past the room
    and the model saw its last 46 tokens, cut at a word; the author typed ' Fine.' and the
    window jumped to that new sentence, 6 tokens of draft, since a sentence start fitted.
    A sentence longer than the room is never whole: the words of it that fit come along."""
    long_sentence = "Conosceva a memoria " + " ".join(f"passo{i}" for i in range(60)) + "."
    draft = "Maria si alzò. " + long_sentence + " Fine."
    window = build_window(draft, budget=40, count=words, memory="Memoria breve.")
    assert window.prompt_tokens <= 40
    assert window.prompt_tokens >= 38, "the room is used, not left empty"
    assert draft[window.start - 1] == " " and draft[window.start :].startswith("passo")
    # A sentence that could fit whole is still not cut: the window starts at it or after it.
    short = build_window("Uno due tre. Quattro cinque sei sette. Otto.", budget=6, count=words)
    assert short.prompt == "Otto." or short.prompt.startswith("Quattro")
