"""Ridge coefficients and test error as the regularisation grows."""
import numpy as np
from sklearn.datasets import make_regression
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split

X, y, true_coef = make_regression(n_samples=200, n_features=10, n_informative=5, noise=10, coef=True, random_state=1)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=1)

for alpha in np.logspace(-3, 3, 13):
    ridge = Ridge(alpha=alpha)
    ridge.fit(X_train, y_train)
    error = mean_squared_error(y_test, ridge.predict(X_test))
    print(f"alpha={alpha:9.3f} mse={error:9.2f} |coef - true|={np.linalg.norm(ridge.coef_ - true_coef):8.2f}")
