"""The call core, the ground floor: what a tracked call is, the logger contract, the
patches and the import hook that put calls through them, and the mapping files that say
which calls matter.

It imports nothing of the floors above (``tests/unit/test_layout.py`` checks it), so a
library can be patched without loading the loggers, the run or the way to MLflow.
"""
