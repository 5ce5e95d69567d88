"""Keeping secrets out of runs and out of the console: the redaction rules (pseudonyms
for machines are :mod:`pypads.core.pseudonyms`).

It imports nothing of pypads, so that every module may use it (the store, the journal,
the uploader process) without an import cycle.

The rules, in one place:

* A URL's credentials (``https://user:pw@host`` → ``https://***@host``).
* The value of anything whose *name* is secret: ``--password x``, ``--token=x``,
  ``db.password=x`` and ``+db.password=x`` (Hydra), ``API_KEY=x``, ``?token=x`` in a
  URL, an estimator's param ``api_token``. A name is secret when its last word is one
  of :data:`SECRET_WORDS`; words are split at ``_ . - +`` and at camelCase, so
  ``api_key``, ``apiKey``, ``API_KEY`` and ``--api-key`` are secret, while
  ``token_pattern`` (a regex), ``max_tokens`` and ``monkey`` are not.
* At any depth of a value (:func:`redact`): the value under a secret key of a dict,
  inside lists, tuples and sets, and a secret param of an estimator inside another's
  params (a pipeline's step), so ``kw_args={"api_token": "x"}`` is written
  ``{'api_token': '***'}``; and in a value's text (:func:`redact_repr`) as a last
  resort for objects whose params pypads cannot see.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any

from pypads.core.estimators import is_estimator
from pypads.core.estimators import params as estimator_params

REDACTED = "***"

#: The last words that make a name secret, compared case-insensitively. Users extend
#: it for their own names: ``pypads.core.privacy.SECRET_WORDS.append("pin")``.
SECRET_WORDS: list[str] = [
    "password", "passwd", "pwd", "passphrase", "secret", "token", "key", "apikey", "credential", "credentials", "auth",
]

# user:password@ or token@ in any URL (https://, ssh://, git+https://, …); greedy up to
# the last @ before the path, for a password with an unescaped @ in it.
_URL_CREDENTIALS = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s]+@")
# name=value in free text and in URLs' queries; a quoted value is taken whole.
_ASSIGNMENT = re.compile(r"(?P<name>[A-Za-z_][\w.\-]*)=(?P<value>'[^']*'|\"[^\"]*\"|[^\s&#;,'\"]*)")
# What may stand before = in an argument: --name, db.name, +db.name, ++db.name (Hydra).
_OPTION_NAME = re.compile(r"^[-+~]*[A-Za-z_][\w.\-]*$")
# Words of a name: runs of capitals (an acronym), or a word with one leading capital.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
# 'name': value in the repr of a dict (a quoted key, then a quoted or bare value).
_QUOTED_KEY = re.compile(r"""(?P<key>(?P<quote>['"])(?P<name>[A-Za-z_][\w.\-]*)(?P=quote)\s*:\s*)"""
                         r"""(?P<value>'(?:[^'\\\n]|\\.)*'?|"(?:[^"\\\n]|\\.)*"?|[^\s,}\])]+)""")
# Values with nothing inside to redact: the fast path of :func:`redact`.
_ATOMS = frozenset({str, int, float, bool, type(None), bytes, complex})
# How deep :func:`redact` walks: deeper values are left as they are (no recursion error).
MAX_DEPTH = 50


def is_secret_name(name: str) -> bool:
    """Whether ``name`` (a param, an option, a variable, a query key) names a secret."""
    return _is_secret(name, _secret_words())


def redact_url(text: str) -> str:
    """``https://user:pw@host/x`` → ``https://***@host/x``, anywhere in ``text``."""
    return _URL_CREDENTIALS.sub(lambda match: f"{match['scheme']}{REDACTED}@", text)


def redact_text(text: str) -> str:
    """``text`` with URL credentials and the values of secret ``name=value`` pairs
    hidden: for messages, console output, tag values."""
    words = _secret_words()

    def hide(match: re.Match[str]) -> str:
        return f"{match['name']}={REDACTED}" if _is_secret(match["name"], words) else match[0]

    return _ASSIGNMENT.sub(hide, redact_url(text))


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line with secrets hidden: ``--password x``, ``--passphrase=x``,
    ``db.password=x`` and ``+db.password=x`` (Hydra overrides), ``API_KEY=x``, and
    credentials in URLs."""
    redacted: list[str] = []
    hide_next = False
    for argument in argv:
        if hide_next:
            redacted.append(REDACTED)
            hide_next = False
            continue
        name, equals, _ = argument.partition("=")
        if equals and _OPTION_NAME.match(name) and is_secret_name(name):
            redacted.append(f"{name}={REDACTED}")
        elif not equals and argument.startswith("-") and is_secret_name(argument):
            redacted.append(argument)
            hide_next = True  # ``--password x``: the value is the next argument
        else:
            redacted.append(redact_text(argument))
    return redacted


def redact_params(params: Mapping[str, str]) -> dict[str, str]:
    """``params`` with the values of secret names replaced by :data:`REDACTED`, and URL
    credentials hidden in the others."""
    words = _secret_words()
    return {name: REDACTED if _is_secret(name, words) else redact_url(value) if "@" in value else value
            for name, value in params.items()}


def redact(value: Any) -> Any:
    """``value`` with the value under every secret key replaced by :data:`REDACTED`, at
    any depth: keys of dicts (any mapping), inside lists, tuples (named ones too), sets
    and frozensets, and the params of estimators (objects with ``get_params``), whose
    own params and those of the estimators inside them (a pipeline's steps, a search's
    ``estimator``) are walked the same way.

    ``value`` itself is never changed: what holds a secret is rebuilt (a dict as a dict
    of its type, an estimator as a shallow copy with its redacted params set on it, so
    that its repr shows ``***``), and everything else is returned as it is; so
    ``redact(value) is value`` says that nothing was redacted. A value with no
    container inside (a number, text, an array, a frame) costs one set lookup and a
    ``getattr``; a list or tuple of numbers or text, or of such lists (a data set's
    rows), one pass over its elements' types in C code, not a walk.
    """
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind in _CONTAINERS or isinstance(value, _WALKED) or getattr(value, "get_params", None) is not None:
        return _Redaction(_secret_words()).walk(value, 0)
    return value  # an array, a frame, a function, any other object: nothing to walk


def redact_repr(text: str) -> str:
    """``text`` (an object's repr) with the values of secret ``'name': value`` pairs of
    dicts and of secret ``name=value`` pairs hidden, and URL credentials: for the repr
    of objects whose params :func:`redact` cannot see (a class of the user's that
    keeps a dict). A cut value (``'sk-12...``) is hidden up to the cut."""
    words = _secret_words()

    def hide(match: re.Match[str]) -> str:
        return f"{match['key']}{REDACTED!r}" if _is_secret(match["name"], words) else match[0]

    text = _QUOTED_KEY.sub(hide, text) if ":" in text else text
    return redact_text(text) if "=" in text or "@" in text else text


class _Redaction:
    """One walk of :func:`redact`: the words read once, and each estimator redacted
    once however often it appears (``get_params(deep=True)`` names a step twice)."""

    def __init__(self, words: frozenset[str]) -> None:
        self.words = words
        self.estimators: dict[int, Any] = {}

    def walk(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind in _ATOMS or depth > MAX_DEPTH:
            return value
        if isinstance(value, Mapping):
            return self._mapping(value, depth)
        if isinstance(value, _WALKED):
            return self._collection(value, depth)
        if is_estimator(value):
            return self._estimator(value, depth)
        return value

    def _mapping(self, value: Mapping[Any, Any], depth: int) -> Any:
        items, changed = [], False
        for key, item in value.items():
            if isinstance(key, str) and _is_secret(key, self.words):
                new: Any = REDACTED
            else:
                new = self.walk(item, depth + 1)
            changed = changed or new is not item
            items.append((key, new))
        if not changed:
            return value
        kind: Any = type(value)
        try:
            return kind(items)
        except Exception:  # a mapping that cannot be built from its items (defaultdict…)
            return dict(items)

    def _collection(self, value: Any, depth: int) -> Any:
        if _holds_atoms_only(value, MAX_DEPTH - depth):
            return value  # only a dict's key or a param's name can be secret, and there is none
        items = [self.walk(item, depth + 1) for item in value]
        if all(new is old for new, old in zip(items, value)):
            return value
        kind = type(value)
        try:
            return kind(*items) if hasattr(value, "_fields") else kind(items)  # a namedtuple takes fields
        except Exception:
            return tuple(items) if isinstance(value, tuple) else list(items)

    def _estimator(self, value: Any, depth: int) -> Any:
        known = self.estimators.get(id(value))
        if known is not None:
            return known[1]
        self.estimators[id(value)] = (value, value)  # a cycle back to it ends here
        try:
            params = estimator_params(value)
        except Exception:  # not an estimator's get_params after all, or a broken one
            return value
        if not isinstance(params, Mapping):
            return value
        redacted = self._mapping(params, depth)
        if redacted is params:
            return value
        changed = {name: new for name, new in redacted.items() if new is not params[name]}
        try:
            clone = copy.copy(value)
            for name, new in changed.items():
                object.__setattr__(clone, name, new)
        except Exception:  # a copy or an attribute refused: show no part of it
            clone = _Unshown(value)
        self.estimators[id(value)] = (value, clone)  # the value itself kept alive: its id stays its own
        return clone


class _Unshown:
    """Stands for an estimator that holds a secret but could not be copied with it
    redacted: its class name only."""

    def __init__(self, value: Any) -> None:
        self.kind = type(value).__qualname__

    def __repr__(self) -> str:
        return f"{self.kind}({REDACTED})"


_CONTAINERS = frozenset({dict, list, tuple, set, frozenset})
_WALKED = (Mapping, list, tuple, set, frozenset)
# Sequences :func:`_holds_atoms_only` looks through: these exact types only, as a
# subclass may iterate as it likes (a namedtuple goes to the walk). Nested, they are
# how a data set comes as plain Python: a list of rows.
_PLAIN_SEQUENCES = frozenset({list, tuple})


def _holds_atoms_only(value: Any, levels: int) -> bool:
    """Whether ``value`` holds atoms only, directly or inside lists and tuples inside
    it, looking at most ``levels`` deep. Each level is one pass of C code over the
    elements' types (``map``, ``set``, ``chain``), with no Python call per element:
    millions of floats are checked in the time it takes to touch them, where a walk
    in Python takes seconds. False for anything else (a dict, an estimator, atoms beside
    lists): the walk then looks at each element itself."""
    for level in range(levels):
        kinds = set(map(type, _elements(value, level)))
        if kinds <= _ATOMS:
            return True
        if not kinds <= _PLAIN_SEQUENCES:
            return False
    return False


def _elements(value: Any, level: int) -> Iterator[Any]:
    """The elements ``level`` sequences below ``value``, as they come: nothing is
    copied, so a large list costs no memory to look through."""
    elements: Iterator[Any] = iter(value)
    for _ in range(level):
        elements = chain.from_iterable(elements)
    return elements


def _is_secret(name: str, words: frozenset[str]) -> bool:
    return _last_word(name) in words


@functools.lru_cache(maxsize=4096)
def _last_word(name: str) -> str:
    """The word of ``name`` that makes it secret or not, lower-cased. Names repeat (an
    estimator's params on every fit), and splitting one costs a regular expression."""
    found = _WORD.findall(name)
    return found[-1].lower() if found else ""


def _secret_words() -> frozenset[str]:
    global _words_read
    if _words_read[0] != SECRET_WORDS:  # users extend the list; compared, not rebuilt, per call
        _words_read = (list(SECRET_WORDS), frozenset(word.lower() for word in SECRET_WORDS))
    return _words_read[1]


_words_read: tuple[list[str], frozenset[str]] = ([], frozenset())
