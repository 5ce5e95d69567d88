"""Grid search over a pipeline: the number of PCA components and the regularisation."""
import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

pipe = Pipeline([("scaler", StandardScaler()), ("pca", PCA()), ("logistic", LogisticRegression(max_iter=2000, tol=0.1))])
param_grid = {"pca__n_components": [10, 20, 40], "logistic__C": np.logspace(-2, 2, 3)}
search = GridSearchCV(pipe, param_grid, cv=3)
search.fit(X_train, y_train)
print("best", search.best_params_, "cv score %.3f" % search.best_score_)
print("test accuracy", accuracy_score(y_test, search.predict(X_test)))
