"""Scaled logistic regression on the breast cancer data: probabilities, ROC AUC, log loss."""
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=42)

model = make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=1000))
model.fit(X_train, y_train)
proba = model.predict_proba(X_test)[:, 1]
print("accuracy", accuracy_score(y_test, model.predict(X_test)))
print("roc auc", roc_auc_score(y_test, proba))
print("log loss", log_loss(y_test, proba))
coefficients = model[-1].coef_[0]
for name, value in sorted(zip(X.columns, coefficients), key=lambda item: -abs(item[1]))[:5]:
    print(f"{name:30s} {value:+.2f}")
