"""Concatenating PCA components and selected features with a FeatureUnion."""
from sklearn.datasets import load_iris
from sklearn.decomposition import PCA
from sklearn.feature_selection import SelectKBest
from sklearn.model_selection import train_test_split
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.svm import SVC

X, y = load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

combined = FeatureUnion([("pca", PCA(n_components=2)), ("univ_select", SelectKBest(k=1))])
features = combined.fit(X_train, y_train).transform(X_train)
print("combined space has", features.shape[1], "features")
pipeline = Pipeline([("features", combined), ("svm", SVC(kernel="linear"))])
pipeline.fit(X_train, y_train)
print("test accuracy", pipeline.score(X_test, y_test))
