"""MiniBatchKMeans fed in chunks with partial_fit, compared with KMeans."""
import numpy as np
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

X, labels_true = make_blobs(n_samples=3000, centers=[[1, 1], [-1, -1], [1, -1]], cluster_std=0.7, random_state=0)
kmeans = KMeans(n_clusters=3, n_init=10, random_state=0).fit(X)
minibatch = MiniBatchKMeans(n_clusters=3, random_state=0, n_init=3)
for chunk in np.array_split(X, 30):
    minibatch.partial_fit(chunk)
print("KMeans ARI", adjusted_rand_score(labels_true, kmeans.labels_))
print("MiniBatchKMeans ARI", adjusted_rand_score(labels_true, minibatch.predict(X)))
