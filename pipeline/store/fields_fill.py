"""The model path for fields: a model fills only what the page's own readers left null
(docs/fields.md), opt-in, with the compressor's endpoint settings.

:func:`fill_fields` sends the record's content — in overlapping chunks when it is long —
asking for the missing properties only; each answer is validated locally against the
user's schema and asked again once with the errors; a value is kept only when it is valid
and written on the page (:func:`handlers.fields.values.on_page`), list values are merged
across chunks without duplicates, everything within ``deadline`` seconds. A model that is
down, slow or wrong leaves the record's fields as they were and says so in
``fields_meta.llm``; the record stays ok. :func:`fields_model_from_env` builds the client
from the compressor's variables (``PIPELINE_COMPRESS_MODEL``, ``…_BASE_URL``,
``…_API_KEY``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from handlers.fields.candidates import TRUST, evidence_of
from handlers.fields.values import on_page, squash
from pipeline.core.errors import PipelineError
from pipeline.core.models import Record
from pipeline.core.slices import ModelSettings
from pipeline.providers.compressor import CompressorConfig, split_text
from pipeline.providers.fields_model import FieldsAsker, FieldsModel
from pipeline.providers.registry import provider_env

CHUNK_CHARS = 24_000  # content per model call
OVERLAP_CHARS = 1_000  # repeated from the chunk before: a value cut in two is read whole
MAX_CHUNKS = 8


def chunks(text: str, size: int = CHUNK_CHARS, overlap: int = OVERLAP_CHARS) -> list[str]:
    """``text`` in pieces of about ``size`` characters cut at boundaries, each after the
    first starting with the last ``overlap`` characters of the one before."""
    pieces = split_text(text, size)
    return [piece if n == 0 else pieces[n - 1][-overlap:] + "\n" + piece
            for n, piece in enumerate(pieces)][:MAX_CHUNKS]


def _validator(schema: dict[str, Any]) -> Any:
    from jsonschema import validators

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    return cls(schema)


def _problems(values: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """What is wrong with the model's answer against the wanted properties' schemas."""
    found = []
    for name, spec in wanted.items():
        if name in values and values[name] is not None and isinstance(spec, dict):
            error = next(iter(_validator(spec).iter_errors(values[name])), None)
            if error is not None:
                found.append(f"{name}: {error.message}"[:200])
    return found


def _merge(kept: dict[str, Any], values: dict[str, Any]) -> None:
    """Values of later chunks: a list's new items appended (de-duplicated), a scalar only
    where none was found yet."""
    for name, value in values.items():
        if value is None or value == []:
            continue
        if isinstance(value, list) and isinstance(kept.get(name), list):
            seen = {squash(str(item)) for item in kept[name]}
            kept[name] += [item for item in value if squash(str(item)) not in seen]
        elif kept.get(name) is None:
            kept[name] = value


def _evidence(value: Any, content: str) -> str:
    """The page text around where ``value`` is written."""
    first = value[0] if isinstance(value, list) and value else value
    at = squash(content).find(squash(str(first)))
    start = max(0, at - 60) if at >= 0 else 0
    return evidence_of(" ".join(content.split())[start: start + 160])


async def fill_fields(record: Record, schema: dict[str, Any], client: FieldsAsker,
                      deadline: float) -> Record:
    """``record`` with its null fields filled by the model where the page bears the value
    out; unchanged (but for ``fields_meta.llm``) when the model fails or runs out of
    ``deadline`` seconds. A record without fields, failed or complete, is returned as is."""
    if not record.ok or record.fields is None or record.content is None:
        return record
    properties: dict[str, Any] = schema.get("properties", {})
    missing = {name: properties.get(name, {}) for name, value in record.fields.items()
               if value is None}
    if not missing:
        return record
    wanted = {"type": "object", "properties": missing}
    started = time.monotonic()
    found: dict[str, Any] = {}
    tokens, mode, note = 0, None, None
    try:
        async with asyncio.timeout(deadline):
            for piece in chunks(record.content):
                answer = await client.ask(piece, wanted)
                tokens += answer.tokens
                values = {k: v for k, v in answer.values.items() if k in missing}
                problems = _problems(values, missing)
                if problems:  # asked again once, with what was wrong
                    answer = await client.ask(piece, wanted, problems)
                    tokens += answer.tokens
                    values = {k: v for k, v in answer.values.items() if k in missing}
                mode = answer.mode
                _merge(found, values)
    except TimeoutError:
        note = f"the model did not answer within {deadline:g} s"
    except PipelineError as exc:
        note = exc.message
    fields = dict(record.fields)
    meta = dict(record.fields_meta or {})
    per_field = dict(meta.get("fields", {}))
    drops = list(meta.get("dropped", []))
    for name, value in found.items():
        problems = _problems({name: value}, missing)
        reason = (f"invalid: {problems[0]}" if problems
                  else None if on_page(value, record.content) else "not found on the page")
        if reason is not None:
            drops.append({"field": name, "value": evidence_of(value), "source": "llm",
                          "reason": reason})
            continue
        fields[name] = value
        per_field[name] = {"source": "llm", "evidence": _evidence(value, record.content),
                           "confidence": TRUST["llm"]}
    filled = sum(value is not None for value in fields.values())
    meta.update(fields=per_field, dropped=drops[:40],
                status="empty" if not filled else "complete" if filled == len(fields)
                else "partial",
                llm={"status": "failed" if note else "ok", "tokens": tokens, "mode": mode,
                     "ms": round((time.monotonic() - started) * 1000),
                     **({"error": note} if note else {})})
    return record.model_copy(update={"fields": fields, "fields_meta": meta})


def fields_model_from_env(settings: ModelSettings, env: Mapping[str, str] | None = None
                          ) -> FieldsModel | None:
    """The model the compressor's variables name (None: no model configured), as an
    async context manager: close it after use."""
    config = CompressorConfig.from_env(provider_env(settings, env))
    if config is None:
        return None
    return FieldsModel(model=config.model, base_url=config.base_url, api_key=config.api_key,
                       settings=settings, timeout=config.timeout,
                       token_param=config.token_param)
