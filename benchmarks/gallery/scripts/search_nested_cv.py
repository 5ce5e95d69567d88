"""Nested cross-validation: a grid search inside cross_val_score, against the non-nested score."""
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.svm import SVC

X_iris, y_iris = load_iris(return_X_y=True)
p_grid = {"C": [1, 10, 100], "gamma": [0.01, 0.1]}
svm = SVC(kernel="rbf")

inner_cv = KFold(n_splits=4, shuffle=True, random_state=0)
outer_cv = KFold(n_splits=4, shuffle=True, random_state=0)
clf = GridSearchCV(estimator=svm, param_grid=p_grid, cv=inner_cv)
clf.fit(X_iris, y_iris)
non_nested = clf.best_score_
nested = cross_val_score(clf, X=X_iris, y=y_iris, cv=outer_cv).mean()
print(f"non-nested {non_nested:.4f} nested {nested:.4f} difference {non_nested - nested:.4f}")
