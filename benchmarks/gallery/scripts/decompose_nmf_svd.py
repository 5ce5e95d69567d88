"""Faces-like parts: NMF, TruncatedSVD and FastICA on the digits, with reconstruction errors."""
import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import NMF, FastICA, TruncatedSVD

X, _ = load_digits(return_X_y=True)
for model in (NMF(n_components=16, init="nndsvda", max_iter=400, random_state=0),
              TruncatedSVD(n_components=16, random_state=0),
              FastICA(n_components=16, whiten="unit-variance", max_iter=400, random_state=0)):
    codes = model.fit_transform(X)
    reconstructed = model.inverse_transform(codes)
    print(f"{type(model).__name__:12s} reconstruction error {np.linalg.norm(X - reconstructed):.1f}")
