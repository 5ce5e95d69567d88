"""A fitted model's training scores and pictures, from what the script's process recorded
of it: pure functions the uploader calls, with no MLflow, no journal and no run.

- :func:`scores`: the metrics MLflow's sklearn autolog logs (its names, without its
  ``training_`` prefix), from an :class:`Evaluation`;
- :func:`pictures`: a classifier's confusion matrix, ROC and precision-recall curves, a
  regressor's residuals and predicted-vs-actual, a clusterer's cluster sizes, as PNG bytes;
- :func:`importances`: feature importances or coefficients as a bar chart and a CSV table;
- :func:`table_chart`: the same bars of a column of a table (a booster's importance);
- :func:`estimator_html`: scikit-learn's own HTML view of an estimator, as a page.

None of them raises for bad data: what could not be computed is a warning string that
names it and says why, and the rest is still returned.

An exception to the house rule of no function-local imports: scikit-learn and matplotlib
are imported inside the functions that use them. The uploader imports this package early,
and each of those imports costs about half a second, which is paid only when a model is
actually evaluated. Pictures are drawn on ``matplotlib.figure.Figure`` objects with the
Agg canvas, never through ``pyplot``: the uploader may serve a script that uses pyplot
itself (a spare uploader runs in its own process, a thread uploader in the script's), and
pyplot's figure registry, backend and rcParams are global state that must stay the user's.
"""

from __future__ import annotations

from pypads.to_mlflow.evaluation.importance import importances, table_chart
from pypads.to_mlflow.evaluation.metrics import import_ahead, scores
from pypads.to_mlflow.evaluation.page import estimator_html
from pypads.to_mlflow.evaluation.pictures import pictures
from pypads.to_mlflow.evaluation.record import Evaluation

__all__ = ["Evaluation", "estimator_html", "import_ahead", "importances", "pictures", "scores", "table_chart"]
