"""Post-extraction stages: what happens to a record after its window is cut.

A stage is one module-level builder and one line in :data:`STAGES`; the reader builds every
registered stage for a read (a builder returns None when its stage is off for it) and runs
them in the registry's order on each record. Adding one (say, a PII scrubber) is a function
``build(context) -> Stage | None`` and a :class:`StageSpec` line below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pipeline.core.errors import PipelineError
from pipeline.core.models import Record
from pipeline.core.slices import StageSettings
from pipeline.extract.language import language_fields


@runtime_checkable
class Stage(Protocol):
    """Contract: :meth:`apply` returns the record to pass on — the same object when there is
    nothing to do — and never raises for one record's problem: that becomes the record's
    error (not ok, no content) or a ``filtered`` record, so every URL keeps its record. A
    stage holding resources may also be an async context manager: the reader opens it once
    before the first record and closes it with itself."""

    name: str

    async def apply(self, record: Record) -> Record: ...


@dataclass
class StageContext:
    """What a stage builder may look at: the stages' slice of the settings, whether records
    may come from elsewhere than our own handlers (a vendor, the cache: they may lack what
    the handlers add), the call's own choices, and where to say what was skipped."""

    settings: StageSettings
    foreign: bool
    max_chars: int
    compress: bool = False
    instruction: str | None = None
    compressor: Any = None  # an injected Compressor (pipeline.store.compress)
    strict: bool = False  # a missing compressor is a config error (the batch), not a warning
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StageSpec:
    """A registered stage: its name and its builder."""

    name: str
    build: Callable[[StageContext], Stage | None]


class FakeStage:
    """A stage for tests: ``change`` maps a record to the record passed on (default:
    unchanged); ``seen`` keeps every record it was given."""

    def __init__(self, name: str = "fake",
                 change: Callable[[Record], Record] | None = None) -> None:
        self.name = name
        self.change = change or (lambda record: record)
        self.seen: list[Record] = []

    async def apply(self, record: Record) -> Record:
        self.seen.append(record)
        return self.change(record)


# --------------------------------------------------------------------------- language

def with_language(record: Record) -> Record:
    """``record`` with its detected language in the metadata when it has content and none
    yet."""
    if not record.ok or record.content is None or "detected_lang" in record.metadata:
        return record
    if fields := language_fields(record.content):
        return record.model_copy(update={"metadata": {**record.metadata, **fields}})
    return record


class LanguageStage:
    """``--lang en,de``: ok records all carry a detected language and, with a list, only
    records in those languages stay ok; others become ``filtered`` records (metadata kept).
    Our handlers detect the language themselves; records from elsewhere are labelled here."""

    name = "language"

    def __init__(self, languages: list[str]) -> None:
        self.keep = frozenset(languages)
        self.listed = ", ".join(languages)

    async def apply(self, record: Record) -> Record:
        record = with_language(record)
        if not self.keep or not record.ok:
            return record
        found = record.metadata.get("detected_lang")
        if found in self.keep:
            return record
        reason = (f"detected language {found} ({record.metadata.get('detected_lang_score')})"
                  if found else "no language detected")
        return record.filtered(f"{reason} is not one of --lang {self.listed}")


def language_stage(context: StageContext) -> Stage | None:
    settings = context.settings
    if settings.languages or (settings.detect_lang and context.foreign):
        return LanguageStage(list(settings.languages))
    return None


# --------------------------------------------------------------------------- compressor

class CompressStage:
    """``--compress``: long content becomes a model's summary, fail closed
    (:func:`pipeline.store.compress.compress_record`). Opens and closes a compressor it
    built; an injected one is the caller's."""

    name = "compress"

    def __init__(self, compressor: Any, context: StageContext, *, owned: bool) -> None:
        self.compressor = compressor
        self.owned = owned
        self.floor = context.settings.compress_floor
        self.deadline = context.settings.compress_deadline
        self.instruction = context.instruction
        self.max_chars = context.max_chars

    async def __aenter__(self) -> CompressStage:
        if self.owned:
            await self.compressor.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.owned:
            await self.compressor.__aexit__(*exc_info)

    async def apply(self, record: Record) -> Record:
        from pipeline.store.compress import compress_record

        return await compress_record(record, self.compressor, floor=self.floor,
                                     instruction=self.instruction, max_chars=self.max_chars,
                                     deadline=self.deadline)


def compress_stage(context: StageContext) -> Stage | None:
    if not context.compress:
        return None
    if context.compressor is not None:
        return CompressStage(context.compressor, context, owned=False)
    # only a compressing read pays the client's imports
    from pipeline.providers.compressor import compressor_from_env

    compressor = compressor_from_env(context.settings)
    if compressor is None:
        if context.strict:
            raise PipelineError("config", "--compress needs a compressor model: set "
                                "PIPELINE_COMPRESS_MODEL (and its base URL/key)")
        context.warnings.append("compression requested but no compressor is configured "
                                "(set PIPELINE_COMPRESS_MODEL)")
        return None
    return CompressStage(compressor, context, owned=True)


# --------------------------------------------------------------------------- fields model

class FieldsStage:
    """``--fields-model``: a model fills the fields the page's own readers left null
    (:func:`pipeline.store.fields_fill.fill_fields`); a model that fails leaves them and says
    so in ``fields_meta.llm``. Opens and closes its model client."""

    name = "fields"

    def __init__(self, client: Any, schema: dict[str, Any], deadline: float) -> None:
        self.client = client
        self.schema = schema
        self.deadline = deadline

    async def __aenter__(self) -> FieldsStage:
        await self.client.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.__aexit__(*exc_info)

    async def apply(self, record: Record) -> Record:
        from pipeline.store.fields_fill import fill_fields

        return await fill_fields(record, self.schema, self.client, deadline=self.deadline)


def fields_stage(context: StageContext) -> Stage | None:
    settings = context.settings
    if not settings.fields_model:
        return None
    from pipeline.core.field_schemas import load_schema, schema_text
    from pipeline.store.fields_fill import fields_model_from_env

    problem = None
    if settings.fields_schema is None:
        problem = "--fields-model needs --schema (the fields to fill)"
    elif (client := fields_model_from_env(settings)) is None:
        problem = ("--fields-model needs a model: set PIPELINE_COMPRESS_MODEL (and its base "
                   "URL/key)")
    if problem is not None:
        if context.strict:
            raise PipelineError("config", problem)
        context.warnings.append(problem)
        return None
    schema = load_schema(schema_text(settings.fields_schema))
    # the model's time per URL is bounded like the compressor's (--compress-deadline)
    return FieldsStage(client, schema, settings.compress_deadline)


# The registry, in the order stages run: language first (a filtered record costs no model
# call), the fields model before the compressor (which replaces the content). One line per
# stage.
STAGES: list[StageSpec] = [
    StageSpec("language", language_stage),
    StageSpec("fields", fields_stage),
    StageSpec("compress", compress_stage),
]


def build_stages(context: StageContext) -> list[Stage]:
    """The registered stages that are on for ``context``, in order."""
    return [stage for spec in STAGES if (stage := spec.build(context)) is not None]
