"""Call databases from someone else: loading, ``get()`` and ``replay()`` never read
outside the database's folder nor run anything the database chose, and every malformed
record is one CallMonitorError that names it. Each database here is crafted by hand in
a temporary folder, as an attacker (or a disk error) would leave it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import cloudpickle
import numpy as np
import pytest
from conftest import run_script, script_environment

from pypads.recording.callmonitor import CallMonitorError, Pickled, load

PROVENANCE = {"logger": "intercept", "pypads_version": "0", "mapping": None, "library": None}
FORMAT = "pypads-callmonitor/1"


def value(content: Any) -> dict[str, Any]:
    return {"kind": "json", "value": content}


def record(n: int, *args: Any, result: Any = None, **extra: Any) -> dict[str, Any]:
    return {"n": n, "args": [value(arg) for arg in args], "kwargs": {}, "duration": 0.001,
            "result": value(result), **extra}


class Crafted:
    """A database written by hand: ``m.f`` with inline calls and call folders."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir()
        (root / "objects").mkdir()
        self.write("db.json", {"format": FORMAT, "created": 0.0, "pid": 1, "provenance": PROVENANCE})
        self.function("m.f", "m", "f", ["x"])

    def write(self, relative: str, content: Any) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content if isinstance(content, str) else json.dumps(content))
        return path

    def function(self, folder: str, module: str, qualname: str, args: list[str], **extra: Any) -> None:
        self.write(f"{folder}/function.json", {"format": FORMAT, "module": module, "qualname": qualname, "args": args,
                                                "defaults": {}, "provenance": PROVENANCE, **extra})

    def lines(self, *records: Any, folder: str = "m.f") -> Path:
        return self.write(f"{folder}/calls.jsonl", "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))

    def call_folder(self, n: int, the_record: Any, folder: str = "m.f") -> Path:
        self.write(f"{folder}/{n}/record.json", the_record)
        return self.root / folder / str(n)


@pytest.fixture
def crafted(tmp_path: Path) -> Crafted:
    return Crafted(tmp_path / "db")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the database holding what an attacker wants read: a valid
    array, a pickle that would leave a marker, a valid record and function."""
    folder = tmp_path / "outside"
    folder.mkdir()
    np.save(folder / "secret.npy", np.array([42, 42]))
    (folder / "evil.pickle").write_bytes(cloudpickle.dumps(_Marker(str(tmp_path / "pickle-ran"))))
    (folder / "record.json").write_text(json.dumps(record(2, "secret")))
    (folder / "function.json").write_text(json.dumps({"format": FORMAT, "module": "m", "qualname": "g", "args": [],
                                                      "defaults": {}, "provenance": PROVENANCE}))
    (folder / "calls.jsonl").write_text(json.dumps(record(1, "secret")) + "\n")
    return folder


class _Marker:
    """Unpickling it creates a file: the proof that a pickle ran."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (Path(self.path),))


# --- replay runs nothing the database chose ------------------------------------------

@pytest.mark.parametrize("module, qualname, allow", [
    ("os", "system", ()),                       # the breach as reported
    ("os", "system", ("m",)),                    # the folder's name is not the module run
    ("pathlib", "os.system", ("pathlib",)),     # an allowed module that imports os
    ("subprocess", "os.system", ("subprocess",)),
])
def test_replay_of_a_crafted_function_name_runs_nothing(crafted, tmp_path, module, qualname, allow):
    marker = tmp_path / "marker"
    crafted.function("m.f", module, qualname, ["command"])
    crafted.lines(record(1, f"touch {marker}", result=0))
    db = load(crafted.root, allow_pickle=True)
    with pytest.raises(CallMonitorError) as raised:
        db.replay("f", 1, allow_modules=allow)
    assert not marker.exists()
    assert f"{module}.{qualname}" in str(raised.value)
    assert "function=" in str(raised.value)  # says what would allow a replay


def test_loading_and_get_never_unpickle_unless_asked(crafted, outside, tmp_path):
    crafted.write("m.f/1/arg_0.pickle", (outside / "evil.pickle").read_bytes())
    crafted.call_folder(1, {"n": 1, "args": [{"kind": "pickle", "file": "arg_0.pickle", "type": "x.Marker"}],
                            "kwargs": {}, "duration": 0, "result": value(None)})
    db = load(crafted.root)
    assert db.get("f", 1) == ([Pickled("x.Marker", "arg_0.pickle")], {})
    with pytest.raises(CallMonitorError, match=r"argument 0 is a pickled x\.Marker.*allow_pickle=True"):
        db.replay("f", 1, lambda marker: None)
    assert not (tmp_path / "pickle-ran").exists()
    load(crafted.root, allow_pickle=True).get("f", 1)  # consent given: the pickle runs
    assert (tmp_path / "pickle-ran").exists()


# --- nothing is read outside the folder -----------------------------------------------

def _array_at(crafted: Crafted, name: str) -> str:
    crafted.call_folder(1, {"n": 1, "args": [{"kind": "numpy", "object": name, "shape": [2], "dtype": "int64"}],
                            "kwargs": {}, "duration": 0, "result": value(None)})
    return str(crafted.root / "m.f" / "1" / "record.json")


def test_an_array_named_with_dots_is_refused(crafted, outside):
    where = _array_at(crafted, "../../outside/secret.npy")
    with pytest.raises(CallMonitorError, match="not a plain file name") as raised:
        load(crafted.root).get("f", 1)
    assert where in str(raised.value) and "args[0]" in str(raised.value)


def test_an_array_named_by_an_absolute_path_is_refused(crafted, outside):
    where = _array_at(crafted, str(outside / "secret.npy"))
    with pytest.raises(CallMonitorError, match="not a plain file name") as raised:
        load(crafted.root).get("f", 1)
    assert where in str(raised.value)


def test_an_object_that_is_a_link_out_of_the_folder_is_refused(crafted, outside):
    (crafted.root / "objects" / "a.npy").symlink_to(outside / "secret.npy")
    where = _array_at(crafted, "a.npy")
    with pytest.raises(CallMonitorError, match="leads outside the database") as raised:
        load(crafted.root).get("f", 1)
    assert where in str(raised.value)


def test_a_pickle_named_with_dots_is_refused_even_when_pickles_are_allowed(crafted, outside, tmp_path):
    where = crafted.call_folder(1, {"n": 1, "args": [{"kind": "pickle", "file": "../../../outside/evil.pickle",
                                                       "type": "x"}], "kwargs": {}, "duration": 0, "result": value(None)})
    with pytest.raises(CallMonitorError, match="not a plain file name") as raised:
        load(crafted.root, allow_pickle=True).get("f", 1)
    assert str(where / "record.json") in str(raised.value)
    assert not (tmp_path / "pickle-ran").exists()


def test_a_handler_target_with_a_path_is_refused(crafted):
    crafted.call_folder(1, {"n": 1, "args": [{"kind": "handler", "handler": "pypads.recording.callmonitor.handlers.NPHandler",
                                              "target": "../../../outside/secret"}],
                            "kwargs": {}, "duration": 0, "result": value(None)})
    with pytest.raises(CallMonitorError, match="handler target") as raised:
        load(crafted.root).get("f", 1)
    assert "m.f/1/record.json: args[0]" in str(raised.value)


def test_a_handlers_file_that_is_a_link_out_of_the_folder_is_refused(crafted, outside):
    folder = crafted.call_folder(1, {"n": 1, "args": [{"kind": "handler", "target": "0",
                                                       "handler": "pypads.recording.callmonitor.handlers.NPHandler"}],
                                     "kwargs": {}, "duration": 0, "result": value(None)})
    (folder / "arg_0.npy").symlink_to(outside / "secret.npy")
    with pytest.raises(CallMonitorError, match="leads outside the database") as raised:
        load(crafted.root).get("f", 1)
    assert "m.f/1/record.json: args[0]" in str(raised.value)


@pytest.mark.parametrize("link, target", [
    ("evil", ""),                 # a function folder
    ("m.f/2", ""),                # a call folder
    ("m.f/calls.jsonl", "calls.jsonl"),
    ("m.f/function.json", "function.json"),
])
def test_links_leading_out_of_the_folder_are_refused_at_load(crafted, outside, link, target):
    (crafted.root / "m.f" / "function.json").unlink() if link == "m.f/function.json" else None
    (crafted.root / link).symlink_to(outside / target if target else outside)
    with pytest.raises(CallMonitorError, match="leads outside the database") as raised:
        load(crafted.root)
    assert str(crafted.root / link) in str(raised.value)


def test_a_fifo_in_the_folder_is_refused_without_waiting(crafted, tmp_path):
    os.mkfifo(crafted.root / "m.f" / "calls.jsonl")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(f'''
        from pypads.recording.callmonitor import CallMonitorError, load
        try:
            load({str(crafted.root)!r})
        except CallMonitorError as error:
            print(error)
    ''')], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "calls.jsonl is not a regular file" in result.stdout


