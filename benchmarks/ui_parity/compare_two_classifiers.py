"""Two classifiers compared: a random forest and a logistic regression on the same test set."""
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

X, y = load_wine(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)

forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(X_train, y_train)
logistic = LogisticRegression(max_iter=5000).fit(X_train, y_train)
for name, model in (("forest", forest), ("logistic", logistic)):
    print(name, accuracy_score(y_test, model.predict(X_test)))
