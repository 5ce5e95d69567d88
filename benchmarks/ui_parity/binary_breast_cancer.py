"""A binary classifier: logistic regression on the breast cancer data, scored on held-out data."""
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=42)

model = LogisticRegression(max_iter=5000)
model.fit(X_train, y_train)
print("accuracy", accuracy_score(y_test, model.predict(X_test)))
