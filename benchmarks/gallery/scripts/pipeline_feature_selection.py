"""Univariate feature selection before an SVM, for several numbers of features."""
from sklearn.datasets import load_breast_cancer
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import LinearSVC

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)

for k in (2, 5, 10, 20, 30):
    model = make_pipeline(MinMaxScaler(), SelectKBest(f_classif, k=k), LinearSVC(random_state=0))
    model.fit(X_train, y_train)
    print(f"k={k:2d} accuracy {accuracy_score(y_test, model.predict(X_test)):.3f}")
