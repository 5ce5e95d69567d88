"""A multi-class classifier: a random forest on iris, scored on held-out data."""
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import train_test_split

X, y = load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

forest = RandomForestClassifier(n_estimators=50, max_depth=4, random_state=0)
forest.fit(X_train, y_train)
y_pred = forest.predict(X_test)
print("accuracy", accuracy_score(y_test, y_pred))
print("macro f1", f1_score(y_test, y_pred, average="macro"))
