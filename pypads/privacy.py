"""What pypads never writes in clear, under the name the docs give users: extend
:data:`SECRET_WORDS` here (``pypads.privacy.SECRET_WORDS.append("pin")``).

It lives in :mod:`pypads.core.privacy`, where every floor can reach it.
"""

from pypads.core import REDACTED, SECRET_WORDS, is_secret_name, redact, redact_text

__all__ = ["REDACTED", "SECRET_WORDS", "is_secret_name", "redact", "redact_text"]
