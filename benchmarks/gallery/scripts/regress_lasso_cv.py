"""LassoCV and ElasticNetCV on the diabetes data: the chosen alpha and sparsity."""
from sklearn.datasets import load_diabetes
from sklearn.linear_model import ElasticNetCV, LassoCV
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

X, y = load_diabetes(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

lasso = LassoCV(cv=5, random_state=0).fit(X_train, y_train)
print("lasso alpha", lasso.alpha_, "non-zero", (lasso.coef_ != 0).sum(), "r2", r2_score(y_test, lasso.predict(X_test)))
enet = ElasticNetCV(l1_ratio=[0.2, 0.5, 0.8], cv=5, random_state=0).fit(X_train, y_train)
print("enet alpha", enet.alpha_, "l1 ratio", enet.l1_ratio_, "r2", r2_score(y_test, enet.predict(X_test)))
