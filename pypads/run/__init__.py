"""The run, the third floor: the context a tracked run keeps (counters, per-logger
state, failures), the writer every logger hands its values to, and the run's end."""
