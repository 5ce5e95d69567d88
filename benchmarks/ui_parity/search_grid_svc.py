"""A grid search over an SVC's C and gamma on the digits, the best model scored on held-out data."""
from sklearn.datasets import load_digits
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.svm import SVC

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

search = GridSearchCV(SVC(), {"C": [1, 10], "gamma": [1e-3, 1e-4]}, cv=3)
search.fit(X_train, y_train)
print("best", search.best_params_, round(search.best_score_, 3))
print("accuracy", accuracy_score(y_test, search.predict(X_test)))
