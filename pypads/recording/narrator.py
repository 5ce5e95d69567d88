"""pypads' own narration (loguru's ``logger``), imported at its first message.

Importing loguru costs a script's start-up about 35 ms, and most runs say nothing
through it: :data:`logger` stands for loguru's logger and imports it when first used.
"""

from __future__ import annotations

import importlib
from typing import Any


class _Narrator:
    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("loguru").logger, name)


logger: Any = _Narrator()
"""loguru's ``logger``, once anything is asked of it."""
