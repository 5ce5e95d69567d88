"""DBSCAN on blobs: clusters found, noise, and agreement with the truth."""
from sklearn.cluster import DBSCAN
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score, homogeneity_score, v_measure_score
from sklearn.preprocessing import StandardScaler

centers = [[1, 1], [-1, -1], [1, -1]]
X, labels_true = make_blobs(n_samples=750, centers=centers, cluster_std=0.4, random_state=0)
X = StandardScaler().fit_transform(X)
db = DBSCAN(eps=0.3, min_samples=10).fit(X)
labels = db.labels_
print("clusters", len(set(labels)) - (1 if -1 in labels else 0), "noise points", list(labels).count(-1))
print("homogeneity %.3f" % homogeneity_score(labels_true, labels))
print("v-measure %.3f" % v_measure_score(labels_true, labels))
print("adjusted rand %.3f" % adjusted_rand_score(labels_true, labels))
