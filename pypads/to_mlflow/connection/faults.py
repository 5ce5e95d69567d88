"""Which of MLflow's failures pass: a tracking server that is down, restarting or
overloaded. Such a call is worth trying again as it was (see
:class:`pypads.to_mlflow.timeouts.AnswerClock`); any other failure is the data's or the
store's, and trying again would only fail again.

Only failures that say the request did not take effect: the connection was never made
(refused, a name not resolved while a container restarts), or the server answered that
it did nothing (503, which is also how MLflow's server reports a PostgreSQL deadlock it
rolled back, and 429). A reset connection, a read timeout or a proxy's 502 or 504 may
come after the server did the work: trying a ``create_run`` again would make a second
run. Those fail the upload instead, and the journal keeps what was left.

MLflow's client wraps a failure without an answer into the text of one
``MlflowException`` ("API request to … failed with exception …"), so for those the
text is what there is to read; an answer is read by its status, never by its body.
"""

from __future__ import annotations

import requests
from mlflow.exceptions import MlflowException, RestException

PASSING_STATUSES = frozenset({429, 503})
# What urllib3 and requests say of a connection never made, or of answers that were all
# 503 or 429 until MLflow's client gave up.
_NEVER_DONE = ("connection refused", "newconnectionerror", "nameresolutionerror", "failed to resolve",
               "too many 503 error responses", "too many 429 error responses")
# How MLflow's client words a request that got no usable answer.
_NO_ANSWER = "failed with exception"


def passing_failure(error: BaseException) -> bool:
    """Whether ``error`` says the server did not take the request, for now."""
    if isinstance(error, requests.HTTPError):  # an artifact proxied by the server
        return error.response is not None and error.response.status_code in PASSING_STATUSES
    if isinstance(error, RestException):  # an answer: its status says it all
        return error.get_http_status_code() in PASSING_STATUSES  # type: ignore[no-untyped-call]
    if isinstance(error, requests.ConnectionError):
        return _never_done(str(error))
    if isinstance(error, MlflowException) and _NO_ANSWER in error.message:
        return _never_done(error.message)
    return False


def _never_done(text: str) -> bool:
    lowered = text.lower()
    return any(words in lowered for words in _NEVER_DONE)
