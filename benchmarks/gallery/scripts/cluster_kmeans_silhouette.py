"""Choosing the number of clusters for KMeans with the silhouette score."""
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import silhouette_score

X, y = make_blobs(n_samples=500, n_features=2, centers=4, cluster_std=1, center_box=(-10.0, 10.0), shuffle=True,
                  random_state=1)
for n_clusters in range(2, 7):
    clusterer = KMeans(n_clusters=n_clusters, n_init=10, random_state=10)
    cluster_labels = clusterer.fit_predict(X)
    print(f"n_clusters={n_clusters} silhouette={silhouette_score(X, cluster_labels):.3f} inertia={clusterer.inertia_:.0f}")
