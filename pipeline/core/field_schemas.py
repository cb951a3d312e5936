"""The schemas ``--schema`` and ``web_extract(schema=…)`` take: built-in ones by name, or a
user's JSON Schema (a file, a dict, a pydantic model), checked once and carried as canonical
JSON text (picklable, hashable: it crosses into handler workers inside the options).

A schema describes one object: its ``properties`` are the record's ``fields``. A schema that
is not valid JSON Schema, or that names no properties, is a ``config`` error in one line.
``jsonschema`` is imported only when a schema is given.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipeline.core.errors import PipelineError

_TEXT: dict[str, Any] = {"type": ["string", "null"]}
_NUMBER: dict[str, Any] = {"type": ["number", "null"]}
_COUNT: dict[str, Any] = {"type": ["integer", "null"], "minimum": 0}
_DATE: dict[str, Any] = {"type": ["string", "null"], "description": "ISO 8601"}
_URL: dict[str, Any] = {"type": ["string", "null"], "pattern": "^https?://"}
_TEXTS: dict[str, Any] = {"type": ["array", "null"], "items": {"type": "string"}}
AVAILABILITY = ("InStock", "OutOfStock", "PreOrder", "PreSale", "BackOrder", "Discontinued",
                "LimitedAvailability", "InStoreOnly", "OnlineOnly", "SoldOut", "MadeToOrder",
                "Reserved")


def _object(title: str, properties: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title,
            "type": "object", "properties": properties}


BUILTIN: dict[str, dict[str, Any]] = {
    "product": _object("product", {
        "name": _TEXT,
        "price": {"type": ["string", "null"], "pattern": r"^\d+(\.\d+)?$",
                  "description": "decimal string"},
        "currency": {"type": ["string", "null"], "pattern": "^[A-Z]{3}$",
                     "description": "ISO 4217"},
        "availability": {"enum": [*AVAILABILITY, None], "description": "schema.org name"},
        "sku": _TEXT, "gtin": {"type": ["string", "null"], "pattern": r"^\d{8,14}$"},
        "mpn": _TEXT, "brand": _TEXT, "image": _URL,
        "rating": _NUMBER, "review_count": _COUNT,
    }),
    "article": _object("article", {
        "title": _TEXT, "byline": _TEXT, "published": _DATE, "modified": _DATE,
        "language": _TEXT,
    }),
    "recipe": _object("recipe", {
        "name": _TEXT, "description": _TEXT, "authors": _TEXTS, "ingredients": _TEXTS,
        "instructions": _TEXTS, "prep_time": _TEXT, "cook_time": _TEXT, "total_time": _TEXT,
        "yield": _TEXT, "image": _URL, "rating": _NUMBER,
    }),
    "event": _object("event", {
        "name": _TEXT, "start": _DATE, "end": _DATE, "location": _TEXT, "address": _TEXT,
        "organizer": _TEXT, "status": _TEXT, "url": _URL, "price": _NUMBER, "currency": _TEXT,
    }),
    "job": _object("job", {
        "title": _TEXT, "organization": _TEXT, "location": _TEXT, "employment_type": _TEXTS,
        "posted": _DATE, "valid_through": _DATE, "salary_min": _NUMBER, "salary_max": _NUMBER,
        "salary_currency": _TEXT, "salary_unit": _TEXT,
        "remote": {"type": ["boolean", "null"]},
    }),
}
MAX_SCHEMA_CHARS = 200_000
MAX_PROPERTIES = 200


def check_schema(schema: Any, where: str = "schema") -> dict[str, Any]:
    """``schema`` when it is a valid JSON Schema of an object with properties; else a
    one-line ``config`` error naming ``where``."""
    if not isinstance(schema, dict):
        raise PipelineError("config", f"{where}: a JSON Schema is an object, not "
                            f"{type(schema).__name__}")
    from jsonschema import exceptions, validators

    try:
        validators.validator_for(schema, default=validators.Draft202012Validator
                                 ).check_schema(schema)
    except exceptions.SchemaError as exc:
        path = "/".join(str(p) for p in exc.path) or "top level"
        raise PipelineError("config", f"{where}: not a valid JSON Schema at {path}: "
                            f"{exc.message}"[:300]) from None
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        raise PipelineError("config", f"{where}: the schema names no properties (an object "
                            "schema with 'properties' gives the record's fields)")
    if len(properties) > MAX_PROPERTIES:
        raise PipelineError("config", f"{where}: more than {MAX_PROPERTIES} properties")
    return schema


def schema_text(spec: Any, *, files: bool = True) -> str:
    """Canonical JSON text of a schema given as a built-in name, a file path (only with
    ``files``: an agent's request never names a file on the server), JSON text, a dict or
    a pydantic model class; ``config`` error when it is none of these or not valid."""
    if isinstance(spec, str):
        if spec.lstrip().startswith("{"):  # already a schema's JSON text
            return _from_json(spec, "schema")
        if not files and spec.strip().lower() not in BUILTIN:
            raise PipelineError("config", f"schema: {spec[:80]!r} is neither a built-in "
                                f"schema ({', '.join(BUILTIN)}) nor a JSON Schema object")
        return _named_or_file(spec)
    json_schema = getattr(spec, "model_json_schema", None)
    if callable(json_schema):
        spec = json_schema()
    return json.dumps(check_schema(spec), ensure_ascii=False)


@lru_cache(maxsize=32)
def _named_or_file(spec: str) -> str:
    name = spec.strip().lower()
    if name in BUILTIN:
        return json.dumps(BUILTIN[name])
    path = Path(spec)
    if path.suffix.lower() != ".json" and not path.exists():
        raise PipelineError("config", f"{spec!r} is neither a built-in schema "
                            f"({', '.join(BUILTIN)}) nor a .json file")
    try:
        raw = path.read_text(encoding="utf-8")[: MAX_SCHEMA_CHARS + 1]
    except OSError as exc:
        raise PipelineError("config", f"cannot read {spec}: "
                            f"{exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PipelineError("config", f"{spec} is not UTF-8 text") from None
    if len(raw) > MAX_SCHEMA_CHARS:
        raise PipelineError("config", f"{spec} is larger than "
                            f"{MAX_SCHEMA_CHARS} characters")
    return _from_json(raw, spec)


@lru_cache(maxsize=32)
def _from_json(raw: str, where: str) -> str:
    try:
        schema = json.loads(raw)
    except ValueError as exc:
        raise PipelineError("config", f"{where}: not JSON: {exc}") from None
    return json.dumps(check_schema(schema, where), ensure_ascii=False)


@lru_cache(maxsize=32)
def load_schema(text: str) -> dict[str, Any]:
    """The schema a :func:`schema_text` gave (parsed once per process)."""
    schema: dict[str, Any] = json.loads(text)
    return schema


def builtin_name(text: str) -> str | None:
    """The built-in schema ``text`` is, else None (a user's own)."""
    title = load_schema(text).get("title")
    if isinstance(title, str) and title in BUILTIN and text == json.dumps(BUILTIN[title]):
        return title
    return None
