"""A matplotlib figure as PNG bytes, without pyplot: a ``Figure`` of its own on an Agg
canvas of its own, so the user's pyplot figures, backend and rcParams stay as they were
(the uploader may run on a thread of the script that draws with pyplot)."""

from __future__ import annotations

import io
from typing import Any

MAX_BYTES = 200_000  # MLflow's artifact view loads each picture whole
DPIS = (100, 72, 50)  # tried in turn until the PNG fits MAX_BYTES


# Margins of a plot whose tick labels and titles are pypads' own short words and numbers
# between 0 and 1 (the curves): fixed, because constrained layout measures every text
# before drawing and costs a third of such a picture's time.
FIXED_MARGINS = {"left": 0.11, "right": 0.97, "bottom": 0.11, "top": 0.92}


def new_figure(width: float = 6.4, height: float = 4.8, fixed_margins: bool = False) -> Any:
    """A figure of its own (not registered with pyplot), and its Agg canvas; laid out
    around its texts, or with :data:`FIXED_MARGINS`."""
    # Imported here, not at the top: see the package's docstring (import cost).
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout=None if fixed_margins else "constrained")
    if fixed_margins:
        figure.subplots_adjust(**FIXED_MARGINS)
    FigureCanvasAgg(figure)
    return figure


def png(figure: Any) -> bytes:
    """The figure as PNG bytes of at most MAX_BYTES, at a lower resolution if need be."""
    size = 0
    for dpi in DPIS:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=dpi)
        content = buffer.getvalue()
        if len(content) <= MAX_BYTES:
            return content
        size = len(content)
    raise ValueError(f"the picture takes {size} bytes at {DPIS[-1]} dpi, more than {MAX_BYTES}")
