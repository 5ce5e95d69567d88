"""What a mapping file says, once validated: entries that select attributes for hooks."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version


@dataclass(frozen=True)
class HookRule:
    """Which attributes of a mapped object fire one hook.

    ``always`` selects every public callable; ``names`` match the attribute name and
    ``packages`` the module that defines the attribute (the seed's PackageNameHook).
    Patterns must match the whole name.
    """

    hook: str
    always: bool = False
    names: tuple[re.Pattern[str], ...] = ()
    packages: tuple[re.Pattern[str], ...] = ()

    def selects(self, attribute: str, module: str) -> bool:
        """Whether the attribute named ``attribute``, defined in ``module``, fires the hook."""
        if self.always:
            return not attribute.startswith("_")
        if any(pattern.fullmatch(attribute) for pattern in self.names):
            return True
        return any(pattern.fullmatch(module) for pattern in self.packages)


@dataclass(frozen=True)
class Step:
    """An attribute of a source's path, and whether it is called (with which keywords)."""

    attribute: str
    called: bool = False
    keywords: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Source:
    """Where a reading finds a value: ``result``, ``instance``, an argument
    (``arguments.evals_result``) or what pypads recorded during the call (``recorded``),
    then attributes, each maybe called, without arguments (``instance.evals_result()``)
    or with keywords whose values are words (``result.get_score(importance_type='gain')``)."""

    text: str
    root: str
    """``result``, ``instance``, ``recorded`` or ``arguments``."""
    argument: str | None
    """The argument's name, for ``arguments.<name>``; None for ``arguments`` alone (all of them)."""
    steps: tuple[Step, ...]
    """Attribute names, each with whether it is called and how."""
    label: str | None = None
    """What its value is called (a scalar's metric name), if not its last attribute's name."""
    absent_if: float | None = None
    """The value by which the library says there is none (LightGBM's ``best_iteration_`` 0)."""

    @property
    def name(self) -> str:
        """What a scalar read from here is called: its label, else the last attribute's
        or the argument's name."""
        if self.label is not None:
            return self.label
        return self.steps[-1].attribute if self.steps else (self.argument or self.root)


@dataclass(frozen=True)
class Recorder:
    """How pypads has a library record its training history during a call: pass a new
    dict as the keyword ``argument`` when the caller passed none (XGBoost's
    ``evals_result``); or, with ``append``, append what the library's function named
    ``append`` makes of a new dict to the list ``argument`` (LightGBM's
    ``callbacks=[record_evaluation(d)]``). Either way the dict is ``recorded``."""

    argument: str
    append: str | None = None


@dataclass(frozen=True)
class DataReading:
    """The data a call trains on, where no argument is an array the Datasets logger
    would see (an XGBoost ``DMatrix``, a LightGBM ``Dataset``, a statsmodels model's
    own data): read before the call, and known by the object its features source
    starts from (the ``DMatrix``), so that the same object is read once."""

    features: Source
    targets: Source | None = None


@dataclass(frozen=True)
class EvalSets:
    """Where a call's evaluation sets are, and the names its curves begin with: ``sets``
    gives ``(set, name)`` pairs (XGBoost's ``evals``), or, with ``names``, the sets and
    their names as two lists (LightGBM's ``valid_sets`` and ``valid_names``; a set without a
    name is called as the library calls it: ``unnamed``, or ``training`` for its training data)."""

    sets: Source
    names: Source | None = None
    unnamed: str | None = None
    """The library's name for a set without one in ``names``; ``{index}`` is its place."""
    training: str | None = None
    """The library's name for the training data given as an evaluation set without one."""


@dataclass(frozen=True)
class CallReading:
    """What a mapping file says to read of one attribute's calls, for the libraries
    whose models are no scikit-learn estimators (a native ``train``): which arguments
    are the params, what the fitted model is and which flavour of MLflow saves it,
    which values are training curves (per-step metrics: a mapping of names to
    sequences, nested or not, or a DataFrame's columns) and which are single values."""

    params: tuple[Source, ...] = ()
    """Where the params are: an argument (``arguments.params``) or a value read of the
    call; a mapping gives its items."""
    model: str | None = None
    """``result`` or ``instance``: the fitted model, saved among the run's models."""
    flavour: str | None = None
    """The MLflow flavour that saves the model (``xgboost``: ``mlflow.xgboost``)."""
    curves: tuple[Source, ...] = ()
    scalars: tuple[Source, ...] = ()
    record: Recorder | None = None
    tables: tuple[tuple[str, tuple[tuple[str, Source], ...]], ...] = ()
    """CSV artifacts: (table name, ((column name, source), …))."""
    texts: tuple[tuple[str, Source], ...] = ()
    """Text artifacts: (name, source)."""
    charts: tuple[tuple[str, str], ...] = ()
    """(table name, column): a bar chart of the table's top 20 rows by that column."""
    data: tuple[DataReading, ...] = ()
    """The data trained on, as a dataset input: the first alternative whose features
    have a value (see :class:`DataReading`)."""
    evals: EvalSets | None = None
    """The evaluation sets, to link each curve to the dataset it was computed on."""


@dataclass(frozen=True)
class MappingEntry:
    """One entry of ``algorithms``: a class, function or module and its hook rules."""

    name: str
    other_names: tuple[str, ...]
    target: str
    rules: tuple[HookRule, ...]
    source: str
    # Where the entry stands in its file ("$.algorithms[0]"), for error messages.
    json_path: str = "$"
    # Attribute name -> what to read of its calls (see CallReading).
    readings: tuple[tuple[str, CallReading], ...] = ()

    # Every class scikit-learn defines after PyPads() is matched attribute by attribute,
    # and the same names (fit, predict, get_params…) come back in each: 160 classes made
    # 30,000 pattern matches, a sixth of a second of the script's start. The answers are
    # kept per entry, by attribute name and module: a frozen dataclass rehashes all its
    # rules at every lookup of a key that holds them.
    _answers: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def reading_for(self, attribute: str) -> CallReading | None:
        """What to read of calls of ``attribute``, if the entry says."""
        return next((reading for name, reading in self.readings if name == attribute), None)

    def hooks_for(self, attribute: str, value: Any) -> frozenset[str]:
        """The hooks the attribute ``attribute`` (whose value is ``value``) fires."""
        module = (getattr(value, "__module__", None) or "") if any(rule.packages for rule in self.rules) else ""
        key = (attribute, module)
        hooks = self._answers.get(key)
        if hooks is None:
            hooks = self._answers[key] = frozenset(rule.hook for rule in self.rules if rule.selects(attribute, module))
        return hooks


@dataclass(frozen=True)
class MappingFile:
    """A validated mapping file for one library and a range of its versions."""

    source: str
    library: str
    # The names the library may be installed under, in order: one module can come from
    # several distributions (xgboost and xgboost-cpu).
    distributions: tuple[str, ...]
    library_versions: SpecifierSet
    mapping_version: Version
    author: str
    entries: tuple[MappingEntry, ...]

    @property
    def distribution(self) -> str:
        """The library's usual distribution name, for messages."""
        return self.distributions[0]

    def serves(self, installed: Version) -> bool:
        return self.library_versions.contains(installed, prereleases=True)


def reading_among(entries: Iterable[MappingEntry], attribute: str) -> CallReading | None:
    """What the first of ``entries`` that says so reads of calls of ``attribute``."""
    return next((reading for entry in entries if (reading := entry.reading_for(attribute)) is not None), None)
