"""Mapping files: which attributes of which library fire which hooks."""

from pypads.core.mapping.files import load_mappings
from pypads.core.mapping.model import CallReading, DataReading, EvalSets, HookRule, MappingEntry, MappingFile, Recorder, Source
from pypads.core.mapping.reading import mapping_schema, parse_mapping, read_mapping_file

__all__ = [
    "CallReading",
    "DataReading",
    "EvalSets",
    "Recorder",
    "Source",
    "HookRule",
    "MappingEntry",
    "MappingFile",
    "load_mappings",
    "mapping_schema",
    "parse_mapping",
    "read_mapping_file",
]
