"""CrossValidation: the per-fold scores of ``cross_validate`` and ``cross_val_score``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pypads.core import Logger, is_estimator
from pypads.recording.loggers.parameters import log_params, params_of
from pypads.run import TrackedCall

HOOK = "pypads_cross_validate"


class CrossValidation(Logger):
    """For a cross-validation the script ran: each score as a series
    ``cv_<Estimator>_<score>`` with the fold as step (0 for scikit-learn's ``split0``),
    its mean and standard deviation as ``cv_<Estimator>_<score>_mean`` and ``…_std``,
    and the estimator's params as the Parameters logger logs a fitted one's
    (``<label>.<param>``): scikit-learn fits clones of it, never the estimator itself,
    so no fit of the script's would log them. ``<score>`` is
    ``cross_validate``'s key (``test_score``, ``test_accuracy``, ``train_r2``…), and
    ``test_score`` for ``cross_val_score``. A second cross-validation of the same
    estimator class in one run gets ``cv_<Estimator>_2_…``. Fit and score times are
    left out. The hook (``pypads_cross_validate``) goes on ``sklearn.model_selection``'s
    ``cross_validate`` and ``cross_val_score`` in the mapping file.
    """

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        if call.depth != 0 or call.exception is not None:
            return
        estimator = call.args[0] if call.args else call.kwargs.get("estimator")
        if not is_estimator(estimator):  # a library's own cross-validation (xgboost.cv): its mapping's reading
            return
        result = call.result
        if isinstance(result, dict):
            series = {key: values for key, values in result.items() if key.startswith(("test_", "train_"))}
        else:
            series = {"test_score": result}
        state = call.run.state(self)
        class_name = type(estimator).__name__
        state[class_name] = number = state.get(class_name, 0) + 1
        base = f"cv_{class_name}" if number == 1 else f"cv_{class_name}_{number}"
        params = params_of(estimator)
        if params is not None:
            log_params(call, estimator, params)
        writer = call.run.writer
        for key, values in series.items():
            scores = np.asarray(values, dtype=float).ravel()
            for fold, score in enumerate(scores):
                writer.log_metric(f"{base}_{key}", float(score), step=fold)
            if scores.size:
                # Population std (numpy's), as cv_results_' std_test_score
                writer.log_metrics({f"{base}_{key}_mean": float(scores.mean()), f"{base}_{key}_std": float(scores.std())})
