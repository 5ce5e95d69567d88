"""Redacting large data: a data set passed as plain Python (a list of floats, a list of
rows) comes back as the very same object, while a secret anywhere inside a long list is
still hidden."""

from __future__ import annotations

from collections import namedtuple

from pypads.core.privacy import MAX_DEPTH, REDACTED, redact

Pair = namedtuple("Pair", "name value")


def test_a_list_of_a_million_floats_is_returned_as_it_is():
    floats = [index / 7 for index in range(1_000_000)]
    assert redact(floats) is floats
    rows = [[float(column), "label", None, b"raw", 2j, True] for column in range(10_000)]
    assert redact(rows) is rows
    as_tuple = tuple(rows)
    assert redact(as_tuple) is as_tuple and redact({"X": rows})["X"] is rows
    words = ["password", "api_token=x"] * 1000  # text holds no key: a name alone is no secret
    assert redact(words) is words


def test_a_secret_after_a_long_run_of_plain_rows_is_still_redacted():
    rows = [[1.0, 2.0] for _ in range(100_000)]
    value = {"settings": {"servers": rows + [[3.0, {"password": "hunter2"}]]}}
    shown = redact(value)
    assert shown["settings"]["servers"][-1] == [3.0, {"password": REDACTED}]
    assert shown["settings"]["servers"][0] is rows[0]  # what held no secret is not copied
    assert value["settings"]["servers"][-1][1] == {"password": "hunter2"}  # the caller's value is untouched
    assert redact({"kw_args": {"settings": {"servers": [{"password": "x"}]}}}) == \
        {"kw_args": {"settings": {"servers": [{"password": REDACTED}]}}}


def test_secrets_beside_atoms_in_tuples_namedtuples_and_sets_are_redacted():
    assert redact([1, "a", [2, (3, {"api_key": "x"})]]) == [1, "a", [2, (3, {"api_key": REDACTED})]]
    assert redact([[Pair("db", {"token": "x"})]]) == [[Pair("db", {"token": REDACTED})]]
    frozen = frozenset({(1, 2), ("a", (b"b", None))})
    assert redact(frozen) is frozen


def test_redacting_stops_at_max_depth():
    near: object = {"password": "x"}
    for _ in range(MAX_DEPTH - 1):
        near = [near]
    assert redact(near) is not near
    far: object = {"password": "x"}
    for _ in range(MAX_DEPTH + 5):
        far = [far]
    assert redact(far) is far  # deeper than MAX_DEPTH is left as it is: no recursion error
    cycle: list[object] = [1.0]
    cycle.append(cycle)
    assert redact(cycle) is cycle


class _Settings:
    """A user's object with a repr of its own, which redaction cannot look into."""

    def __init__(self, note):
        self.note = note

    def __repr__(self):
        return f"Settings(note={self.note!r}, api_token='sk-{'S3cr3t' * 70}')"  # longer than half a cut text


def test_a_secret_in_a_long_estimator_text_is_hidden_wherever_the_text_is_cut():
    from sklearn.preprocessing import FunctionTransformer

    from pypads.recording.content.serialize import WriteFormats, serialize

    for padding in range(0, 900, 7):  # the secret falls on every side of the cut in turn
        estimator = FunctionTransformer(kw_args={"settings": _Settings("n" * padding)})
        _, content = serialize(estimator, WriteFormats.text, 1_000_000, dict)
        assert b"S3cr3t" not in content, padding  # not even a part of it
