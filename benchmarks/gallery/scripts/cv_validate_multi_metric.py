"""cross_validate with several metrics, train scores and the fitted estimators."""
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso
from sklearn.model_selection import cross_validate

X, y = load_diabetes(return_X_y=True)
results = cross_validate(Lasso(alpha=0.1), X, y, cv=5, scoring=("r2", "neg_mean_squared_error"),
                         return_train_score=True, return_estimator=True)
print("test r2", results["test_r2"].round(3))
print("train r2", results["train_r2"].round(3))
print("test mse", -results["test_neg_mean_squared_error"].mean())
print("coefficients of fold 0", results["estimator"][0].coef_.round(1))
