"""Which features a fitted model leans on: its ``feature_importances_`` (trees, forests,
boosting) or its ``coef_`` (linear models), as a bar chart of the top 20 and the whole
table as CSV; and the same chart of a table a mapping file's reading logged."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pypads.to_mlflow.evaluation.drawing import new_figure, png
from pypads.to_mlflow.evaluation.record import failed, file_name, names_or_default

TOP = 20  # bars in the chart; the CSV has every feature


def importances(estimator: Any, feature_names: Sequence[str] | None, prefix: str = "") -> tuple[dict[str, bytes], list[str]]:
    """feature importances (feature_importances_) or coefficients (coef_, abs for ranking, per class
    for multi-class: one row per feature, mean |coef| ranks), top 20 as a horizontal bar PNG, the
    full table as CSV bytes: {"feature_importances.png": ..., "feature_importances.csv": ...} (or
    coefficients.*). Feature names from the argument, else estimator.feature_names_in_, else x0..xN.
    For a Pipeline use its last step (and get_feature_names_out of the steps before it when that
    works). Nothing (and no warning) for an estimator that has neither."""
    files: dict[str, bytes] = {}
    warnings: list[str] = []
    kind = "importances"
    try:
        model, names = last_step(estimator, feature_names)
        found = values_of(model)
        if found is None:
            return files, warnings
        kind, columns, values = found
        names = names_or_default(names, len(values)) or names_or_default(attribute(model, "feature_names_in_"), len(values)) \
            or [f"x{index}" for index in range(len(values))]
        rank = np.abs(values).mean(axis=1)
        order = np.argsort(-rank, kind="stable")
        files[file_name(prefix, kind, "csv")] = table(names, columns, values, rank, order)
        try:
            files[file_name(prefix, kind, "png")] = chart(names, columns, values, rank, order[:TOP], kind, type(model).__name__)
        except Exception as error:  # the table is worth keeping without its chart
            warnings.append(failed(file_name(prefix, kind, "png"), error))
    except Exception as error:  # never raise for an odd estimator
        warnings.append(failed(file_name(prefix, kind, "png"), error))
    return files, warnings


def attribute(model: Any, name: str) -> Any:
    """``model.name``, or None: a fitted attribute may be a property that raises (a non-linear
    SVC's ``coef_``, an unfitted model's anything)."""
    try:
        return getattr(model, name, None)
    except Exception:
        return None


def last_step(estimator: Any, feature_names: Sequence[str] | None) -> tuple[Any, Sequence[str] | None]:
    """The model that has the importances, and the names of the features it was fitted on:
    a Pipeline's last step, named by what the steps before it make of the input's names."""
    steps = attribute(estimator, "steps")
    if not isinstance(steps, list) or not steps or not hasattr(estimator, "__getitem__"):
        return estimator, feature_names
    model = steps[-1][1]
    try:
        names = estimator[:-1].get_feature_names_out(feature_names)
        return model, [str(name) for name in names]
    except Exception:  # a step without get_feature_names_out: fall back to the plain names
        return model, feature_names


def values_of(model: Any) -> tuple[str, list[str], NDArray[Any]] | None:
    """(file kind, column names, one row per feature) from the model's importances or
    coefficients, or None when it has neither."""
    importance = attribute(model, "feature_importances_")
    if importance is not None:
        column: NDArray[Any] = np.asarray(importance, dtype=float).reshape(-1, 1)
        return "feature_importances", ["importance"], column
    coefficients = attribute(model, "coef_")
    if coefficients is None:
        return None
    if hasattr(coefficients, "toarray"):  # a sparse coef_ (an SVC fitted on sparse data)
        coefficients = coefficients.toarray()
    values: NDArray[Any] = np.atleast_2d(np.asarray(coefficients, dtype=float))
    if values.shape[0] == 1:
        return "coefficients", ["coefficient"], values.T
    # one row per class (or target) in coef_: one column per class here, one row per feature
    classes = attribute(model, "classes_")
    labels = [str(label) for label in classes] if classes is not None and len(classes) == values.shape[0] \
        else [str(index) for index in range(values.shape[0])]
    return "coefficients", [f"coefficient_{label}" for label in labels], values.T


def table(names: list[str], columns: list[str], values: NDArray[Any], rank: NDArray[Any], order: NDArray[Any]) -> bytes:
    """Every feature, most important first."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    several = len(columns) > 1
    writer.writerow(["feature", *columns, *(["mean_abs_coefficient"] if several else [])])
    for index in order:
        writer.writerow([names[index], *(repr(float(value)) for value in values[index]),
                         *([repr(float(rank[index]))] if several else [])])
    return buffer.getvalue().encode()


def chart(names: list[str], columns: list[str], values: NDArray[Any], rank: NDArray[Any], top: NDArray[Any], kind: str,
          model: str) -> bytes:
    """The top features as horizontal bars, the most important on top: an importance, a
    signed coefficient (ranked by its size), or a multi-class model's mean |coefficient|."""
    shown = values[top, 0] if len(columns) == 1 else rank[top]
    if kind == "feature_importances":
        label = "importance"
    else:
        label = "coefficient" if len(columns) == 1 else "mean |coefficient| over classes"
    more = f", top {len(top)} of {len(names)}" if len(names) > len(top) else ""
    title = f"{model}: {'feature importances' if kind == 'feature_importances' else 'coefficients'}{more}"
    return bars([names[index] for index in top], shown, label, title)


def bars(names: list[str], values: NDArray[Any], label: str, title: str) -> bytes:
    """Horizontal bars, the first name on top; a negative value's bar red."""
    figure = new_figure(7.0, 1.5 + 0.3 * len(names))
    axes = figure.add_subplot()
    positions = np.arange(len(names))[::-1]
    axes.barh(positions, values, color=["tab:blue" if value >= 0 else "tab:red" for value in values])
    axes.set_yticks(positions, [clipped(name) for name in names])
    axes.axvline(0, color="grey", linewidth=0.8)
    axes.set_xlabel(label)
    axes.set_title(title)
    return png(figure)


def table_chart(table: bytes, column: str, title: str) -> bytes:
    """The top 20 rows of a CSV table (a booster's importance, as a mapping file's reading
    wrote it) by the size of ``column`` (see :func:`ranked_rows`), as bars."""
    found = ranked_rows(table, column)
    top = found[:TOP]
    more = f", top {len(top)} of {len(found)}" if len(found) > len(top) else ""
    return bars([name for name, _ in top], np.array([value for _, value in top]), column, f"{title}{more}")


def ranked_rows(table: bytes, column: str) -> list[tuple[str, float]]:
    """The rows of a CSV table that have a number in ``column``, largest in size first,
    named by the table's ``feature`` column, else its first. Raises ValueError for a table
    without that column or any number in it (a journal's table: read as untrusted text)."""
    rows = list(csv.reader(io.StringIO(table.decode("utf-8"))))
    if not rows or column not in rows[0]:
        raise ValueError(f"the table has no column {column!r}")
    header = rows[0]
    at, named_by = header.index(column), header.index("feature") if "feature" in header else 0
    found: list[tuple[str, float]] = []
    for row in rows[1:]:
        try:
            found.append((row[named_by], float(row[at])))
        except (IndexError, ValueError):  # a feature the library gave no value for
            continue
    if not found:
        raise ValueError(f"no numbers in column {column!r}")
    found.sort(key=lambda item: -abs(item[1]))
    return found


def clipped(name: str, limit: int = 40) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"
