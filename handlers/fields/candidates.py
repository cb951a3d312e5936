"""A value some source on the page offers for a field, with where it came from."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

EVIDENCE_CHARS = 200  # per field in fields_meta
# How far each source is trusted, before the value is seen on the page too.
TRUST = {"json-ld": 0.9, "microdata": 0.9, "rdfa": 0.85, "meta": 0.8, "embedded-json": 0.6,
         "page": 0.55, "llm": 0.4}
SEEN_BONUS = 0.1  # the value is also in the page's visible text


@dataclass(frozen=True)
class Candidate:
    """``value`` for ``field`` from ``source`` (``json-ld``, ``microdata``, ``rdfa``,
    ``meta``, ``embedded-json``, ``page``, ``llm``); ``evidence``: the markup or text it was
    read from, bounded."""

    field: str
    value: Any
    source: str
    evidence: str

    @property
    def trust(self) -> float:
        return TRUST.get(self.source, 0.5)


def evidence_of(value: Any) -> str:
    """A bounded snippet of what a value was read from (markup, a JSON fragment, text)."""
    text: str
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…"
