"""The uploader files pictures only for the models that got a page, and draws equal
predictions once."""

from __future__ import annotations

import io

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

from pypads.to_mlflow import evaluation
from pypads.to_mlflow.uploader import evaluating
from pypads.to_mlflow.uploader.evaluating import Evaluations

PICTURES = {"training_confusion_matrix.png", "training_roc_curve.png", "training_precision_recall_curve.png"}


def evaluation_entry(label: str, model: DecisionTreeClassifier, X: np.ndarray, y: np.ndarray) -> tuple[dict, bytes]:
    """An "evaluation" journal entry and its content, as TrainingScores writes them."""
    buffer = io.BytesIO()
    np.savez(buffer, y_true=y, y_pred=model.predict(X), scores=model.predict_proba(X), classes=model.classes_)
    entry = {"kind": "evaluation", "label": label, "task": "classifier", "prefix": "training", "timestamp": 1,
             "default_score": "classifier"}
    return entry, buffer.getvalue()


@pytest.fixture
def drawings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The prefixes drawn, in order (scikit-learn's and matplotlib's real work, counted)."""
    drawn: list[str] = []
    draw = evaluation.pictures

    def counted(found: evaluation.Evaluation, prefix: str) -> tuple[dict[str, bytes], list[str]]:
        drawn.append(prefix)
        return draw(found, prefix)

    monkeypatch.setattr(evaluating.evaluation, "pictures", counted)
    return drawn


@pytest.fixture
def run_of_two_trees() -> Evaluations:
    X, y = load_iris(return_X_y=True)
    warnings: list[str] = []
    found = Evaluations(lambda key, message: warnings.append(message))
    for label, depth in (("shallow", 1), ("deep", None)):
        found.add(*evaluation_entry(label, DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y), X, y))
    yield found
    assert warnings == []
    for folder in found.take_folders().values():
        for file in folder.iterdir():
            file.unlink()
        folder.rmdir()


def test_pictures_are_filed_only_for_models_with_a_page(run_of_two_trees, drawings):
    run_of_two_trees.draw({"deep"})  # the run's end: only "deep" got a page
    assert len(drawings) == 1
    folders = run_of_two_trees.take_folders()
    assert list(folders) == ["deep"]
    assert {file.name for file in folders["deep"].iterdir()} == PICTURES
    run_of_two_trees.by_label["deep"].folder = folders["deep"]  # for the fixture's clean-up


def test_equal_predictions_are_drawn_once(drawings):
    X, y = load_iris(return_X_y=True)
    found = Evaluations(lambda key, message: None)
    for index in range(5):  # five fits of one tree in a loop, each a model of its own
        found.add(*evaluation_entry(f"tree_{index}", DecisionTreeClassifier(random_state=0).fit(X, y), X, y))
    found.draw({f"tree_{index}" for index in range(5)})
    folders = found.take_folders()
    assert len(drawings) == 1 and len(folders) == 5
    assert all({file.name for file in folder.iterdir()} == PICTURES for folder in folders.values())
    for folder in folders.values():
        for file in folder.iterdir():
            file.unlink()
        folder.rmdir()
