"""An estimator's params and text as pypads reads them: the same as scikit-learn's."""

import math
import re

import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import all_estimators

from pypads.core import estimators

# Deprecated estimators are still shipped, and still read.
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def _every_estimator():
    for _name, kind in all_estimators():
        try:
            yield kind()
        except TypeError:  # needs arguments (a pipeline's steps, a search's estimator)
            continue


NESTED = [
    make_pipeline(StandardScaler(), DecisionTreeClassifier(max_depth=3)),
    GridSearchCV(make_pipeline(StandardScaler(), LogisticRegression(C=0.5)), {"logisticregression__C": [1, 2]}, cv=3),
    ColumnTransformer([("num", StandardScaler(), [0, 1]), ("f", FunctionTransformer(kw_args={"a": 1}), [2])]),
    DecisionTreeClassifier(ccp_alpha=math.nan, class_weight={0: 1, 1: 2}),
    LogisticRegression(C=1),  # an int where the default is the float 1.0: scikit-learn shows it
]


@pytest.mark.parametrize("deep", [False, True])
def test_the_params_are_scikit_learns_own_for_every_estimator_it_ships(deep):
    compared = 0
    for estimator in [*_every_estimator(), *NESTED]:
        theirs = estimator.get_params(deep=deep)
        ours = estimators.params(estimator, deep=deep)
        assert list(ours) == list(theirs), type(estimator).__name__
        assert all(ours[key] is value for key, value in theirs.items()), type(estimator).__name__
        compared += 1
    assert compared > 150


def test_the_text_says_what_scikit_learns_repr_says_on_one_line():
    for estimator in [*_every_estimator(), *NESTED]:
        theirs = re.sub(r"\s+", " ", repr(estimator)).replace("( ", "(").replace("[ ", "[")
        assert estimators.short_repr(estimator) == theirs


def test_a_class_whose_init_changes_later_is_read_again():
    class Tree(DecisionTreeClassifier):
        def __init__(self, depth=1):
            self.depth = depth

    assert estimators.params(Tree(depth=2)) == {"depth": 2}

    def wider(self, depth=1, width=3):
        self.depth, self.width = depth, width

    Tree.__init__ = wider
    assert estimators.params(Tree()) == {"depth": 1, "width": 3}
    assert estimators.short_repr(Tree(width=4)) == "Tree(width=4)"


def test_an_estimator_with_its_own_get_params_is_asked_as_it_asks():
    class Custom(DecisionTreeClassifier):
        def get_params(self, deep=True):
            return {"only": "this"}

    assert estimators.params(Custom(), deep=True) == {"only": "this"}


def test_varargs_in_init_raise_as_scikit_learn_raises():
    class Loose(DecisionTreeClassifier):
        def __init__(self, *layers):
            self.layers = layers

    with pytest.raises(RuntimeError, match="varargs"):
        Loose(1, 2).get_params()
    with pytest.raises(RuntimeError, match="varargs"):
        estimators.params(Loose(1, 2))


def test_the_text_reads_as_scikit_learns_for_values_it_shows_its_own_way():
    from sklearn import config_context
    from sklearn.feature_extraction.text import CountVectorizer

    cases = [CountVectorizer(ngram_range=(1, 1)),  # equal to its default, not the same tuple
             DecisionTreeClassifier(class_weight={1: 2, 0: 1}),  # a dict, sorted
             FunctionTransformer(kw_args={"values": list(range(100))})]  # a long list, cut
    for estimator in cases:
        assert estimators.short_repr(estimator) == re.sub(r"\s+", " ", repr(estimator)).replace("[ ", "[")
    with config_context(print_changed_only=False):
        assert estimators.short_repr(DecisionTreeClassifier()).count("=") == len(DecisionTreeClassifier().get_params())


def test_the_defaults_are_read_again_when_init_changes():
    class Tree(DecisionTreeClassifier):
        def __init__(self, depth=1):
            self.depth = depth

    assert estimators.short_repr(Tree()) == "Tree()"

    def deeper(self, depth=5, width=3):
        self.depth, self.width = depth, width

    Tree.__init__ = deeper
    assert estimators.short_repr(Tree()) == "Tree()"


def test_a_get_params_set_on_the_estimator_itself_is_asked():
    tree = DecisionTreeClassifier()
    tree.get_params = lambda deep=True: {"x": 1}
    assert estimators.params(tree) == {"x": 1}
