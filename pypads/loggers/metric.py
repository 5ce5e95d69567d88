"""Metric: the results of scoring functions as MLflow metrics."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from pypads.calls import Call
from pypads.loggers.base import Logger
from pypads.loggers.serialize import WriteFormats, serialize
from pypads.provenance import provenance

METRIC_HOOK = "pypads_metric"


class Metric(Logger):
    """A real-valued result becomes the metric ``<function name>`` with step = the
    function's call number in the run; any other result (a confusion matrix, a report)
    becomes the artifact ``metrics/<name>/<step>.<ext>``.

    A metric computed inside another metric call (``f1_score`` calls ``fbeta_score``)
    is an implementation detail and is not logged again.
    """

    defaults = {"max_bytes": 1_000_000}

    def post(self, call: Call, before: None, options: Mapping[str, Any]) -> None:
        if call.exception is not None or _inside_metric(call):
            return
        value = call.result
        # float first: most scores are (numpy's float64 is one), and the check of the
        # numbers.Real ABC costs microseconds on a path that runs on every call.
        if isinstance(value, float) or (isinstance(value, numbers.Real) and not isinstance(value, bool)):
            call.run.writer.log_metric(call.name, float(value), step=call.number)
            return
        extension, content = serialize(value, WriteFormats.text, options["max_bytes"],
                                       lambda: provenance(self.name, call.run.mappings, call.function))
        call.run.writer.log_bytes(f"metrics/{call.name}/{call.number}.{extension}", content)


def _inside_metric(call: Call) -> bool:
    parent = call.parent
    while parent is not None:
        if METRIC_HOOK in parent.hooks:
            return True
        parent = parent.parent
    return False
