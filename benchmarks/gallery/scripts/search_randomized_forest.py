"""Randomized search over a random forest's hyper-parameters."""
from scipy.stats import randint
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score
from sklearn.model_selection import RandomizedSearchCV, train_test_split

X, y = make_classification(n_samples=800, n_features=20, n_informative=6, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

distributions = {"max_depth": [3, 5, None], "max_features": randint(1, 11), "min_samples_split": randint(2, 11),
                 "criterion": ["gini", "entropy"]}
search = RandomizedSearchCV(RandomForestClassifier(n_estimators=20, random_state=0), distributions, n_iter=8, cv=3,
                            random_state=0)
search.fit(X_train, y_train)
print("best", search.best_params_, "score %.3f" % search.best_score_)
print("test f1", f1_score(y_test, search.predict(X_test)))
