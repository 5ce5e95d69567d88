"""A validation curve: an SVC's score as gamma varies."""
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import validation_curve
from sklearn.svm import SVC

X, y = load_digits(return_X_y=True)
subset = np.isin(y, [1, 2])
X, y = X[subset], y[subset]
param_range = np.logspace(-6, -1, 5)
train_scores, test_scores = validation_curve(SVC(), X, y, param_name="gamma", param_range=param_range, cv=5)
for gamma, train, test in zip(param_range, train_scores.mean(axis=1), test_scores.mean(axis=1)):
    print(f"gamma={gamma:.0e} train {train:.3f} validation {test:.3f}")
