"""Keeping secrets out of runs: redaction of credentials and pseudonyms for machines."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

REDACTED = "***"

# user:password@ or token@ in any URL (https://, ssh://, git+https://, …)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<credentials>[^/@\s]+)@")
_SECRET_OPTION = re.compile(r"^--?[\w.-]*(password|passwd|pwd|token|secret|key|credential|auth)[\w.-]*$", re.IGNORECASE)


def redact_url(text: str) -> str:
    """``https://user:pw@host/x`` → ``https://***@host/x``."""
    return _URL_CREDENTIALS.sub(lambda match: f"{match['scheme']}{REDACTED}@", text)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """Hide the values of ``--password x``, ``--token=x``, ``--api-key x``… and URL credentials."""
    redacted: list[str] = []
    hide_next = False
    for argument in argv:
        if hide_next:
            redacted.append(REDACTED)
            hide_next = False
            continue
        option, equals, _ = argument.partition("=")
        if _SECRET_OPTION.match(option):
            if equals:
                redacted.append(f"{option}={REDACTED}")
            else:
                redacted.append(argument)
                hide_next = True
            continue
        redacted.append(redact_url(argument))
    return redacted


def pseudonym(value: str, salt: str) -> str:
    """A stable salted hash standing for an identifying value (hostname, IP, MAC)."""
    return "anon-" + hashlib.sha256(f"{salt}:{value}".encode()).hexdigest()[:16]
