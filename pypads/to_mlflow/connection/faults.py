"""Which of MLflow's failures pass: a tracking server that is down, restarting or
overloaded (its database aborting a deadlock answers 503). Such a call is worth trying
again as it was (see :class:`pypads.to_mlflow.timeouts.AnswerClock`); any other failure
is the data's or the store's, and trying again would only fail again.

MLflow's client wraps what went wrong into the text of one ``MlflowException`` ("API
request to … failed with exception …"), so the text is what there is to read.
"""

from __future__ import annotations

import requests
from mlflow.exceptions import MlflowException

# 500 is not among them: a server's own error, which comes back however often one asks.
PASSING_STATUSES = frozenset({408, 429, 502, 503, 504})
_PASSING_WORDS = (
    "connection refused", "newconnectionerror", "connection aborted", "connection reset", "remotedisconnected",
    "read timed out", "timeout exception", "temporarily_unavailable",
    *(f"too many {status} error responses" for status in sorted(PASSING_STATUSES)),
)


def passing_failure(error: BaseException) -> bool:
    """Whether ``error`` says the server is unreachable or overloaded for now."""
    if isinstance(error, (requests.ConnectionError, requests.Timeout)):
        return True
    if isinstance(error, requests.HTTPError):  # an artifact proxied by the server
        return error.response is not None and error.response.status_code in PASSING_STATUSES
    if isinstance(error, MlflowException):
        if error.get_http_status_code() in PASSING_STATUSES:  # type: ignore[no-untyped-call]
            return True
        text = str(error).lower()
        return any(words in text for words in _PASSING_WORDS)
    return False
