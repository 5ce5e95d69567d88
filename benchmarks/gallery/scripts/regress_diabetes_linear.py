"""Ordinary least squares on the diabetes data: coefficients, MSE and R²."""
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score

X, y = load_diabetes(return_X_y=True)
X_train, X_test = X[:-20], X[-20:]
y_train, y_test = y[:-20], y[-20:]

regression = LinearRegression()
regression.fit(X_train, y_train)
y_pred = regression.predict(X_test)
print("coefficients", regression.coef_.round(1))
print("mean squared error", mean_squared_error(y_test, y_pred))
print("r2", r2_score(y_test, y_pred))
