"""The Italian catalog against the code: every string marked for translation has its Italian
(extracted with Babel's API, as babel.cfg says), with the same {placeholders}; no string the
code no longer marks lingers; and the compiled .mo the package ships is the .po compiled."""

from __future__ import annotations

import ast
import gettext
import io
import string
from pathlib import Path

from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "app" / "locale"
PO, MO = (LOCALE / "it" / "LC_MESSAGES" / f"scriptorium.{ext}" for ext in ("po", "mo"))
MARKERS = {name for name in DEFAULT_KEYWORDS if "gettext" in name} | {"_", "N_"}


def extracted() -> set[str | tuple[str, str]]:
    """What Babel extracts from the code, by babel.cfg: a singular, or a (singular, plural) pair."""
    with open(ROOT / "babel.cfg", encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config)
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), method_map, options_map, keywords=DEFAULT_KEYWORDS
    ):
        found.add(message if isinstance(message, str) else tuple(message[:2]))
    return found


def catalog() -> dict[str | tuple[str, str], str | tuple[str, ...]]:
    with open(PO, "rb") as po:
        return {message.id: message.string for message in read_po(po, locale="it") if message.id}


def test_every_marked_string_has_an_italian_translation() -> None:
    italian = catalog()

    def translated(message: str | tuple[str, str]) -> bool:
        text = italian.get(message)
        return bool(text) and all(text if isinstance(text, tuple) else (text,))  # each plural form too

    untranslated = sorted(str(message) for message in extracted() if not translated(message))
    assert not untranslated, f"marked but not translated in {PO.relative_to(ROOT)}: {untranslated}"


def test_the_catalog_holds_no_string_the_code_no_longer_marks() -> None:
    stale = sorted(str(message) for message in set(catalog()) - extracted())
    assert not stale, f"in the catalog but no longer in the code (pybabel update drops them): {stale}"


def test_each_translation_keeps_the_placeholders_of_its_source() -> None:
    def fields(text: str) -> list[str]:
        return sorted(field for _, field, _, _ in string.Formatter().parse(text) if field is not None)

    for source, translation in catalog().items():
        if isinstance(source, str):
            assert fields(translation) == fields(source), (source, translation)
            continue
        # A plural: the singular may leave the count out ("1 message" as "the message"), not add one.
        *singulars, plural = translation
        assert fields(plural) == fields(source[1]), (source, plural)
        assert all(set(fields(text)) <= set(fields(source[1])) for text in singulars), (source, translation)


def test_babel_sees_every_marked_string() -> None:
    """A marker called inside an f-string's braces (f"{_('chosen')}") is invisible to Babel's
    extraction: the string was never translated, and the test above could not tell."""
    seen = extracted()
    missed = []
    for path in (ROOT / "app").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            # pgettext's first argument is the context, its message the second.
            first = node.args[1] if name == "pgettext" and len(node.args) > 1 else node.args[0]
            if name in MARKERS and isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value:
                if not any(first.value == (message if isinstance(message, str) else message[0]) for message in seen):
                    missed.append(f"{path.relative_to(ROOT)}:{node.lineno} {first.value!r}")
    assert not missed, missed


def test_the_shipped_mo_is_the_po_compiled() -> None:
    with open(PO, "rb") as po:
        compiled = io.BytesIO()
        write_mo(compiled, read_po(po, locale="it"))
    compiled.seek(0)
    with open(MO, "rb") as shipped:
        shipped_messages = messages_of(gettext.GNUTranslations(shipped))
    assert shipped_messages == messages_of(gettext.GNUTranslations(compiled)), (
        "app/locale/it/LC_MESSAGES/scriptorium.mo is stale: pybabel compile -d app/locale -D scriptorium"
    )


def messages_of(catalog: gettext.GNUTranslations) -> dict[object, str]:
    """The catalog without its header (msgid ""), which names the Babel that compiled it:
    the Babel installed here may be newer than the one that compiled the shipped file."""
    return {msgid: text for msgid, text in catalog._catalog.items() if msgid != ""}
