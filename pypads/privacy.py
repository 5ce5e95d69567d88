"""Keeping secrets out of runs and out of the console: the redaction rules, the salt
of pseudonyms and pseudonyms for machines.

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
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

REDACTED = "***"

#: The last words that make a name secret, compared case-insensitively. Users extend
#: it for their own names: ``pypads.privacy.SECRET_WORDS.append("pin")``.
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
SALT_MODE = 0o600  # the salt makes pseudonyms reversible to whoever reads it
MIN_SALT_LENGTH = 16
MAX_SALT_BYTES = 1024  # a salt file is read back: never more than this


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


def pseudonym(value: str, salt: str) -> str:
    """A stable salted hash standing for an identifying value (hostname, IP, MAC)."""
    return "anon-" + hashlib.sha256(f"{salt}:{value}".encode()).hexdigest()[:16]


def load_salt(home: Path) -> str:
    """The salt of pseudonyms kept in ``home/salt``, readable by its owner only, made
    at the first call. Two processes making it at once get the same salt: it is written
    in full to a file of its own, then linked into place, which only one of them can do.
    Raises ``OSError`` if it can neither be read nor made."""
    path = home / "salt"
    salt = _read_salt(path)
    if salt is not None:
        return salt
    home.mkdir(parents=True, exist_ok=True)
    staging = home / f".salt.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, SALT_MODE)
    try:
        with os.fdopen(descriptor, "w") as stream:
            stream.write(secrets.token_hex(16))
        try:
            os.link(staging, path)
        except OSError:  # made meanwhile, left unusable by an older pypads, or no hard links here
            if _read_salt(path) is None:
                os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)
    salt = _read_salt(path)
    if salt is None:
        raise OSError(f"pypads cannot read the salt it made in {path}")
    return salt


def _read_salt(path: Path) -> str | None:
    """The salt at ``path`` (made owner-only if an older pypads left it readable to
    all); None if there is none, or what is there cannot be one: empty (a crash while
    it was written), short, not text."""
    try:
        with open(path, "rb") as stream:
            salt = stream.read(MAX_SALT_BYTES).decode().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if len(salt) < MIN_SALT_LENGTH:
        return None
    try:
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, SALT_MODE)
    except OSError:  # not ours to change (a shared home): still the salt to use
        pass
    return salt


def _is_secret(name: str, words: frozenset[str]) -> bool:
    found = _WORD.findall(name)
    return bool(found) and found[-1].lower() in words


def _secret_words() -> frozenset[str]:
    return frozenset(word.lower() for word in SECRET_WORDS)
