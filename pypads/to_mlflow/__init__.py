"""The way to MLflow, the second floor: everything between a value handed to the run's
writer and MLflow's store.

The journal keeps what a run still owes MLflow; the link starts and watches the
uploader; the uploader (a process of its own) reads the journal, evaluates models and
uploads; the connection is the one place that speaks MLflow's client API. Nothing above
this floor imports MLflow.
"""
