"""Probability calibration: a naive Bayes model before and after calibration."""
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

X, y = make_classification(n_samples=3000, n_features=20, n_informative=2, n_redundant=10, random_state=42)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.9, random_state=42)

for name, model in {
    "uncalibrated": GaussianNB(),
    "isotonic": CalibratedClassifierCV(GaussianNB(), cv=2, method="isotonic"),
    "sigmoid": CalibratedClassifierCV(GaussianNB(), cv=2, method="sigmoid"),
}.items():
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_test)[:, 1]
    print(f"{name:13s} brier {brier_score_loss(y_test, proba):.3f} log loss {log_loss(y_test, proba):.3f}")
