"""What kind of process this is, asked without importing ``multiprocessing``."""

from __future__ import annotations

import sys


def is_multiprocessing_child() -> bool:
    """Whether ``multiprocessing`` (any start method, so also ``concurrent.futures`` and
    joblib's workers) started this process.

    Importing ``multiprocessing`` to ask costs a script's start-up about 15 ms. It need not
    be: a child it started has it imported already, by the spawn or forkserver bootstrap
    or, forked, inherited from its parent; a process in which it was never imported is
    no child of it.
    """
    module = sys.modules.get("multiprocessing")
    return module is not None and module.parent_process() is not None
