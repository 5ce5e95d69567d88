"""Under- and overfitting: polynomial features of degree 1, 4 and 15 on a noisy cosine."""
import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import PolynomialFeatures

rng = np.random.RandomState(0)
X = np.sort(rng.rand(30))[:, np.newaxis]
y = np.cos(1.5 * np.pi * X.ravel()) + rng.randn(30) * 0.1
X_grid = np.linspace(0, 1, 100)[:, np.newaxis]
y_grid = np.cos(1.5 * np.pi * X_grid.ravel())

for degree in (1, 4, 15):
    pipeline = Pipeline([("polynomial", PolynomialFeatures(degree=degree, include_bias=False)),
                         ("linear", LinearRegression())])
    pipeline.fit(X, y)
    print(f"degree {degree:2d}: mse on the curve {mean_squared_error(y_grid, pipeline.predict(X_grid)):.2e}")