# --- every malformed record is one CallMonitorError naming it ---------------------------

LOAD_DAMAGE = {
    "truncated function.json": ("m.f/function.json", '{"format": "pypads-callmonitor/1", "mod', "m.f/function.json: not valid JSON"),
    "function.json of wrong types": ("m.f/function.json", {"format": FORMAT, "module": 3, "qualname": "f", "args": "x",
                                                           "defaults": {}, "provenance": PROVENANCE}, "m.f/function.json: at $."),
    "function.json without module": ("m.f/function.json", {"format": FORMAT, "qualname": "f", "args": [], "defaults": {},
                                                           "provenance": PROVENANCE}, "'module' is a required property"),
    "db.json of wrong types": ("db.json", {"format": FORMAT, "created": "today", "pid": 1, "provenance": PROVENANCE},
                               "db.json: at $.created"),
    "garbage line": ("m.f/calls.jsonl", json.dumps(record(1, 1)) + "\n\x00\xff garbage\n" + json.dumps(record(3, 3)) + "\n",
                     "m.f/calls.jsonl line 2: not valid JSON"),
    "deep nesting": ("m.f/calls.jsonl", "[" * 100_000 + "\n" + json.dumps(record(2, 2)) + "\n", "m.f/calls.jsonl line 1: not valid JSON"),
    "a line that is a list": ("m.f/calls.jsonl", "[1, 2]\n", "m.f/calls.jsonl line 1: not a record with a call number"),
    "a call number as text": ("m.f/calls.jsonl", json.dumps({**record(1, 1), "n": "1"}) + "\n", "m.f/calls.jsonl line 1: not a record"),
    "a call number true": ("m.f/calls.jsonl", json.dumps({**record(1, 1), "n": True}) + "\n", "m.f/calls.jsonl line 1: not a record"),
    "garbage record.json": ("m.f/4/record.json", b"\x80\x81 not json", "m.f/4/record.json: not valid JSON"),
    "record in the wrong folder": ("m.f/4/record.json", record(5, 1), "m.f/4/record.json: the record of call 5 is in folder 4"),
}


