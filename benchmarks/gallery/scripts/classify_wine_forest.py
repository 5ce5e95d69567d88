"""A random forest on the wine data, with its feature importances."""
import numpy as np
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import balanced_accuracy_score, f1_score
from sklearn.model_selection import train_test_split

wine = load_wine()
X_train, X_test, y_train, y_test = train_test_split(wine.data, wine.target, random_state=0)

forest = RandomForestClassifier(n_estimators=100, random_state=0)
forest.fit(X_train, y_train)
y_pred = forest.predict(X_test)
print("balanced accuracy", balanced_accuracy_score(y_test, y_pred))
print("macro f1", f1_score(y_test, y_pred, average="macro"))
order = np.argsort(forest.feature_importances_)[::-1]
for index in order[:5]:
    print(f"{wine.feature_names[index]:30s} {forest.feature_importances_[index]:.3f}")
