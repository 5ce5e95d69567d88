"""Manifold embeddings of part of the digits: Isomap, LLE and spectral embedding."""
from sklearn.datasets import load_digits
from sklearn.manifold import Isomap, LocallyLinearEmbedding, SpectralEmbedding, trustworthiness

X, y = load_digits(n_class=6, return_X_y=True)
for embedding in (Isomap(n_neighbors=30, n_components=2),
                  LocallyLinearEmbedding(n_neighbors=30, n_components=2, random_state=0),
                  SpectralEmbedding(n_components=2, random_state=0)):
    projected = embedding.fit_transform(X)
    print(f"{type(embedding).__name__:24s} trustworthiness {trustworthiness(X, projected, n_neighbors=5):.3f}")
