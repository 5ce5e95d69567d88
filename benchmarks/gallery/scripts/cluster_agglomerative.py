"""Agglomerative clustering of the digits with four linkages."""
from sklearn.cluster import AgglomerativeClustering
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.metrics import normalized_mutual_info_score

X, y = load_digits(return_X_y=True)
X_reduced = PCA(n_components=16, random_state=0).fit_transform(X)
for linkage in ("ward", "average", "complete", "single"):
    clustering = AgglomerativeClustering(linkage=linkage, n_clusters=10)
    clustering.fit(X_reduced)
    print(f"{linkage:8s} nmi {normalized_mutual_info_score(y, clustering.labels_):.3f}")
