"""Five-fold cross_val_score for four models on the wine data."""
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

X, y = load_wine(return_X_y=True)
models = {
    "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
    "svc": make_pipeline(StandardScaler(), SVC()),
    "knn": make_pipeline(StandardScaler(), KNeighborsClassifier()),
    "forest": RandomForestClassifier(n_estimators=50, random_state=0),
}
for name, model in models.items():
    scores = cross_val_score(model, X, y, cv=5)
    print(f"{name:9s} {scores.mean():.3f} +/- {scores.std():.3f}")
