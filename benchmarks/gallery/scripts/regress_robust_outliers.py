"""Robust regression: Huber, RANSAC and Theil-Sen against least squares with outliers."""
import numpy as np
from sklearn.datasets import make_regression
from sklearn.linear_model import HuberRegressor, LinearRegression, RANSACRegressor, TheilSenRegressor

X, y, coef = make_regression(n_samples=200, n_features=1, noise=4.0, coef=True, random_state=0)
X[:8] = 3 + 0.5 * np.random.RandomState(0).normal(size=(8, 1))
y[:8] = -20

for model in (LinearRegression(), HuberRegressor(), RANSACRegressor(random_state=0), TheilSenRegressor(random_state=0)):
    model.fit(X, y)
    slope = model.estimator_.coef_[0] if hasattr(model, "estimator_") else model.coef_[0]
    print(f"{type(model).__name__:18s} slope {slope:7.2f} (true {coef:.2f})")
