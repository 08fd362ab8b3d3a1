"""HTML a model wrote in a chat reply is text in the export, as the chat shows it
(chat_reply.py): a viewer rendered the tags, or hid them with the words they held."""

from __future__ import annotations

from scriptorium.app.sessions import SessionStore
from scriptorium.app.sessions.export import render_markdown
from scriptorium.app.sessions.export_html import html_starts

from markdown_shown import MARK, html_of, split_front_matter

REPLY = (
    "<think>\nragiono\n</think>\n\nUsa <br> per andare a capo, <!-- qui --> e <b>grassetto</b>.\n\n"
    "<div>\nCiao\n</div>\n\nIn codice resta: `<b>` e\n\n```html\n<p>uno</p>\n```\n\n    <i>rientrato</i>\n\n"
    "Un link <https://example.org> e a <b di troppo."
)


def reply_export(store: SessionStore, generate, reply: str, **options) -> str:
    session = store.create_chat(title="HTML")
    session.add_user_turn("Come si va a capo?")
    session.record_reply(generate(session, reply, anchor=0))
    _, body = split_front_matter(render_markdown(session, **options))
    return body


def test_a_replys_html_shows_as_typed_and_its_code_as_written(store: SessionStore, generate) -> None:
    html = html_of(reply_export(store, generate, REPLY))
    for typed in (
        "&lt;think&gt;",
        "ragiono",
        "&lt;/think&gt;",
        "&lt;br&gt;",
        "&lt;!-- qui --&gt;",
        "&lt;b&gt;grassetto&lt;/b&gt;",
        "&lt;div&gt;",
        "Ciao",
        "&lt;/div&gt;",
        "a &lt;b di troppo.",
    ):
        assert typed in html, typed
    assert "<code>&lt;b&gt;</code>" in html  # no backslash shows in code
    assert '<code class="language-html">&lt;p&gt;uno&lt;/p&gt;\n</code>' in html
    assert "<code>&lt;i&gt;rientrato&lt;/i&gt;\n</code>" in html
    assert '<a href="https://example.org">https://example.org</a>' in html
    assert "<think>" not in html and "<br>" not in html and "<b>" not in html and "<div>" not in html


def test_marked_the_reply_keeps_its_html_as_text(store: SessionStore, generate) -> None:
    body = reply_export(store, generate, "Usa <br> qui.", mark_model=True)
    assert MARK.findall(body) == [("g1", "Usa \\<br> qui.")]
    assert "Usa &lt;br&gt; qui." in html_of(body)


def test_only_what_commonmark_reads_as_html_is_escaped() -> None:
    text = "a < b, 3<4, <b>, <!x>, <?p?>, <![CDATA[x]]>, `<i>`, <x:y>, <https://a.b>"
    assert [text[at : at + 3] for at in html_starts(text)] == ["<b>", "<!x", "<?p", "<!["]  # <x:y> is text
