"""A pipeline on a DataFrame of numbers and categories: one-hot, scaling, logistic regression."""
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

rng = np.random.RandomState(0)
rows = 600
frame = pd.DataFrame({
    "age": rng.normal(40, 12, rows).round(),
    "income": rng.lognormal(10, 0.5, rows),
    "city": rng.choice(["north", "south", "east"], rows),
    "plan": rng.choice(["basic", "premium"], rows),
})
churned = ((frame["plan"] == "basic") ^ (rng.rand(rows) < 0.2)).astype(int)

preprocess = ColumnTransformer([
    ("numbers", StandardScaler(), ["age", "income"]),
    ("categories", OneHotEncoder(handle_unknown="ignore"), ["city", "plan"]),
])
model = Pipeline([("preprocess", preprocess), ("classifier", LogisticRegression())])

X_train, X_test, y_train, y_test = train_test_split(frame, churned, test_size=0.25, random_state=0)
model.fit(X_train, y_train)
print("accuracy", accuracy_score(y_test, model.predict(X_test)))
