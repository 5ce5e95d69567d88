"""The JSON Schemas of every JSON artifact pypads writes, and a validator for them.

See ``docs/schemas.md``. Each document names its schema in ``"schema"`` (call-database
files are checked by their file name) and carries ``"provenance"``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource

PROVENANCE = "urn:pypads:schema:provenance:1"
PIPELINE_GRAPH = "urn:pypads:schema:pipeline-graph:1"
VALUE_SUMMARY = "urn:pypads:schema:value-summary:1"
CALLMONITOR = "urn:pypads:schema:callmonitor:1"


@cache
def schemas() -> dict[str, dict[str, Any]]:
    """Every shipped schema by its ``$id``."""
    found = {}
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".schema.json"):
            document = json.loads(entry.read_text())
            found[document["$id"]] = document
    return found


@cache
def _registry() -> Registry:
    return Registry().with_resources((uri, Resource.from_contents(schema)) for uri, schema in schemas().items())


def validate(document: Any, schema_id: str, definition: str | None = None) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``document`` follows the schema
    (or one of its ``$defs``, for the call-database files)."""
    schema: dict[str, Any] = {"$ref": f"{schema_id}#/$defs/{definition}" if definition else schema_id}
    jsonschema.Draft202012Validator(schema, registry=_registry()).validate(document)
