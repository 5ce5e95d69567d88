"""PCA and LDA projections of iris: explained variance and the projected data."""
from sklearn.datasets import load_iris
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

iris = load_iris()
X, y = iris.data, iris.target
pca = PCA(n_components=2)
X_r = pca.fit(X).transform(X)
lda = LinearDiscriminantAnalysis(n_components=2)
X_r2 = lda.fit(X, y).transform(X)
print("PCA explained variance ratio", pca.explained_variance_ratio_)
print("LDA explained variance ratio", lda.explained_variance_ratio_)
print("first projected rows", X_r[:3].round(2).tolist(), X_r2[:3].round(2).tolist())
