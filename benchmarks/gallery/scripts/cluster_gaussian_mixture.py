"""Gaussian mixture model selection by BIC over covariance types and component counts."""
import numpy as np
from sklearn.datasets import make_blobs
from sklearn.mixture import GaussianMixture

X, _ = make_blobs(n_samples=600, centers=3, cluster_std=[1.0, 2.0, 0.5], random_state=0)
best = (np.inf, None)
for covariance_type in ("spherical", "tied", "diag", "full"):
    for n_components in range(1, 6):
        gmm = GaussianMixture(n_components=n_components, covariance_type=covariance_type, random_state=0)
        gmm.fit(X)
        bic = gmm.bic(X)
        if bic < best[0]:
            best = (bic, (covariance_type, n_components))
print("best by BIC", best[1], "bic %.1f" % best[0])
