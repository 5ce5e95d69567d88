"""IncrementalPCA fitted batch by batch against PCA on the whole of the digits."""
import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA, IncrementalPCA

X, _ = load_digits(return_X_y=True)
incremental = IncrementalPCA(n_components=10)
for batch in np.array_split(X, 9):
    incremental.partial_fit(batch)
full = PCA(n_components=10).fit(X)
print("incremental explained variance", incremental.explained_variance_ratio_.sum().round(4))
print("full explained variance", full.explained_variance_ratio_.sum().round(4))
print("mean abs difference of projections", np.abs(np.abs(incremental.transform(X)) - np.abs(full.transform(X))).mean())
