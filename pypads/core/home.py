"""pypads' folder on this machine: the default store, journals, the mapping cache, the salt."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "PYPADS_HOME"


def pypads_home() -> Path:
    """``$PYPADS_HOME``, else ``~/.pypads``: home of the embedded default store."""
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".pypads").expanduser().resolve()
