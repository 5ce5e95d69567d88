"""The model pages of a run, as the uploader sends them: each model the script fitted
saved as an MLflow model, with its scores linked to it and its pictures beside it.

Apart from :mod:`~pypads.to_mlflow.uploader.uploading`, which sends the journal's lines as they
come: a model's page is made of entries that arrive at different times (its
evaluations as it is fitted and scored, its state, its card and its child run as the
run ends), and this is what keeps them until the page can be made.
"""

from __future__ import annotations

import functools
import importlib
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pypads.to_mlflow.access import mlflow_connection
from pypads.to_mlflow.journal.format import stays_inside
from pypads.to_mlflow.journal.reading import JournalReader
from pypads.to_mlflow.timeouts import AnswerClock
from pypads.to_mlflow.uploader.reports import Warn

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

    from pypads.to_mlflow.uploader.evaluating import Evaluations


class StoreFailed(Exception):
    """MLflow's store failed while a page was sent: the journal must keep what is left."""

    def __init__(self, key: str, message: str, error: Exception) -> None:
        super().__init__(message)
        self.key, self.error = key, error


class ModelPages:
    """The model pages of the run in ``journal``.

    Args:
        journal: the run's journal, read for its models, cards and datasets.
        clock: times every MLflow call.
        warn: reports what is left out of a page, once per key.
        pictures: whether to draw the models' pictures (not on a thread of the script:
            matplotlib must not load into its process).
    """

    def __init__(self, journal: JournalReader, clock: AnswerClock, warn: Warn,
                 pictures: bool = True) -> None:
        self.journal = journal
        self._clock = clock
        self._warn = warn
        self._pictures = pictures
        self._saved: set[str] = set()  # keys of the models saved by this uploader
        self._unpictured: dict[str, bytes] = {}  # label -> a saved model, its own pictures not drawn yet
        self._charts: list[tuple[dict[str, Any], bytes]] = []  # "chart" entries and their tables, not drawn yet
        self.child_runs: dict[str, str] = {}  # model label -> its child run, when the run compares models

    @functools.cached_property
    def _evaluations(self) -> Evaluations:
        """Each model's training scores and pictures. Imported on first use: the script
        imports the uploader for its uploader thread, and needs none of it."""
        evaluating = importlib.import_module("pypads.to_mlflow.uploader.evaluating")
        found: Evaluations = evaluating.Evaluations(self._warn, self._pictures)
        return found

    def evaluate(self, client: MlflowClient, run_id: str, entries: list[dict[str, Any]]) -> None:
        """Score the evaluations of a batch, the latest of each model and dataset (a loop
        refitting one model scores its last state), their metrics into the run in one
        call; a model's pictures are drawn once it has a page. Only the store failing
        raises: a model that cannot be scored is a warning."""
        latest = {(str(entry.get("label")), str(entry.get("prefix")), entry.get("metrics") is False): entry
                  for entry in entries}  # text keys: an entry is read as untrusted JSON
        lines = []
        for entry in latest.values():
            try:
                lines += self._evaluations.add(entry, self.journal.entry_content(entry))
            except Exception as error:
                self._warn(f"evaluation:{entry.get('label')}",
                           f"pypads could not evaluate {entry.get('label')}: {type(error).__name__}: {error}")
        if lines:
            mlflow_connection.log_linked_metrics(client, run_id, lines, self.journal.dataset, self._warn,
                                                  self._clock.call)

    def add_charts(self, entries: list[dict[str, Any]]) -> None:
        """Keep "chart" entries (a table a mapping file's reading logged, see
        :meth:`Evaluations.add_chart`) until the pictures are drawn."""
        for entry in entries:
            table = self.journal.entry_content(entry)
            if table is not None:
                self._charts.append((entry, table))

    def with_scores(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Child run entries with their model's training scores among their metrics."""
        return [self._evaluations.with_scores(str(entry.get("model_label")), entry) or entry for entry in entries]

    def save_models(self, client: MlflowClient, run_id: str, experiment_id: str) -> None:
        """Save the final state of each estimator the script fitted as an MLflow model:
        once, as the run ends (a loop that refits one estimator saves it once). A model
        that cannot be saved is a warning; the store failing raises :class:`StoreFailed`."""
        versions: dict[str, str | None] = {}  # read once for all of this run's models
        of_child_runs: list[str] = []  # listed in the run too, all in one call
        for entry in self.journal.models():
            if entry["key"] not in self._saved:
                of_child_runs += self._save_model(client, run_id, experiment_id, entry, versions)
                self._saved.add(entry["key"])
        try:
            mlflow_connection.list_models(client, run_id, of_child_runs, self._clock.call)
        except Exception as error:
            raise StoreFailed("models", f"could not list the models of MLflow run {run_id} "
                              f"(kept in {self.journal.folder}): {error}", error) from error

    def _save_model(self, client: MlflowClient, run_id: str, experiment_id: str, entry: dict[str, Any],
                    versions: dict[str, str | None]) -> list[str]:
        """Save one model; returns its id if a child run is its source (the run lists it
        too). A model that cannot be saved is a warning; the store failing raises."""
        label = str(entry.get("label", ""))
        child = self.child_runs.get(label)
        try:
            pickled = self.journal.entry_content(entry)
            if pickled is None:
                return []
            model_id = mlflow_connection.log_model(client, run_id, entry, pickled, self._clock.call, child,
                                            experiment_id=experiment_id, versions=versions, card=self._card(label),
                                            dataset_of=self.journal.dataset, warn=self._warn)
        except Exception as error:
            if is_mlflow_error(error) and not _is_refusal(error):  # the store: keep the journal
                raise StoreFailed("models", f"could not save models of MLflow run {run_id} "
                                  f"(kept in {self.journal.folder}): {error}", error) from error
            # The model itself (refused, unreadable, a class that does not load here): it
            # would fail again, so it is left out, with a warning.
            self._warn(f"model:{entry['key']}", f"pypads could not save model {entry['name']!r}: "
                       f"{type(error).__name__}: {error}")
            return []
        self._unpictured[label] = pickled
        return [model_id] if child else []

    def plan_pictures(self) -> None:
        """Warn now of the pictures that will be skipped (see :meth:`Evaluations.plan`)."""
        self._evaluations.plan(self._labels())

    def upload_pictures(self, client: MlflowClient, run_id: str, between: Callable[[], object] = lambda: None) -> list[str]:
        """Draw each model's pictures and put them on its page: its child run's root when
        the run compares models, else the run's root (or ``<label>/`` when several models
        have pictures and no child run). Returns what could not be drawn or stored: this
        happens after the script has gone, with nobody to warn. ``between`` is called
        before each model's, or dataset's, pictures (it may wait)."""
        failures: list[str] = []
        for label, pickled in self._unpictured.items():
            between()
            try:
                failures += self._evaluations.add_model(label, pickled)
            except Exception as error:  # one model's pictures never cost the others'
                failures.append(f"pypads could not draw {label}: {type(error).__name__}: {error}")
        for entry, table in self._charts:
            between()
            failures += self._evaluations.add_chart(entry, table)
        self._charts.clear()
        try:
            failures += self._evaluations.draw(self._labels(), between)
        except Exception as error:  # a full or read-only temporary folder: no pictures
            failures.append(f"pypads could not draw the pictures of run {run_id}: {error}")
        self._unpictured.clear()
        drawn = self._evaluations.take_folders()
        try:
            for label, folder in drawn.items():
                child = self.child_runs.get(label)
                if not (child or len(drawn) == 1 or stays_inside(label)):  # a label from a hostile journal
                    failures.append(f"pypads left out the pictures of {label!r}: not a folder inside the run")
                    continue
                where = None if child or len(drawn) == 1 else label
                self._clock.call(client.log_artifacts, child or run_id, str(folder), where)
        except Exception as error:
            failures.append(f"could not store the pictures of MLflow run {run_id}: {error}")
        finally:
            for folder in drawn.values():
                shutil.rmtree(folder, ignore_errors=True)
        return failures

    def _labels(self) -> set[str]:
        """The labels of the models with a page."""
        return {str(entry.get("label")) for entry in self.journal.models()}

    def _card(self, label: str) -> dict[str, Any] | None:
        """The model's card, with its training scores: its page shows them too."""
        return self._evaluations.with_scores(label, self.journal.model_card(label))


def is_mlflow_error(error: Exception) -> bool:
    """Whether ``error`` came from MLflow's store or the way to it (not from a model)."""
    return type(error).__module__.startswith(("mlflow", "sqlalchemy", "requests", "urllib3"))


def _is_refusal(error: Exception) -> bool:
    return getattr(error, "error_code", None) == "INVALID_PARAMETER_VALUE"
