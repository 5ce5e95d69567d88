"""Out-of-core learning: an SGDClassifier trained with partial_fit on mini-batches, scored each epoch."""
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

classifier = SGDClassifier(loss="log_loss", alpha=1e-4, random_state=0)
classes = np.unique(y)
rng = np.random.RandomState(0)
for epoch in range(5):
    order = rng.permutation(len(X_train))
    for batch in np.array_split(order, 10):
        classifier.partial_fit(X_train[batch], y_train[batch], classes=classes)
    print(f"epoch {epoch}: test accuracy {accuracy_score(y_test, classifier.predict(X_test)):.3f}")
