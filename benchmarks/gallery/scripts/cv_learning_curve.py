"""A learning curve: naive Bayes and an SVC on the digits, for growing training sets."""
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import ShuffleSplit, learning_curve
from sklearn.naive_bayes import GaussianNB
from sklearn.svm import SVC

X, y = load_digits(return_X_y=True)
cv = ShuffleSplit(n_splits=5, test_size=0.2, random_state=0)
for estimator in (GaussianNB(), SVC(gamma=0.001)):
    sizes, train_scores, test_scores = learning_curve(estimator, X, y, cv=cv, train_sizes=np.linspace(0.1, 1.0, 5))
    print(type(estimator).__name__)
    for size, train, test in zip(sizes, train_scores.mean(axis=1), test_scores.mean(axis=1)):
        print(f"  {size:5d} samples: train {train:.3f} test {test:.3f}")
