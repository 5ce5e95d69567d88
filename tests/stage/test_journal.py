"""The journal alone: what the script's side writes, the uploader's side reads back as
the batches it sends, from where the last upload stopped, artifacts byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pypads.to_mlflow.journal import JournalReader, JournalWriter, left_behind
from pypads.to_mlflow.journal.format import staging_name
from pypads.to_mlflow.store import RunTarget, Store


def new_journal(tmp_path: Path) -> tuple[JournalWriter, JournalReader]:
    target = RunTarget(Store("sqlite:///" + str(tmp_path / "mlflow.db"), tmp_path / "artifacts"), "experiment")
    writer = JournalWriter.create(target, tmp_path / "journal")
    return writer, JournalReader(writer.folder)


def test_entities_come_back_as_one_batch_params_first_written_kept(tmp_path):
    writer, reader = new_journal(tmp_path)
    writer.record({"kind": "params", "items": {"C": "1.0"}})
    writer.record({"kind": "params", "items": {"C": "2.0", "max_iter": "100"}})  # MLflow keeps a param's first value
    writer.record({"kind": "tags", "items": {"estimator_name": "Ridge"}})
    for step in (1, 2):
        writer.record_metric("loss", 1.0 / step, timestamp=1000 + step, step=step)
    writer.record_entry({"kind": "dataset", "name": "X_train", "digest": "0" * 16})
    batch = reader.read_new()
    assert batch.params == {"C": "1.0", "max_iter": "100"}
    assert batch.tags == {"estimator_name": "Ridge"}
    assert batch.metrics == [("loss", 1.0, 1001, 1), ("loss", 0.5, 1002, 2)]
    assert [dataset["name"] for dataset in batch.datasets] == ["X_train"]
    assert reader.meta()["experiment"] == "experiment" and reader.meta()["owns_run"] is True


def test_a_value_written_again_reads_the_same_and_signed_zeros_and_non_numbers_as_they_are(tmp_path):
    writer, reader = new_journal(tmp_path)
    values = [0.75, 0.75, 1 / 3, 0.0, -0.0, -0.0, 0.0, float("nan"), float("nan"), float("inf"), 0.75]
    for step, value in enumerate(values):
        writer.record_metric("score", value, timestamp=step, step=step)
    lines = (writer.folder / "entities.jsonl").read_bytes().rstrip(b"\0").splitlines()
    # each line as json.dumps writes it, whatever value came before
    assert [json.loads(line)["value"] for line in lines][:7] == values[:7]
    assert [str(json.loads(line)["value"]) for line in lines] == [repr(value) for value in values]
    assert [metric[1] for metric in reader.read_new().metrics][:7] == values[:7]


def test_reading_goes_on_from_the_last_committed_offset(tmp_path):
    writer, reader = new_journal(tmp_path)
    writer.record_metric("loss", 1.0, timestamp=1, step=1)
    first = reader.read_new()
    reader.commit(first.offset)
    writer.record_metric("loss", 0.5, timestamp=2, step=2)
    again = JournalReader(writer.folder)  # a recovery in another process starts from the commit
    assert again.read_new(again.committed()).metrics == [("loss", 0.5, 2, 2)]


def test_staged_artifacts_are_read_back_byte_for_byte_appends_in_order(tmp_path):
    writer, reader = new_journal(tmp_path)
    writer.stage("calls/fit.jsonl", b'{"call": 1}\n', append=True)
    writer.stage("calls/fit.jsonl", b'{"call": 2}\n', append=True)
    writer.stage("pipeline/graph.svg", b"<svg/>")
    large = bytes(range(256)) * 20_000  # larger than what is kept inline: a file of its own
    writer.stage("model.bin", large)
    batch = reader.read_new()
    assert batch.artifacts == {"calls/fit.jsonl", "pipeline/graph.svg", "model.bin"}
    for path, expected in (("calls/fit.jsonl", b'{"call": 1}\n{"call": 2}\n'), ("pipeline/graph.svg", b"<svg/>"),
                           ("model.bin", large)):
        out = tmp_path / path.replace("/", "_")
        assert reader.materialize(path, out) and out.read_bytes() == expected


def test_an_artifact_path_that_leaves_the_runs_artifacts_is_refused_on_both_sides(tmp_path):
    writer, reader = new_journal(tmp_path)
    for path in ("../escaped.txt", "label/../../escaped.txt", "/tmp/escaped.txt"):
        with pytest.raises(ValueError, match="leaves the run's artifacts"):
            writer.stage(path, b"x")
        with pytest.raises(ValueError, match="leaves the run's artifacts"):
            writer.stage(path, b"x" * 2_000_000)  # a file of its own
    # A hostile journal (lines written by hand): the uploader neither reads nor writes outside.
    outside = tmp_path / "secret.txt"
    outside.write_bytes(b"not the run's")
    writer.stage("inside.txt", b"in")
    with open(writer.folder / "entities.jsonl", "ab") as lines:
        lines.write(b'{"kind": "artifact", "path": "../../secret.txt", "file": true}\n')
        lines.write(b'{"kind": "artifact", "path": "../../written.txt", "append": false, "at": 0, "size": 2}\n')
    batch = reader.read_new()
    assert "inside.txt" in batch.artifacts
    upload = tmp_path / "upload" / "deep"
    upload.mkdir(parents=True)
    assert not reader.materialize("../../secret.txt", upload / "../../secret.txt")
    assert not reader.materialize("../../written.txt", upload / "../../written.txt")
    assert not (tmp_path / "written.txt").exists() and outside.read_bytes() == b"not the run's"
    assert reader.materialize("inside.txt", upload / "inside.txt") and (upload / "inside.txt").read_bytes() == b"in"


def test_a_status_set_by_the_script_is_what_a_recovery_ends_the_run_with(tmp_path):
    writer, reader = new_journal(tmp_path)
    assert reader.status() is None
    writer.set_status("FAILED")
    assert JournalReader(writer.folder).status() == "FAILED"
    writer.discard()
    assert not writer.folder.exists()


def test_a_journal_appears_only_complete_and_a_half_made_one_of_a_dead_process_is_removed(tmp_path):
    writer, _ = new_journal(tmp_path)
    root = writer.folder.parent
    assert [folder.name for folder in root.iterdir()] == [writer.folder.name]  # no staging folder left
    assert writer.meta()["experiment"] == "experiment"
    # A process killed while making a journal (SIGTERM during PyPads()) leaves its staging folder.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    half_made = root / staging_name("0" * 32, int(dead.stdout))
    half_made.mkdir()
    being_made = root / staging_name("1" * 32, os.getpid())  # a live process still making its journal
    being_made.mkdir()
    assert left_behind(root) == []  # neither is a journal to recover; the script's own is alive
    assert not half_made.exists() and being_made.exists()
