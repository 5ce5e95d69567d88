"""The main job: a small scikit-learn training script, tracked by one line.

Run it with ``python3 dev.py example`` (or ``.venv/bin/python examples/iris.py``).
It tracks into the embedded default store (``~/.pypads``, or ``$PYPADS_HOME``) and
prints the run id and the command that opens the run in the MLflow UI.
"""

import shutil
import sys
from pathlib import Path

from pypads import PyPads

tracker = PyPads(name="iris")  # the one line: everything below is tracked

from sklearn import datasets, metrics  # noqa: E402  (imported after PyPads on purpose: either order works)
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

X, y = datasets.load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X_train, y_train)
accuracy = metrics.accuracy_score(y_test, model.predict(X_test))

run_id = tracker.run_id
tracker.end_run()  # optional: the run also ends at exit; here we want it flushed before printing

beside_python = Path(sys.executable).with_name("mlflow")
command = tracker.store.ui_command(str(beside_python) if beside_python.exists() else shutil.which("mlflow") or "mlflow")
print(f"accuracy: {accuracy:.3f}")
print(f"run id: {run_id}")
print(f"open it in the MLflow UI: {command}")
print("  then browse http://127.0.0.1:5000 (experiment 'iris')")
