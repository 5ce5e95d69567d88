"""Mapping files: which attributes of which library fire which hooks."""

from pypads.mapping.files import load_mappings, mapping_schema, parse_mapping, read_mapping_file
from pypads.mapping.model import HookRule, MappingEntry, MappingFile

__all__ = [
    "HookRule",
    "MappingEntry",
    "MappingFile",
    "load_mappings",
    "mapping_schema",
    "parse_mapping",
    "read_mapping_file",
]
