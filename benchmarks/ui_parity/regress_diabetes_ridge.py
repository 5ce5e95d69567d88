"""A regressor: ridge regression on the diabetes data, R² on held-out data."""
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

X, y = load_diabetes(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

ridge = Ridge(alpha=0.5)
ridge.fit(X_train, y_train)
print("r2", r2_score(y_test, ridge.predict(X_test)))
