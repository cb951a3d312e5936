"""Public data models: records, documents, errors and search results.

These are the values that cross the library's edges. Inside the code, failures travel as
:class:`pipeline.core.errors.PipelineError` exceptions; at the edge they become :class:`ErrorInfo`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

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
    "render",
    "empty",
    "challenge",
    "compress",
    "provider",
    "invalid_result",
    "invalid_request",
    "config",
    "cancelled",
    "filtered",
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


class _Outcome(BaseModel):
    """Base of records and responses: ``error`` is set exactly when ``ok`` is false, checked
    on construction. It declares no fields, so each model keeps its own field order."""

    _what: ClassVar[str]  # "record", "search response", ... for the messages
    if TYPE_CHECKING:  # the subclasses' fields, read here
        ok: bool
        error: ErrorInfo | None

    @model_validator(mode="after")
    def _error_exactly_when_failed(self) -> Self:
        if self.ok and self.error is not None:
            raise ValueError(f"an ok {self._what} carries no error "
                             f"(error={self.error.kind!r})")
        if not self.ok and self.error is None:
            raise ValueError(f"a failed {self._what} carries an error (ok=false needs error)")
        return self

    @property
    def failed_with(self) -> ErrorInfo:
        """The error of a failed outcome (``ok`` false), with no None to check;
        ``ValueError`` on an ok one."""
        if self.ok or self.error is None:
            raise ValueError(f"an ok {self._what} has no error: check ok first")
        return self.error


class Document(BaseModel):
    """What a content handler makes of a body: readable content plus metadata; with a
    schema (``HandlerOptions.schema``), the fields it asks for and where each came from."""

    title: str | None = None
    content: str = ""
    format: OutputFormat = "markdown"
    metadata: dict[str, Any] = Field(default_factory=dict)
    fields: dict[str, Any] | None = None
    fields_meta: dict[str, Any] | None = None
    # With HandlerOptions.links (a crawl): the page's out-links, absolute, in page order,
    # those marked rel=nofollow apart; None when not asked for.
    links: list[str] | None = None
    nofollow_links: list[str] | None = None


class ExtractOptions(BaseModel):
    """What every extract call is held to: the output format and the content budget per
    URL (marker included)."""

    format: OutputFormat = "markdown"
    max_chars: int = 100_000


class Record(_Outcome):
    """One result per input URL: the JSONL line of the batch command and the library's
    per-URL return value. ``ok`` is true exactly when ``error`` is null, and an ok record has
    ``content`` (both checked on construction; :attr:`failed_with` reads a failed record's
    error without a None check). ``cache`` says where
    the record came from: ``"hit"`` (the full-text cache, no request), ``"revalidated"``
    (the cache, after the server answered 304 Not Modified) or null (fetched now);
    ``rendered`` whether the content comes from the page as a headless browser rendered it
    (``--render``). ``input``
    holds the other columns of the input row the URL came from (a CSV/TSV/JSONL input), and
    ``source`` the sitemap or feed it was found in; both null otherwise. ``duplicate_of`` (a
    batch run with ``--dedup``) is the ``index`` of the first record whose text this one's
    repeats; a record a run's filter withheld (``--lang``, ``--drop-duplicates``) is
    ``filtered``: not ok, no content, its metadata kept. ``fields`` and ``fields_meta``
    (a schema was asked for: ``--schema``, ``web_extract(schema=…)``) are the schema's
    properties, each a value or null, and where each came from; without a schema they are
    left out of the record's JSON altogether, so such records are what they were. A crawl's
    records add ``depth`` (link hops from a start page), ``parent`` (the page that linked
    here, null for a start page) and ``via`` (``start``, ``sitemap``, ``link``,
    ``redirect``), and with ``--links`` the page's out-links (``links``, ``nofollow_links``);
    outside a crawl these are left out of the JSON too."""

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
    fields: dict[str, Any] | None = None
    fields_meta: dict[str, Any] | None = None
    truncated: bool = False
    next_offset: int | None = None
    compressed: bool = False
    chars: int = 0
    bytes: int = 0
    attempts: int = 0
    elapsed_ms: int = 0
    cache: CacheSource | None = None
    rendered: bool = False
    input: dict[str, Any] | None = None
    source: str | None = None
    duplicate_of: int | None = None
    depth: int | None = None
    parent: str | None = None
    via: str | None = None
    links: list[str] | None = None
    nofollow_links: list[str] | None = None
    error: ErrorInfo | None = None

    _what = "record"
    _LEFT_OUT_WHEN_NULL: ClassVar[tuple[str, ...]] = (
        "fields", "fields_meta", "via", "links", "nofollow_links")
    # a crawl's record has all three (a start page's parent is null); others have none
    _CRAWL_FIELDS: ClassVar[tuple[str, ...]] = ("depth", "parent")

    @classmethod
    def leave_out_absent(cls, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` (a record's JSON object) without the fields this kind of record lacks."""
        for name in cls._LEFT_OUT_WHEN_NULL:
            if data.get(name, 0) is None:
                del data[name]
        if "via" not in data:
            for name in cls._CRAWL_FIELDS:
                data.pop(name, None)
        return data

    @model_serializer(mode="wrap")
    def _without_absent_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        return self.leave_out_absent(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _content_when_ok(self) -> Self:
        if self.ok and self.content is None:
            raise ValueError("an ok record carries content (ok=true needs content)")
        return self

    @classmethod
    def failure(cls, url: str, error: ErrorInfo, **fields: Any) -> Record:
        """A record for a URL that produced no content."""
        return cls(url=url, ok=False, error=error, **fields)

    def filtered(self, message: str, **fields: Any) -> Record:
        """A copy of this record withheld by a run's filter: ``filtered``, without content,
        its metadata and other fields kept (``fields`` updates them)."""
        return self.model_copy(update={
            "ok": False, "content": None, "chars": 0, "truncated": False, "next_offset": None,
            "error": ErrorInfo(kind="filtered", message=message), **fields})

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


class SearchResponse(_Outcome):
    """A search outcome: rows and the provider that served them, or an error (set exactly
    when ``ok`` is false, checked on construction)."""

    ok: bool
    query: str
    provider: str | None = None
    results: list[SearchResult] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    error: ErrorInfo | None = None

    _what = "search response"


class ExtractResponse(_Outcome):
    """An extract outcome: one record per requested URL, in input order, or a request-level
    error (``invalid_request``, ``config``) with no records. ``error`` is set exactly when
    ``ok`` is false (checked on construction)."""

    ok: bool
    provider: str | None = None
    records: list[Record] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    error: ErrorInfo | None = None

    _what = "extract response"


class CrawledPage(BaseModel):
    """One page of a crawl (``web_crawl``): where it was found and its text, re-validated by
    the kernel whatever the provider sent. ``depth`` counts link hops from the start page;
    ``parent`` is the page that linked here; ``via`` is ``start``, ``sitemap``, ``link`` or
    ``redirect``. A page that failed has ``error`` and no content."""

    url: str
    final_url: str | None = None
    depth: int | None = None
    parent: str | None = None
    via: str | None = None
    title: str | None = None
    content: str | None = None
    truncated: bool = False
    chars: int = 0
    error: ErrorInfo | None = None


class CrawlResponse(_Outcome):
    """A crawl outcome: the pages read (in the order they were found) inside the call's
    character budget, the URLs skipped counted by reason, and ``left``: in-scope URLs the
    page budget left unread, when the provider knows. ``error`` is set exactly when ``ok``
    is false."""

    ok: bool
    url: str
    provider: str | None = None
    pages: list[CrawledPage] = Field(default_factory=list)
    skipped: dict[str, int] = Field(default_factory=dict)
    left: int | None = None
    warnings: list[str] = Field(default_factory=list)
    error: ErrorInfo | None = None

    _what = "crawl response"


class MappedUrl(BaseModel):
    """One URL a map found (``web_map``), without content."""

    url: str
    depth: int | None = None
    parent: str | None = None
    title: str | None = None


class MapResponse(_Outcome):
    """A map outcome: the URLs found, in discovery order, and the skips by reason."""

    ok: bool
    url: str
    provider: str | None = None
    urls: list[MappedUrl] = Field(default_factory=list)
    skipped: dict[str, int] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    error: ErrorInfo | None = None

    _what = "map response"
