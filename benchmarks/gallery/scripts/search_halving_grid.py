"""Successive halving: HalvingGridSearchCV over an SVC."""
from sklearn.datasets import make_classification
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import HalvingGridSearchCV, train_test_split
from sklearn.svm import SVC

X, y = make_classification(n_samples=1000, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

param_grid = {"gamma": [0.001, 0.01, 0.1, 1], "C": [1, 10, 100]}
search = HalvingGridSearchCV(SVC(), param_grid, factor=2, random_state=0)
search.fit(X_train, y_train)
print("iterations", search.n_iterations_, "candidates", search.n_candidates_)
print("best", search.best_params_, "test score", search.score(X_test, y_test))
