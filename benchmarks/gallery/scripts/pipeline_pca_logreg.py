"""Dimensionality reduction then classification: PCA + logistic regression on the digits."""
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, classification_report
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

X_digits, y_digits = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X_digits, y_digits, random_state=0)

pipe = Pipeline(steps=[("scaler", StandardScaler()), ("pca", PCA(n_components=30)),
                       ("logistic", LogisticRegression(max_iter=2000, tol=0.1))])
pipe.fit(X_train, y_train)
predicted = pipe.predict(X_test)
print("explained variance", pipe.named_steps["pca"].explained_variance_ratio_.sum())
print("accuracy", accuracy_score(y_test, predicted))
print(classification_report(y_test, predicted))
