"""Pseudonyms for identifying values (hostname, user, IP, MAC address): a keyed hash,
stable on one machine, with the key (the salt) kept owner-only in pypads' home."""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

SALT_MODE = 0o600  # the salt makes pseudonyms reversible to whoever reads it
MIN_SALT_LENGTH = 16
MAX_SALT_BYTES = 1024  # a salt file is read back: never more than this


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
