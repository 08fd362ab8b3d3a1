"""Token records have a fast path of their own to and from the file (token_records.py), not
the members read and written from the fields' declarations: these tests hold it to the
declarations, so a field added to TokenRecord cannot be left out of the file."""

from __future__ import annotations

import json
from dataclasses import MISSING, fields

from scriptorium.app.sessions.members import keys
from scriptorium.app.sessions.token_records import HealingRecord, TokenRecord, read_token, token_json


def test_the_record_used_here_sets_every_field(token_with_every_field: TokenRecord) -> None:
    token = token_with_every_field
    at_default = [
        f.name for f in fields(TokenRecord) if f.default is not MISSING and getattr(token, f.name) == f.default
    ]
    assert at_default == []


def test_the_fast_path_writes_every_declared_member_and_reads_it_back(token_with_every_field: TokenRecord) -> None:
    token = token_with_every_field
    data = json.loads(json.dumps(token_json(token)))
    assert set(data) == set(keys(TokenRecord))
    assert set(data["healing"]) == set(keys(HealingRecord))
    assert read_token(data, "generations[0].tokens[0]") == token
