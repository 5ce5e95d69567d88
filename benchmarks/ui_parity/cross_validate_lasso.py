"""cross_validate of a lasso with two scores and the train scores, five folds."""
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso
from sklearn.model_selection import cross_validate

X, y = load_diabetes(return_X_y=True)
results = cross_validate(Lasso(alpha=0.1), X, y, cv=5, scoring=("r2", "neg_mean_squared_error"),
                         return_train_score=True)
print("test r2", results["test_r2"].round(3))
print("train r2", results["train_r2"].round(3))
