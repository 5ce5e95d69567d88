"""Grid search over an SVC's C and gamma on the digits, then a report on held-out data."""
from sklearn.datasets import load_digits
from sklearn.metrics import classification_report
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.svm import SVC

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)

tuned_parameters = [
    {"kernel": ["rbf"], "gamma": [1e-3, 1e-4], "C": [1, 10, 100]},
    {"kernel": ["linear"], "C": [1, 10]},
]
search = GridSearchCV(SVC(), tuned_parameters, scoring="precision_macro", cv=3)
search.fit(X_train, y_train)
print("best parameters", search.best_params_, "score", round(search.best_score_, 3))
for mean, params in zip(search.cv_results_["mean_test_score"], search.cv_results_["params"]):
    print(f"{mean:.3f} for {params}")
print(classification_report(y_test, search.predict(X_test)))
