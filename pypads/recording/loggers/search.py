"""Search: what a hyper-parameter search found (GridSearchCV, RandomizedSearchCV, the
halving searches), read from the search object once its top-level fit returns, so it
holds however the candidates ran (``n_jobs=2`` fits them in worker processes)."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from pypads.core import REDACTED, Logger, is_secret_name, redact, redact_params
from pypads.recording.content.lineage import lineage
from pypads.recording.loggers.comparison import Score, rows
from pypads.run import TrackedCall

MAX_PARAM_LENGTH = 6000  # MLflow refuses longer param values
# The columns of cv_results_ that become each candidate's metrics.
SCORE_PREFIXES = ("mean_test_", "std_test_", "rank_test_", "mean_train_", "std_train_",
                  "mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time")


class Search(Logger):
    """For a search fitted by the script: params ``best_<param>`` (``best_C``,
    ``best_clf__C``) and the metric ``best_cv_score``, as ``mlflow.sklearn.autolog``
    names them; ``cv_results_`` as the table ``cv_results.csv``; and one child run per
    candidate (tag ``mlflow.parentRunId``) with its params and its mean, std and rank
    scores and times, so MLflow's runs table compares them. The best-ranked
    ``max_child_runs`` candidates get one; the tag ``pypads.search`` says if more were
    left out. A second search in one run writes ``search_2.best_<param>``,
    ``search_2.best_cv_score`` and ``cv_results_2.csv``. The refit model is saved by
    the ``Model`` logger.
    """

    defaults = {"max_child_runs": 100}

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        search = call.instance
        results = getattr(search, "cv_results_", None)
        if call.depth != 0 or call.exception is not None or not isinstance(results, dict) or "params" not in results:
            return
        state = call.run.state(self)
        state["searches"] = number = state.get("searches", 0) + 1
        prefix, suffix = ("", "") if number == 1 else (f"search_{number}.", f"_{number}")
        writer = call.run.writer
        best_params = getattr(search, "best_params_", None)
        if isinstance(best_params, dict):
            writer.log_params(redact_params({f"{prefix}best_{key}": _text(value) for key, value in best_params.items()}))
        best_score = getattr(search, "best_score_", None)
        if isinstance(best_score, (int, float, np.number)):
            writer.log_metric(f"{prefix}best_cv_score", float(best_score))
            # on the search's model page too, as autolog shows it there
            score = Score(float(best_score), 0, int(time.time() * 1000), None)
            rows(call.run).scored(lineage(call.run).label(search), f"{prefix}best_cv_score", score)
        writer.log_bytes(f"cv_results{suffix}.csv", cv_results_csv(results))
        self._child_runs(call, results, number, options["max_child_runs"])

    def _child_runs(self, call: TrackedCall, results: dict[str, Any], number: int, limit: int) -> None:
        search_name = type(call.instance).__name__
        candidates = len(results["params"])
        order = _by_rank(results, candidates)
        if candidates > limit:
            call.run.writer.set_tag("pypads.search", f"{search_name}: {candidates} candidates, "
                                    f"child runs for the best {limit} only")
        now = int(time.time() * 1000)
        started = now - int((call.duration or 0) * 1000)
        for index in order[:limit]:
            metrics = [[key, float(values[index]), now, 0, None] for key, values in results.items()
                       if key.startswith(SCORE_PREFIXES) and _is_number(values[index])]
            call.run.writer.log_entry({
                "kind": "child_run", "name": f"{search_name}-{number}-candidate-{index}",
                "params": redact_params({key: _text(value) for key, value in results["params"][index].items()}),
                "metrics": metrics, "start_time": started, "end_time": now,
                "tags": {"pypads.search": f"{search_name}#{number}", "pypads.candidate": str(index),
                         "estimator_name": type(getattr(call.instance, "estimator", None)).__name__},
            })


def cv_results_csv(results: dict[str, Any]) -> bytes:
    """``cv_results_`` as CSV, one row per candidate (what ``pandas.DataFrame(cv_results_)``
    would write, without pandas in the script); masked cells are empty."""
    columns = [key for key in results if key != "params"] + ["params"]
    rows = len(results["params"])
    out = io.StringIO()
    table = csv.writer(out)
    table.writerow(columns)
    for index in range(rows):
        table.writerow([_cell(column, results[column], index) for column in columns])
    return out.getvalue().encode("utf-8")


def _cell(column: str, values: Any, index: int) -> str:
    value = values[index]
    if value is np.ma.masked:
        return ""
    return REDACTED if is_secret_name(column) else _text(value)  # param_clf__api_token


def _by_rank(results: dict[str, Any], candidates: int) -> list[int]:
    """Candidate indices, best first (by the first ``rank_test_*`` column)."""
    ranks = next((values for key, values in results.items() if key.startswith("rank_test_")), None)
    if ranks is None:
        return list(range(candidates))
    return sorted(range(candidates), key=lambda index: (ranks[index], index))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool) and value is not np.ma.masked


def _text(value: Any) -> str:
    """A param's value as text, secrets inside it (a dict's ``api_token``) redacted."""
    text = value.item() if isinstance(value, np.generic) else value
    text = str(redact(text))
    return text if len(text) <= MAX_PARAM_LENGTH else text[: MAX_PARAM_LENGTH - 3] + "..."
