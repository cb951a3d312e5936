"""The one exception type used inside the pipeline, and message sanitising.

Code inside raises :class:`PipelineError` with a stable kind; the edges (engine, kernel)
turn it into an :class:`~pipeline.core.models.ErrorInfo` value. Nothing outside sees a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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


# pydantic's error types in plain words, filled from the error's context.
_PLAIN = {
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be more than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "int_parsing": "must be a whole number",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "string_type": "must be text",
    "list_type": "must be a list",
    "dict_type": "must be a table of names and values",
    "literal_error": "must be one of {expected}",
    "enum": "must be one of {expected}",
    "missing": "is required",
    "extra_forbidden": "is not a known name",
    "too_short": "must have at least {min_length} item(s)",
    "too_long": "must have at most {max_length} item(s)",
    "string_too_short": "must be at least {min_length} character(s)",
    "string_too_long": "must be at most {max_length} characters",
}


def _plain(shown: str, error: Any) -> str:
    """One pydantic error about ``shown`` in plain words ("--max-chars must be at least
    50"); a validator's own message as it is."""
    template = _PLAIN.get(error["type"])
    if template is not None:
        context = {key: int(value) if isinstance(value, float) and value.is_integer() else value
                   for key, value in error.get("ctx", {}).items()}
        try:
            return f"{shown} {template.format(**context)}"
        except (KeyError, IndexError):
            pass
    return f"{shown}: {str(error['msg']).removeprefix('Value error, ')}"


def describe_validation(exc: ValidationError, model: type[BaseModel] | None = None,
                        where: str = "arguments",
                        names: Mapping[str, str] | None = None) -> str:
    """Every problem in ``exc`` in plain words, ``name must be …``, joined by "; ". ``names``
    says what to call a field (``--max-chars``, ``PIPELINE_MAX_CHARS``: the way the user
    gave it); by default its own name. A value that does not match a field's pattern is told
    with the field's description (``model``'s), never with the regular expression."""
    problems = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        renamed = bool(loc) and loc[0] in (names or {})
        name = (names or {}).get(loc[0], loc[0]) if loc else where
        # a flag or variable is the whole value as the user wrote it: no item index after it
        shown = name if renamed else name + "".join(f"[{part}]" for part in loc[1:])
        if error["type"] == "string_pattern_mismatch":
            field = model.model_fields.get(loc[0]) if model is not None and loc else None
            about = f" ({field.description})" if field is not None and field.description else ""
            problems.append(f"{shown}: {sanitize_message(repr(error['input']), 80)} is not "
                            f"valid{about}")
        else:
            problems.append(_plain(shown, error))
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
