"""A hand-written loop over stratified folds, scoring each fold, as many notebooks do."""
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

X, y = load_breast_cancer(return_X_y=True)
accuracies, f1s = [], []
for fold, (train, test) in enumerate(StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(X, y)):
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[train], y[train])
    y_pred = model.predict(X[test])
    accuracies.append(accuracy_score(y[test], y_pred))
    f1s.append(f1_score(y[test], y_pred))
    print(f"fold {fold}: accuracy {accuracies[-1]:.3f} f1 {f1s[-1]:.3f}")
print(f"mean accuracy {np.mean(accuracies):.3f}, mean f1 {np.mean(f1s):.3f}")
