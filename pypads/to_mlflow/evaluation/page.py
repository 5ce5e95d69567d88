"""An estimator as scikit-learn draws it in a notebook (its nested steps and parameters,
folding open on a click), as a page of its own that MLflow's artifact view shows."""

from __future__ import annotations

from html import escape
from typing import Any


def estimator_html(estimator: Any) -> bytes | None:
    """scikit-learn's own HTML view (sklearn.utils.estimator_html_repr) as a full UTF-8 page, or None."""
    try:
        # Imported here, not at the top: see the package's docstring (import cost).
        from sklearn.utils import estimator_html_repr

        body = estimator_html_repr(estimator)
        title = escape(type(estimator).__name__)
    except Exception:  # not an estimator scikit-learn can draw: no page rather than a broken one
        return None
    page = ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{title}</title>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
    return page.encode("utf-8")
