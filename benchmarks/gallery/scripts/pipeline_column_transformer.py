"""Mixed types: a DataFrame of numbers and categories through a ColumnTransformer."""
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

rng = np.random.RandomState(0)
n = 1000
frame = pd.DataFrame({
    "age": rng.normal(40, 12, n).round(),
    "fare": rng.lognormal(3, 1, n),
    "embarked": rng.choice(["C", "Q", "S"], n),
    "sex": rng.choice(["female", "male"], n),
    "pclass": rng.choice([1, 2, 3], n),
})
frame.loc[rng.rand(n) < 0.1, "age"] = np.nan
survived = ((frame["sex"] == "female") ^ (rng.rand(n) < 0.2)).astype(int)

numeric = Pipeline([("imputer", SimpleImputer(strategy="median")), ("scaler", StandardScaler())])
categorical = OneHotEncoder(handle_unknown="ignore")
preprocessor = ColumnTransformer([("num", numeric, ["age", "fare"]), ("cat", categorical, ["embarked", "sex", "pclass"])])
clf = Pipeline([("preprocessor", preprocessor), ("classifier", LogisticRegression())])

X_train, X_test, y_train, y_test = train_test_split(frame, survived, test_size=0.2, random_state=0)
clf.fit(X_train, y_train)
print("model score: %.3f" % clf.score(X_test, y_test))
print("accuracy", accuracy_score(y_test, clf.predict(X_test)))
