"""A clusterer: KMeans on generated blobs, judged by the silhouette score."""
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import silhouette_score

X, _ = make_blobs(n_samples=500, centers=4, random_state=1)
kmeans = KMeans(n_clusters=4, n_init=10, random_state=0)
labels = kmeans.fit_predict(X)
print("silhouette", silhouette_score(X, labels))
