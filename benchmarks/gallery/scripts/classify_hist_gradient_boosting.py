"""Histogram gradient boosting on a synthetic problem, with early stopping."""
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import train_test_split

X, y = make_classification(n_samples=2000, n_features=20, n_informative=8, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

model = HistGradientBoostingClassifier(max_iter=100, learning_rate=0.1, early_stopping=True, random_state=0)
model.fit(X_train, y_train)
print("iterations", model.n_iter_)
print("accuracy", accuracy_score(y_test, model.predict(X_test)))
print("roc auc", roc_auc_score(y_test, model.predict_proba(X_test)[:, 1]))