@pytest.mark.parametrize("damage", list(LOAD_DAMAGE))
def test_malformed_files_fail_loading_with_one_error_naming_them(crafted, damage):
    relative, content, message = LOAD_DAMAGE[damage]
    crafted.lines(record(1, 1))
    crafted.write(relative, content)
    with pytest.raises(CallMonitorError) as raised:
        load(crafted.root)
    assert str(crafted.root) in str(raised.value) and message in str(raised.value)


GET_DAMAGE = {
    "missing args": ({"n": 1, "kwargs": {}, "duration": 0, "result": value(1)}, "'args' is a required property"),
    "args as text": ({**record(1), "args": "abc"}, "at $.args: 'abc' is not of type 'array'"),
    "kwargs as a list": ({**record(1), "kwargs": [1]}, "at $.kwargs"),
    "a value without kind": ({**record(1), "args": [{"value": 1}]}, "'kind' is a required property"),
    "an unknown kind": ({**record(1), "args": [{"kind": "exec", "value": 1}]}, "at $.args[0].kind"),
    "numpy without object": ({**record(1), "args": [{"kind": "numpy"}]}, "args[0]: a numpy value without 'object'"),
    "numpy object as a number": ({**record(1), "args": [{"kind": "numpy", "object": 7}]}, "'object' of a numpy value is int"),
    "an object dtype scalar": ({**record(1), "args": [{"kind": "numpy_scalar", "dtype": "O", "value": 1}]}, "malformed numpy scalar"),
    "an overflowing scalar": ({**record(1), "args": [{"kind": "numpy_scalar", "dtype": "int8", "value": 10**6}]}, "malformed numpy scalar"),
    "a tuple of text": ({**record(1), "args": [{"kind": "json", "value": {"__tuple__": "abc"}}]}, "malformed JSON value"),
    "a handler in a line": ({**record(1), "args": [{"kind": "handler", "handler": "pypads.recording.callmonitor.handlers.NPHandler",
                                                    "target": "0"}]}, "a value kept in files, in a call that has no folder"),
    "an unregistered handler": ({**record(1), "args": [{"kind": "handler", "handler": "os.system", "target": "0"}]},
                                "no handler os.system in REGISTRY"),
}


