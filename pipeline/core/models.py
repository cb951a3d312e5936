"""Public data models: records, documents, errors and search results.

These are the values that cross the library's edges. Inside the code, failures travel as
:class:`pipeline.core.errors.PipelineError` exceptions; at the edge they become :class:`ErrorInfo`.
"""

from __future__ import annotations

from typing import Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

ErrorKind = Literal[
    "invalid_url",
    "blocked",
    "robots",
    "too_large",
    "timeout",
    "http_status",
    "network",
    "unsupported_type",
    "decode",
    "extract",
    "empty",
    "challenge",
    "compress",
    "provider",
    "invalid_result",
    "invalid_request",
    "config",
    "cancelled",
]
ERROR_KINDS: tuple[str, ...] = get_args(ErrorKind)

OutputFormat = Literal["markdown", "text"]
CacheSource = Literal["hit", "revalidated"]


class ErrorInfo(BaseModel):
    """A failure as data: a stable ``kind``, a short sanitised message, and whether a retry
    later could succeed."""

    model_config = ConfigDict(frozen=True)

    kind: ErrorKind
    message: str
    retryable: bool = False


def _check_outcome(ok: bool, error: ErrorInfo | None, what: str) -> None:
    """The outcome invariant of records and responses: ``error`` is set exactly when ``ok``
    is false."""
    if ok and error is not None:
        raise ValueError(f"an ok {what} carries no error (error={error.kind!r})")
    if not ok and error is None:
        raise ValueError(f"a failed {what} carries an error (ok=false needs error)")


def _error_of(ok: bool, error: ErrorInfo | None, what: str) -> ErrorInfo:
    if ok or error is None:
        raise ValueError(f"an ok {what} has no error: check ok first")
    return error


class Document(BaseModel):
    """What a content handler makes of a body: readable content plus metadata."""

    title: str | None = None
    content: str = ""
    format: OutputFormat = "markdown"
    metadata: dict[str, Any] = Field(default_factory=dict)


class ExtractOptions(BaseModel):
    """What every extract call is held to: the output format and the content budget per
    URL (marker included)."""

    format: OutputFormat = "markdown"
    max_chars: int = 100_000


class Record(BaseModel):
    """One result per input URL: the JSONL line of the batch command and the library's
    per-URL return value. ``ok`` is true exactly when ``error`` is null, and an ok record has
    ``content`` (both checked on construction; :attr:`failed_with` reads a failed record's
    error without a None check). ``cache`` says where
    the record came from: ``"hit"`` (the full-text cache, no request), ``"revalidated"``
    (the cache, after the server answered 304 Not Modified) or null (fetched now). ``input``
    holds the other columns of the input row the URL came from (a CSV/TSV/JSONL input), and
    ``source`` the sitemap or feed it was found in; both null otherwise."""

    url: str
    index: int | None = None
    ok: bool = False
    final_url: str | None = None
    status: int | None = None
    content_type: str | None = None
    handler: str | None = None
    title: str | None = None
    content: str | None = None
    format: OutputFormat | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    truncated: bool = False
    next_offset: int | None = None
    compressed: bool = False
    chars: int = 0
    bytes: int = 0
    attempts: int = 0
    elapsed_ms: int = 0
    cache: CacheSource | None = None
    input: dict[str, Any] | None = None
    source: str | None = None
    error: ErrorInfo | None = None

    @model_validator(mode="after")
    def _outcome(self) -> Self:
        _check_outcome(self.ok, self.error, "record")
        if self.ok and self.content is None:
            raise ValueError("an ok record carries content (ok=true needs content)")
        return self

    @property
    def failed_with(self) -> ErrorInfo:
        """The error of a failed record (``ok`` false); ``ValueError`` on an ok one."""
        return _error_of(self.ok, self.error, "record")

    @classmethod
    def failure(cls, url: str, error: ErrorInfo, **fields: Any) -> Record:
        """A record for a URL that produced no content."""
        return cls(url=url, ok=False, error=error, **fields)

    def to_json(self) -> str:
        """One JSONL line (no trailing newline)."""
        return self.model_dump_json()


class SearchResult(BaseModel):
    """One search hit, re-validated by the kernel whatever the provider sent."""

    title: str
    url: str
    snippet: str = ""
    position: int = Field(ge=1)
    score: float | None = None
    published: str | None = None


class SearchResponse(BaseModel):
    """A search outcome: rows and the provider that served them, or an error (set exactly
    when ``ok`` is false, checked on construction)."""

    ok: bool
    query: str
    provider: str | None = None
    results: list[SearchResult] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    error: ErrorInfo | None = None

    @model_validator(mode="after")
    def _outcome(self) -> Self:
        _check_outcome(self.ok, self.error, "search response")
        return self

    @property
    def failed_with(self) -> ErrorInfo:
        """The error of a failed search (``ok`` false); ``ValueError`` on an ok one."""
        return _error_of(self.ok, self.error, "search response")


class ExtractResponse(BaseModel):
    """An extract outcome: one record per requested URL, in input order, or a request-level
    error (``invalid_request``, ``config``) with no records. ``error`` is set exactly when
    ``ok`` is false (checked on construction)."""

    ok: bool
    provider: str | None = None
    records: list[Record] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    error: ErrorInfo | None = None

    @model_validator(mode="after")
    def _outcome(self) -> Self:
        _check_outcome(self.ok, self.error, "extract response")
        return self

    @property
    def failed_with(self) -> ErrorInfo:
        """The error of a failed extract call (``ok`` false); ``ValueError`` on an ok one."""
        return _error_of(self.ok, self.error, "extract response")
