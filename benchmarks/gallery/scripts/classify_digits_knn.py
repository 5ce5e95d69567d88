"""k nearest neighbours on the digits: accuracy for k from 1 to 15."""
from sklearn.datasets import load_digits
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

scores = {}
for k in range(1, 16, 2):
    knn = KNeighborsClassifier(n_neighbors=k)
    knn.fit(X_train, y_train)
    scores[k] = accuracy_score(y_test, knn.predict(X_test))
    print(f"k={k:2d} accuracy={scores[k]:.4f}")
print("best k", max(scores, key=scores.get))
