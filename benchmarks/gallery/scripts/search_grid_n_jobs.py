"""A grid search with two worker processes: a gradient boosting classifier's depth and rate."""
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, train_test_split

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)

grid = {"max_depth": [2, 3], "learning_rate": [0.05, 0.2]}
search = GridSearchCV(GradientBoostingClassifier(n_estimators=30, random_state=0), grid, cv=3, scoring="roc_auc",
                      n_jobs=2)
search.fit(X_train, y_train)
print("best", search.best_params_, "cv auc %.4f" % search.best_score_)
print("test auc", roc_auc_score(y_test, search.predict_proba(X_test)[:, 1]))
