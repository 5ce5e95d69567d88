"""A streaming regression: SGDRegressor and a scaler updated with partial_fit on each batch."""
import numpy as np
from sklearn.datasets import make_regression
from sklearn.linear_model import SGDRegressor
from sklearn.metrics import mean_squared_error
from sklearn.preprocessing import StandardScaler

X, y = make_regression(n_samples=5000, n_features=20, noise=5, random_state=0)
X_stream, X_holdout, y_stream, y_holdout = X[:4000], X[4000:], y[:4000], y[4000:]
scaler = StandardScaler()
regressor = SGDRegressor(learning_rate="invscaling", eta0=0.01, random_state=0)
for start in range(0, len(X_stream), 200):
    X_batch, y_batch = X_stream[start:start + 200], y_stream[start:start + 200]
    scaler.partial_fit(X_batch)
    regressor.partial_fit(scaler.transform(X_batch), y_batch)
    if (start // 200) % 5 == 4:
        error = mean_squared_error(y_holdout, regressor.predict(scaler.transform(X_holdout)))
        print(f"after {start + 200:4d} samples: holdout mse {error:.1f}")
