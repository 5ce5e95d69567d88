"""A single regression tree against a random forest and extra trees on synthetic data."""
from sklearn.datasets import make_regression
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.metrics import mean_absolute_error, r2_score
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

X, y = make_regression(n_samples=1000, n_features=8, noise=20, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

for model in (DecisionTreeRegressor(random_state=0),
              RandomForestRegressor(n_estimators=50, random_state=0),
              ExtraTreesRegressor(n_estimators=50, random_state=0)):
    model.fit(X_train, y_train)
    y_pred = model.predict(X_test)
    print(f"{type(model).__name__:24s} r2={r2_score(y_test, y_pred):.3f} mae={mean_absolute_error(y_test, y_pred):.1f}")
