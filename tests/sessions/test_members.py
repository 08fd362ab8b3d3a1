"""members.py: a record's object in the session file, read and written from its fields'
declarations alone, with the messages a damaged file gets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from scriptorium.app.sessions.members import FormatError, keys, member, read, written


@dataclass(kw_only=True)
class Inner:
    size: int
    sha256: str | None


@dataclass(kw_only=True)
class Outer:
    name: str
    kind: Literal["a", "b"]
    scale: float = 1.0
    inner: Inner = member(key="the_inner")
    items: list[Inner] = field(default_factory=list)
    note: str = member(default="", group="extra")
    origin: str = member(default="", optional=True)


def test_members_are_written_in_the_fields_order_under_their_keys_and_empty_optional_ones_left_out() -> None:
    outer = Outer(name="x", kind="a", inner=Inner(size=1, sha256=None), items=[Inner(size=2, sha256="ab")])
    assert written(outer) == {
        "name": "x",
        "kind": "a",
        "scale": 1.0,
        "the_inner": {"size": 1, "sha256": None},
        "items": [{"size": 2, "sha256": "ab"}],
    }
    assert written(outer, "extra") == {"note": ""}
    assert written(Outer(name="x", kind="a", inner=Inner(size=1, sha256=None), origin="far"))["origin"] == "far"
    assert keys(Outer) == ["name", "kind", "scale", "the_inner", "items", "origin"] and keys(Outer, "extra") == ["note"]


def test_what_is_written_reads_back_equal_and_missing_members_take_their_defaults() -> None:
    outer = Outer(name="x", kind="b", scale=2.0, inner=Inner(size=1, sha256="cd"), origin="far")
    assert read(Outer, written(outer), "outer") == outer
    # sha256 may be None, so a file without it reads as None; an int where a float goes is one.
    assert read(Outer, {"name": "x", "kind": "a", "scale": 3, "the_inner": {"size": 1}}, "outer") == Outer(
        name="x", kind="a", scale=3.0, inner=Inner(size=1, sha256=None)
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "a", "the_inner": {"size": 1}}, "outer.name is missing"),
        ({"name": 1, "kind": "a", "the_inner": {"size": 1}}, "outer.name has the wrong type (int)"),
        ({"name": "x", "kind": "c", "the_inner": {"size": 1}}, "outer.kind is 'c', not 'a' or 'b'"),
        ({"name": "x", "kind": "a", "the_inner": {"size": True}}, "outer.the_inner.size has the wrong type (bool)"),
        ({"name": "x", "kind": "a", "the_inner": {"size": 1}, "items": [3]}, "outer.items[0] is not an object"),
        ({"name": "x", "kind": "a", "the_inner": []}, "outer.the_inner has the wrong type (list)"),
    ],
)
def test_a_wrong_member_is_named_in_one_line(data: dict, message: str) -> None:
    with pytest.raises(FormatError) as problem:
        read(Outer, data, "outer")
    assert str(problem.value) == message


def test_a_type_the_declarations_cannot_read_is_refused_when_first_used() -> None:
    @dataclass(kw_only=True)
    class Pairs:
        pairs: tuple[tuple[int, float], ...] = ()

    with pytest.raises(TypeError, match="needs a reader of its own"):
        read(Pairs, {}, "pairs")
