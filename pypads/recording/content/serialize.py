"""Turning arbitrary call values into artifact files, small ones whole, large ones summarised.

A value's size is estimated before any text or pickle of it is built (:mod:`.sizes`),
and a large value is summarised by its type, shape, dtype and a digest of its content
(:mod:`.digests`), computed from its memory as it lies: nothing here copies a user's data.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from enum import Enum
from typing import Any

import cloudpickle
import numpy as np

from pypads.core import VALUE_SUMMARY, cut_in_the_middle, is_estimator, redact, redact_repr, short_repr, writes_scikit_learns_repr
from pypads.recording.content.digests import digest_and_size
from pypads.recording.content.sizes import approximate_size, type_name


class WriteFormats(Enum):
    """How Input and Output write values: readable text or a (cloud)pickle to load again."""

    text = "txt"
    pickle = "pickle"


def write_format(value: str | WriteFormats) -> WriteFormats:
    """Accept ``"text"``, ``"pickle"`` or a :class:`WriteFormats` member."""
    if isinstance(value, WriteFormats):
        return value
    try:
        return WriteFormats[value]
    except KeyError:
        names = ", ".join(member.name for member in WriteFormats)
        raise ValueError(f"unknown write format {value!r}; use one of: {names}") from None



def summary(value: Any, reason: str, provenance: dict[str, Any]) -> dict[str, Any]:
    """Type, shape, dtype, size and a content digest: what identifies a large value
    (schema ``urn:pypads:schema:value-summary:1``)."""
    described: dict[str, Any] = {"schema": VALUE_SUMMARY, "provenance": provenance, "summary_of": reason,
                                 "type": type_name(value)}
    for attribute in ("shape", "dtype"):
        if hasattr(value, attribute):
            shown = getattr(value, attribute)
            described[attribute] = list(shown) if isinstance(shown, tuple) else str(shown)
    digest, walked, sampled = digest_and_size(value)
    # A list's size comes from the digest's own walk: walking it twice would double the cost.
    described["approximate_bytes"] = walked if walked is not None else approximate_size(value)
    if digest:
        described["blake3"] = digest
        if sampled:
            described["digest_of"] = "sample"
    return described



def serialize(
    value: Any, fmt: WriteFormats, max_bytes: int, origin: Callable[[], dict[str, Any]]
) -> tuple[str, bytes]:
    """The file extension and content that stand for ``value`` in an artifact.

    ``origin`` gives the provenance of a summary; it is only called when one is written,
    so the common case of a small value pays nothing for it. The size bound is checked
    before any text or pickle is built.

    Secrets are redacted first (:func:`pypads.core.privacy.redact`: the value under a secret
    key at any depth, an estimator's secret params), in the pickle too; the text is
    searched again for ``'api_token': …`` and ``password=…`` (:func:`pypads.core.privacy.redact_repr`),
    for objects whose params pypads cannot see."""
    value = redact(value)
    if approximate_size(value, limit=max_bytes) > max_bytes:
        return "summary.json", _json(summary(value, f"larger than max_bytes={max_bytes}", origin()))
    if fmt is WriteFormats.pickle:
        try:
            data = cloudpickle.dumps(value)
        except Exception as error:  # locks, generators, open files…
            return "summary.json", _json({**summary(value, "not picklable", origin()), "error": repr(error)})
        if len(data) > max_bytes:
            return "summary.json", _json(summary(value, f"pickle larger than max_bytes={max_bytes}", origin()))
        return "pickle", data
    text = _text(value)
    if len(text) > max_bytes:
        return "summary.json", _json(summary(value, f"text larger than max_bytes={max_bytes}", origin()))
    return "txt", text.encode("utf-8")



# Text.

# Dtypes whose values Python's own repr writes exactly and quickly (int, bool, float64).
_PLAIN_KINDS = {"b", "i", "u"}


def _text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        text = _array_text(value)
        return redact_repr(text) if value.dtype.kind == "O" else text  # numbers hold no secret
    try:
        if writes_scikit_learns_repr(value) and is_estimator(value):
            # What its repr says, at a 30th of the cost; searched for secrets whole, then cut.
            return cut_in_the_middle(redact_repr(short_repr(value)))
        return redact_repr(repr(value))
    except Exception as error:  # a broken __repr__ must not lose the record
        return f"<{type_name(value)}: repr failed: {error!r}>"


def _array_text(array: np.ndarray) -> str:
    """Every value, exactly, one row per line. Numbers and 1- or 2-d arrays of them
    take Python's repr of the nested lists: 15 times faster than ``np.array2string``
    for iris, and it keeps all digits where ``array2string`` rounds to 8."""
    plain = array.dtype.kind in _PLAIN_KINDS or array.dtype == np.float64
    if plain and array.ndim <= 1:
        return repr(array.tolist())
    if plain and array.ndim == 2:
        return "[" + ",\n ".join(map(repr, array.tolist())) + "]"
    return np.array2string(array, threshold=sys.maxsize, max_line_width=200)


def _json(document: dict[str, Any]) -> bytes:
    return json.dumps(document, indent=2, default=str).encode("utf-8")
