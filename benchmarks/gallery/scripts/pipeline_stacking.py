"""Stacking regressors on the diabetes data, against each base model."""
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor, StackingRegressor
from sklearn.linear_model import LassoCV, RidgeCV
from sklearn.metrics import mean_absolute_error, r2_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

X, y = load_diabetes(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=42)

estimators = [
    ("lasso", make_pipeline(StandardScaler(), LassoCV(cv=3, random_state=42))),
    ("forest", RandomForestRegressor(n_estimators=20, random_state=42)),
    ("gbdt", HistGradientBoostingRegressor(max_iter=30, random_state=0)),
]
stacking = StackingRegressor(estimators=estimators, final_estimator=RidgeCV(), cv=3)
for name, model in [*estimators, ("stacking", stacking)]:
    model.fit(X_train, y_train)
    y_pred = model.predict(X_test)
    print(f"{name:9s} r2 {r2_score(y_test, y_pred):.3f} mae {mean_absolute_error(y_test, y_pred):.1f}")
