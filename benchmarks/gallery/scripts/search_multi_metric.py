"""A grid search scored on AUC and accuracy at once, refit on AUC."""
from sklearn.datasets import make_hastie_10_2
from sklearn.metrics import make_scorer, accuracy_score
from sklearn.model_selection import GridSearchCV
from sklearn.tree import DecisionTreeClassifier

X, y = make_hastie_10_2(n_samples=1000, random_state=42)
scoring = {"AUC": "roc_auc", "Accuracy": make_scorer(accuracy_score)}
search = GridSearchCV(DecisionTreeClassifier(random_state=42), param_grid={"min_samples_split": range(2, 203, 40)},
                      scoring=scoring, refit="AUC", return_train_score=True, cv=3)
search.fit(X, y)
print("best", search.best_params_, "auc %.3f" % search.best_score_)
for split, auc, acc in zip(search.cv_results_["param_min_samples_split"], search.cv_results_["mean_test_AUC"],
                           search.cv_results_["mean_test_Accuracy"]):
    print(split, round(auc, 3), round(acc, 3))