@pytest.mark.parametrize("damage", list(GET_DAMAGE))
def test_malformed_records_fail_get_with_one_error_naming_them(crafted, damage):
    the_record, message = GET_DAMAGE[damage]
    crafted.lines(the_record)
    db = load(crafted.root)  # the database loads; the record fails when it is read
    with pytest.raises(CallMonitorError) as raised:
        db.get("f", 1)
    assert f"{crafted.root}/m.f/calls.jsonl line 1" in str(raised.value) and message in str(raised.value)


NOT_ARRAYS = ["pickled.npy", "huge.npy", "text.npy"]


@pytest.mark.parametrize("name", NOT_ARRAYS)
def test_npy_files_that_are_not_plain_arrays_are_refused(crafted, name):
    objects = crafted.root / "objects"
    np.save(objects / "pickled.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with (objects / "huge.npy").open("wb") as stream:  # a header announcing 8 TB over a file of a few bytes
        np.lib.format.write_array_header_2_0(stream, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
        stream.write(b"\0" * 64)
    (objects / "text.npy").write_text("hello")
    where = _array_at(crafted, name)
    with pytest.raises(CallMonitorError, match=f"objects/{name}: not a .npy file that loads without pickle") as raised:
        load(crafted.root, allow_pickle=True).get("f", 1)
    assert where in str(raised.value)


def test_argument_names_from_the_database_cannot_replace_attributes(crafted):
    crafted.function("m.f", "m", "f", ["__class__", "__dict__", "x"])
    crafted.lines(record(1, 1, 2, 3))
    args = load(crafted.root).get_args("f", 1)
    assert args.x == 3 and args.__class__.__name__ == "Args"


# --- issue 11 item 7: the README's replay and functions of a script's __main__ -----------------

README_SCRIPT = '''
from pypads import PyPads
from sklearn import datasets
from sklearn.tree import DecisionTreeClassifier

tracker = PyPads(config={"events": {"calls": {"on": ["pypads_fit", "pypads_predict"]}}})
X, y = datasets.load_iris(return_X_y=True)
model = DecisionTreeClassifier(random_state=0).fit(X, y)
print(tracker.run_id, ",".join(str(label) for label in model.predict(X[::10])))
'''


def test_the_readme_replay_explains_what_it_needs_then_works(tmp_path):
    (tmp_path / "home").mkdir()
    result = run_script(README_SCRIPT, tmp_path)
    assert result.returncode == 0, result.stderr
    run_id, predictions = result.stdout.split()
    uri = f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}"
    with pytest.raises(CallMonitorError, match=r"argument 0 is a pickled sklearn\.tree\..*DecisionTreeClassifier.*allow_pickle=True"):
        load(run_id, tracking_uri=uri).replay("DecisionTreeClassifier.predict", 1)
    trusted = load(run_id, allow_pickle=True, tracking_uri=uri)
    with pytest.raises(CallMonitorError, match=r"allow_modules=\['sklearn'\]"):
        trusted.replay("DecisionTreeClassifier.predict", 1)
    replay = trusted.replay("DecisionTreeClassifier.predict", 1, allow_modules=["sklearn"])
    assert replay.matches and ",".join(str(label) for label in replay.result) == predictions
    from sklearn.tree import DecisionTreeClassifier

    assert trusted.replay("DecisionTreeClassifier.predict", 1, DecisionTreeClassifier.predict).matches


def test_a_function_of_a_scripts_main_is_replayed_when_passed(tmp_path):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent('''
        from pypads.recording.callmonitor import intercept
        @intercept
        def area(width, height=2):
            return width * height
        area(3)
    ''')], cwd=tmp_path, env=script_environment(tmp_path), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    db = load(tmp_path / "call-monitor")
    with pytest.raises(CallMonitorError, match=r"pass the function itself: replay\('__main__.area', 1, function=…\)"):
        db.replay("area", 1)
    with pytest.raises(CallMonitorError, match="defined in the recording script's __main__"):
        db.replay("area", 1, allow_modules=["__main__"])

    def area(width, height=2):
        return width * height

    assert db.replay("area", 1, area).matches
