"""The one exception type used inside the pipeline, and message sanitising.

Code inside raises :class:`PipelineError` with a stable kind; the edges (engine, kernel)
turn it into an :class:`~pipeline.core.models.ErrorInfo` value. Nothing outside sees a traceback.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pipeline.core.models import ErrorInfo, ErrorKind

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
MAX_MESSAGE_CHARS = 300


def sanitize_message(text: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Make any text safe for an error message: no control characters, one line, bounded."""
    cleaned = _CONTROL.sub(" ", str(text)).strip()
    cleaned = re.sub(r" {2,}", " ", cleaned)
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1] + "…"
    return cleaned


def describe_validation(exc: ValidationError, model: type[BaseModel] | None = None,
                        where: str = "arguments") -> str:
    """Every problem in ``exc`` as ``field: problem``, joined by "; ". A value that does not
    match a field's pattern is told with the field's description (``model``'s), never with
    the regular expression."""
    problems = []
    for error in exc.errors():
        location = ".".join(str(part) for part in error["loc"]) or where
        message = error["msg"]
        if error["type"] == "string_pattern_mismatch":
            name = str(error["loc"][0]) if error["loc"] else ""
            field = model.model_fields.get(name) if model is not None else None
            about = f" ({field.description})" if field is not None and field.description else ""
            message = f"{sanitize_message(repr(error['input']), 80)} is not valid{about}"
        problems.append(f"{location}: {message}")
    return "; ".join(problems)


class PipelineError(Exception):
    """A failure with a stable error kind (see ``pipeline.core.models.ErrorKind``)."""

    def __init__(self, kind: ErrorKind, message: str, *, retryable: bool = False) -> None:
        self.kind: ErrorKind = kind
        self.message = sanitize_message(message)
        self.retryable = retryable
        super().__init__(f"{kind}: {self.message}")

    def to_info(self) -> ErrorInfo:
        return ErrorInfo(kind=self.kind, message=self.message, retryable=self.retryable)

    def __reduce__(self) -> tuple[Any, ...]:  # keep kind/retryable across the process-pool boundary
        return (_rebuild, (self.kind, self.message, self.retryable))


def _rebuild(kind: ErrorKind, message: str, retryable: bool) -> PipelineError:
    return PipelineError(kind, message, retryable=retryable)


class OutputError(OSError):
    """Records could not be written to the output (a full disk, a failing device): the run
    stops. What was written before is whole records (a torn last line is repaired by
    ``--resume``), so the run can be resumed."""


PROG = "extract-pipeline"  # what the command's messages on stderr start with


class UsageError(Exception):
    """A bad command line or output location: one line on stderr, exit status 2."""
