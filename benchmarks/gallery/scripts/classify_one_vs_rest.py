"""One-vs-rest and one-vs-one linear SVMs on the digits."""
from sklearn.datasets import load_digits
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=1)

for wrapper in (OneVsRestClassifier, OneVsOneClassifier):
    model = make_pipeline(StandardScaler(), wrapper(LinearSVC(C=0.1, random_state=0)))
    model.fit(X_train, y_train)
    print(wrapper.__name__, accuracy_score(y_test, model.predict(X_test)))
