"""Mapping files: which attributes of which library fire which hooks."""

from pypads.mapping.files import load_mappings
from pypads.mapping.model import HookRule, MappingEntry, MappingFile
from pypads.mapping.reading import mapping_schema, parse_mapping, read_mapping_file

__all__ = [
    "HookRule",
    "MappingEntry",
    "MappingFile",
    "load_mappings",
    "mapping_schema",
    "parse_mapping",
    "read_mapping_file",
]
