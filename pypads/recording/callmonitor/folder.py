"""What a call database's folder holds: its functions and their call records, read as
possibly hostile input (every file inside the folder, JSON checked against the schema,
a malformed record one :class:`CallMonitorError` naming its file and line)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypads.core import CallMonitorError
from pypads.recording.callmonitor.records import FORMAT
from pypads.recording.callmonitor.untrusted import check, inside, json_lines, read_json


@dataclass
class CallRecord:
    record: dict[str, Any]
    folder: Path | None
    where: str
    """The record's file (and line) for error messages."""
    checked: bool = False


@dataclass
class FunctionRecords:
    info: dict[str, Any]
    calls: dict[int, CallRecord]


def read_database(root: Path) -> dict[str, FunctionRecords]:
    if not root.is_dir():
        raise CallMonitorError(f"{root} is not a folder")
    meta = root / "db.json"
    if not meta.exists():
        raise CallMonitorError(f"{root} is not a call database: it has no db.json")
    header = read_json(root, meta, str(meta))
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CallMonitorError(f"{root} is not a call database of format {FORMAT} (db.json: {str(header)[:200]})")
    check(header, "database", str(meta))
    functions = {}
    for entry in sorted(root.iterdir()):
        if entry.name == "objects" or not (entry.is_dir() or entry.is_symlink()):
            continue
        folder = inside(root, entry, str(entry))
        if folder.is_dir():
            functions[entry.name] = _read_function(root, entry.name, folder)
    return functions


def _read_function(root: Path, name: str, folder: Path) -> FunctionRecords:
    where = str(root / name / "function.json")
    info = read_json(root, folder / "function.json", where)
    check(info, "function", where)
    calls: dict[int, CallRecord] = {}
    for lines in sorted(folder.glob("calls*.jsonl")):
        shown = str(root / name / lines.name)
        for number, record in json_lines(root, lines, shown):
            if record is not None:  # None: the last line, torn by a kill
                call = CallRecord(record, None, f"{shown} line {number}")
                calls[_number(call)] = call
    for entry in sorted(folder.iterdir()):
        if re.fullmatch(r"[0-9]+", entry.name):
            shown = str(root / name / entry.name / "record.json")
            call_folder = inside(root, entry, shown)
            call = CallRecord(read_json(root, call_folder / "record.json", shown), call_folder, shown)
            if _number(call) != int(entry.name):
                raise CallMonitorError(f"{shown}: the record of call {call.record['n']} is in folder {entry.name}")
            calls[int(entry.name)] = call
    return FunctionRecords(info, dict(sorted(calls.items())))


def _number(call: CallRecord) -> int:
    """The call number of a record (the rest of it is checked when it is read)."""
    number = call.record.get("n") if isinstance(call.record, dict) else None
    if type(number) is not int or number < 1:
        raise CallMonitorError(f"{call.where}: not a record with a call number 'n' (a positive integer): "
                               f"{str(call.record)[:100]}")
    return number
