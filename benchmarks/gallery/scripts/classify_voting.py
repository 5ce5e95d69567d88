"""Soft voting over three classifiers on iris, each scored alone and together."""
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier, VotingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

X, y = load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=3)

members = [
    ("lr", LogisticRegression(max_iter=1000)),
    ("rf", RandomForestClassifier(n_estimators=50, random_state=1)),
    ("gnb", GaussianNB()),
]
for name, member in members:
    member.fit(X_train, y_train)
    print(name, accuracy_score(y_test, member.predict(X_test)))
voting = VotingClassifier(estimators=members, voting="soft")
voting.fit(X_train, y_train)
print("voting", accuracy_score(y_test, voting.predict(X_test)))
