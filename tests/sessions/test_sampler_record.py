"""The whole sampler chain, order included, in the session and the Markdown export; older
sessions, written before DRY, XTC and the order were recorded, read as they ran."""

from __future__ import annotations

from scriptorium.app.sessions import SessionStore
from scriptorium.app.sessions.export import describe_changes, render_markdown
from scriptorium.inference.core.settings import LogitBias, preset

from markdown_shown import split_front_matter

ANTI_LOOP_REORDERED = preset("anti-loop").with_changes(
    xtc_probability=0.5, samplers=("temperature", "xtc", "dry", "top_k", "top_p", "penalties")
)


def test_the_chain_and_its_order_survive_the_session_file(store: SessionStore, generate) -> None:
    session = store.create_draft(title="loops", text="La casa")
    g = generate(session, " era buia.", settings=ANTI_LOOP_REORDERED)
    store.save(session)
    reopened = store.load(session.id).generations[0]
    assert reopened.sampler_settings() == ANTI_LOOP_REORDERED
    assert reopened.sampler["samplers"] == ["temperature", "xtc", "dry", "top_k", "top_p", "penalties"]
    assert reopened.chain_text() == g.chain_text() == "logit bias → temperature → xtc → dry → top_k → top_p → dist"


def test_the_export_says_what_was_applied_in_order(store: SessionStore, generate) -> None:
    session = store.create_draft(title="loops", text="La casa")
    g = generate(session, " era buia.", settings=ANTI_LOOP_REORDERED, bias=LogitBias(ban_byte_tokens=False))
    session.accept(g, g.text, len(session.text))
    meta, _ = split_front_matter(render_markdown(session))
    assert meta["sampler_chain"] == "temperature → xtc → dry → top_k → top_p → dist"
    assert meta["sampler"]["samplers"] == list(ANTI_LOOP_REORDERED.samplers)
    assert (meta["sampler"]["dry_multiplier"], meta["sampler"]["xtc_probability"]) == (0.8, 0.5)


def test_a_session_from_before_reads_as_it_ran(store: SessionStore, generate) -> None:
    session = store.create_draft(title="old", text="La casa")
    old = generate(session, " era.", settings=preset("prose"))
    new = generate(session, " buia.", settings=preset("prose"))
    old.sampler = {
        key: value
        for key, value in old.sampler.items()  # as an older version wrote it
        if key
        in (
            "temperature",
            "top_k",
            "top_p",
            "min_p",
            "repeat_penalty",
            "repeat_window",
            "presence_penalty",
            "frequency_penalty",
            "seed",
            "max_tokens",
            "stop",
            "preset",
        )
    }
    assert old.sampler_settings() == preset("prose")
    # Only healing differs: a file from before it ran unhealed, which the footnote says.
    assert old.sampler_values()["heal"] is False and not old.same_settings(new)
    assert describe_changes(old, new) == "heal False → True; seed 1234"
    old.sampler["heal"] = True  # the rest reads as it ran: no footnote for settings it leaves out
    assert old.same_settings(new)
    assert describe_changes(old, new) == "seed 1234"
    assert (
        describe_changes(old, generate(session, " x", settings=preset("anti-loop")))
        == "dry_multiplier 0.0 → 0.8; preset 'prose' → 'anti-loop'; seed 1234"
    )


def test_what_the_chain_did_at_each_token_is_saved_and_read_back(store: SessionStore, generate) -> None:
    from scriptorium.inference.core.events import Candidate, TokenEvent

    session = store.create_draft(title="did", text="La casa")
    g = generate(session, " era", settings=preset("anti-loop"))
    g.add_token(
        TokenEvent(
            index=0,
            id=5,
            text=" era",
            p=0.4,
            top=(Candidate(5, " era", 0.4, False), Candidate(6, " fu", 0.3, False)),
            elapsed_ms=1.0,
            kv_tokens=3,
            kept=((5, 0.61234567),),
            removed=((6, "xtc"),),
            pushed=((5, "dry", -0.8),),
        )
    )
    g.add_token(TokenEvent(index=1, id=7, text=".", p=0.9, top=(), elapsed_ms=2.0, kv_tokens=4))  # as from a server
    store.save(session)
    first, second = store.load(session.id).generations[0].tokens
    assert (first.kept, first.removed, first.pushed) == (((5, 0.612346),), ((6, "xtc"),), ((5, "dry", -0.8),))
    assert (second.kept, second.removed, second.pushed) == ((), (), ())
