"""``--lang en,de``: keep only the records whose detected language is listed.

A record in another language, or with no language to tell, becomes a ``filtered`` record
(not ok, no content, its metadata kept: :meth:`pipeline.core.models.Record.filtered`), so
every input line still has its record. The language is normally detected where the handler
ran (:func:`pipeline.extract.runners.call_handler`); a record that comes without one — from
a vendor's extraction or a cache entry written with detection off — is labelled here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pipeline.core.models import Record
from pipeline.core.settings import Settings
from pipeline.extract.language import language_fields

Extract = Callable[[str], Awaitable[Record]]


def with_language(record: Record) -> Record:
    """``record`` with its detected language in the metadata when it has content and none
    yet."""
    if not record.ok or record.content is None or "detected_lang" in record.metadata:
        return record
    if fields := language_fields(record.content):
        return record.model_copy(update={"metadata": {**record.metadata, **fields}})
    return record


def language_filtered(extract: Extract, settings: Settings) -> Extract:
    """``extract`` whose ok records all carry a detected language, and with
    ``settings.languages``, only records in those languages stay ok."""
    keep = frozenset(settings.languages)
    listed = ", ".join(settings.languages)

    async def run(url: str) -> Record:
        record = with_language(await extract(url))
        if not keep or not record.ok:
            return record
        found = record.metadata.get("detected_lang")
        if found in keep:
            return record
        reason = (f"detected language {found} ({record.metadata.get('detected_lang_score')})"
                  if found else "no language detected")
        return record.filtered(f"{reason} is not one of --lang {listed}")

    return run
