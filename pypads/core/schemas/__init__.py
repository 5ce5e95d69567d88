"""The JSON Schemas of every JSON artifact pypads writes, and a validator for them.

See ``docs/schemas.md``. Each document names its schema in ``"schema"`` (call-database
files are checked by their file name) and carries ``"provenance"``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator
    from referencing import Registry

PROVENANCE = "urn:pypads:schema:provenance:1"
PIPELINE_GRAPH = "urn:pypads:schema:pipeline-graph:1"
VALUE_SUMMARY = "urn:pypads:schema:value-summary:1"
CALLMONITOR = "urn:pypads:schema:callmonitor:1"
SYSTEM = "urn:pypads:schema:system:1"


@cache
def schemas() -> dict[str, dict[str, Any]]:
    """Every shipped schema by its ``$id``."""
    found = {}
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".schema.json"):
            document = json.loads(entry.read_text())
            found[document["$id"]] = document
    return found


# jsonschema and referencing are imported where they are first used, not above: they
# cost 50-100 ms, a third of a tracked script's start-up, which only reads documents back.

@cache
def _registry() -> Registry:
    from referencing import Registry, Resource  # deferred: see above

    return Registry().with_resources((uri, Resource.from_contents(schema)) for uri, schema in schemas().items())


def validator(schema_id: str, definition: str | None = None) -> Validator:
    """A validator of the schema ``schema_id`` (or one of its ``$defs``, for the
    call-database files); keep it to check many documents."""
    import jsonschema  # deferred: see above

    schema: dict[str, Any] = {"$ref": f"{schema_id}#/$defs/{definition}" if definition else schema_id}
    return jsonschema.Draft202012Validator(schema, registry=_registry())


def validate(document: Any, schema_id: str, definition: str | None = None) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``document`` follows the schema
    (or one of its ``$defs``, for the call-database files)."""
    validator(schema_id, definition).validate(document)


def most_relevant_error(checker: Validator, document: Any) -> ValidationError | None:
    """The error of ``document`` that best says what is wrong with it, or None."""
    from jsonschema.exceptions import best_match  # deferred: see above

    return best_match(checker.iter_errors(document))


def schema_error(document: Any, schema: dict[str, Any]) -> ValidationError | None:
    """The error of ``document`` against a schema of its own (a mapping file's, the
    config's) that best says what is wrong with it, or None."""
    import jsonschema  # deferred: see above

    return most_relevant_error(jsonschema.Draft202012Validator(schema), document)
