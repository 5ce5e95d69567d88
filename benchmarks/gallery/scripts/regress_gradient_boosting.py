"""Gradient boosting regression: test deviance along the boosting stages."""
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split

X, y = load_diabetes(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.1, random_state=13)

params = {"n_estimators": 500, "max_depth": 4, "min_samples_split": 5, "learning_rate": 0.01, "loss": "squared_error"}
reg = GradientBoostingRegressor(**params)
reg.fit(X_train, y_train)
print("test mse", mean_squared_error(y_test, reg.predict(X_test)))
deviance = np.array([mean_squared_error(y_test, y_pred) for y_pred in reg.staged_predict(X_test)])
print("best stage", deviance.argmin() + 1, "deviance", deviance.min())
