"""The content-type handler registry.

A handler turns the bytes of one response into a :class:`~pipeline.core.models.Document`. The
registry picks one per response: custom handlers before built-ins, in registration order;
the media type first; the first bytes (:mod:`handlers.sniff`) when the type is missing,
``application/octet-stream``, or contradicted by the bytes. Nothing matches ⇒
``PipelineError('unsupported_type')``, as does any binary body no handler claims.

Third-party handlers register through the entry-point group ``pipeline.handlers``: the entry
point names a :class:`ContentHandler` instance, its class, or a zero-argument factory.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from importlib.metadata import entry_points
from typing import Any, Literal, Protocol, cast, runtime_checkable

from handlers.sniff import (
    SNIFF_BYTES,
    Sniffed,
    classify,
    is_textual,
    mostly_binary,
    obviously_unsupported,
)
from pipeline.core.errors import PipelineError
from pipeline.core.models import Document, OutputFormat
from pipeline.core.settings import (
    HTML_EXTRACTOR,
    INCLUDE_COMMENTS,
    PDF_MAX_PAGES,
    PDF_TIME_LIMIT,
    STRUCTURED_RAW,
)

ENTRY_POINT_GROUP = "pipeline.handlers"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HandlerOptions(Mapping[str, Any]):
    """The extraction settings a handler may read, typed, with the defaults of the settings
    fields (and batch flags) of the same names (:mod:`pipeline.core.settings` holds them).
    Frozen and picklable: it crosses into worker processes inside :class:`HandlerContext`.

    * ``max_chars``: the call's content budget (None: no cut). A runner cuts the document to
      it (:func:`pipeline.extract.runners.cut_to_budget`); a handler need not.
    * ``html_extractor``: ``"builtin"`` or ``"readability"`` (``--html-extractor``).
    * ``include_comments``: append a page's comment threads (``--include-comments``).
    * ``structured_raw``: keep an HTML page's JSON-LD and microdata as declared, bounded, in
      ``metadata.structured_raw`` (``--structured-raw``).
    * ``pdf_max_pages``, ``pdf_time_limit``: a PDF's page and time caps.
    * ``detect_lang``: a runner adds the text's language to the metadata
      (:mod:`pipeline.extract.language`); a handler need not.
    * ``links``: the HTML handler lists the page's out-links in the document's ``links``
      and ``nofollow_links`` (a crawl follows them).
    * ``schema``: the fields schema as canonical JSON text
      (:func:`pipeline.core.field_schemas.schema_text`), or None: the HTML handler then
      fills the document's ``fields`` and ``fields_meta`` (:mod:`handlers.fields`).

    :meth:`from_mapping` builds one from a ``dict`` and refuses unknown names. It is a
    read-only mapping of the option names, so code written for the old ``dict`` options
    (``get``, ``[name]``, ``in``, ``dict(...)``, ``{**options}``) keeps working.
    """

    max_chars: int | None = None
    html_extractor: Literal["builtin", "readability"] = HTML_EXTRACTOR
    include_comments: bool = INCLUDE_COMMENTS
    structured_raw: bool = STRUCTURED_RAW
    pdf_max_pages: int = PDF_MAX_PAGES
    pdf_time_limit: float = PDF_TIME_LIMIT
    detect_lang: bool = False
    schema: str | None = None
    links: bool = False

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any]) -> HandlerOptions:
        """The options a ``dict`` names; ``TypeError`` naming any unknown option."""
        unknown = sorted(set(options) - _OPTION_NAMES)
        if unknown:
            raise TypeError(f"unknown handler option(s): {', '.join(map(repr, unknown))} "
                            f"(known: {', '.join(sorted(_OPTION_NAMES))})")
        return cls(**options)

    def get(self, name: str, default: Any = None) -> Any:
        """``options.get(name, default)`` as on the old ``dict`` options."""
        return getattr(self, name) if name in _OPTION_NAMES else default

    def __getitem__(self, name: str) -> Any:
        if name not in _OPTION_NAMES:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return (f.name for f in fields(self))

    def __len__(self) -> int:
        return len(_OPTION_NAMES)


_OPTION_NAMES = frozenset(f.name for f in fields(HandlerOptions))


@dataclass(frozen=True)
class HandlerContext:
    """What a handler knows besides the body. Picklable: it crosses into worker processes.

    ``options`` is a :class:`HandlerOptions`; a ``dict`` given here (the type before it) is
    converted, and an unknown name in it is a ``TypeError``."""

    url: str
    final_url: str | None = None
    media_type: str | None = None  # lower-case, no parameters
    charset: str | None = None  # from the Content-Type header, if any
    format: OutputFormat = "markdown"
    options: HandlerOptions = field(default_factory=HandlerOptions)

    def __post_init__(self) -> None:
        if not isinstance(self.options, HandlerOptions):  # a caller still passing a dict
            object.__setattr__(self, "options", HandlerOptions.from_mapping(self.options))

    @property
    def base_url(self) -> str:
        return self.final_url or self.url


@runtime_checkable
class ContentHandler(Protocol):
    """Contract for a content handler.

    * ``name``: short, unique, stable (it appears in records as ``handler``).
    * ``media_types``: the types it claims — exact (``text/html``) or glob patterns
      (``*/*+json``, ``text/*``), lower-case, without parameters.
    * ``sniff(head)``: given the first bytes (up to 1 KiB), True when the body is surely of
      this handler's kind. Used when the media type is missing, generic or contradicted.
    * ``handle(body, ctx)``: pure and CPU-bound; returns a Document or raises
      ``PipelineError`` (``decode``, ``extract``, ``empty``, ``challenge``). Any other
      exception is reported as ``extract``. Must be picklable (a module-level instance):
      in batch mode it runs in a worker process. ``ctx.options`` is a typed, frozen
      :class:`HandlerOptions` (read ``ctx.options.include_comments``); a handler written
      when it was a ``dict`` keeps working: ``ctx.options.get("name", default)`` and
      ``ctx.options["name"]`` read the same values.

    A handler whose work on some bodies costs less than sending them to a worker also
    implements :class:`InlineHandler`.
    """

    name: str
    media_types: tuple[str, ...]

    def sniff(self, head: bytes) -> bool: ...

    def handle(self, body: bytes, ctx: HandlerContext) -> Document: ...


@runtime_checkable
class InlineHandler(ContentHandler, Protocol):
    """A content handler that may run on the caller's event loop for some bodies.

    * ``inline(body, ctx)``: True when handling this body costs less than a round trip to a
      worker process (pickling, pipes, waking another process), so the batch
      handles it in place. Keep it that cheap: inline work blocks the event loop and cannot
      be stopped by ``--handler-timeout``. Anything that may parse or detect a charset
      answers False. An exception counts as False.
    """

    def inline(self, body: bytes, ctx: HandlerContext) -> bool: ...


_INLINE_TYPES: dict[type, bool] = {}  # per type: isinstance() of a runtime protocol is slow


def handles_inline(handler: ContentHandler, body: bytes, ctx: HandlerContext) -> bool:
    """Whether ``handler`` says ``body`` is handled in place (see :class:`InlineHandler`)."""
    kind = type(handler)
    declared = _INLINE_TYPES.get(kind)
    if declared is None:
        declared = _INLINE_TYPES[kind] = isinstance(handler, InlineHandler)
    if not declared:
        return False
    try:
        return bool(cast(InlineHandler, handler).inline(body, ctx))  # declared, as memoised
    except Exception:  # a faulty estimate only costs the fast path
        return False


def _matches(pattern: str, media_type: str) -> bool:
    return pattern == media_type or fnmatch.fnmatchcase(media_type, pattern)


GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream",
                           "application/unknown", "application/x-unknown"})


class HandlerRegistry:
    """Ordered handlers: custom (registered later) before the built-ins."""

    def __init__(self, builtins: Iterable[ContentHandler] = ()) -> None:
        self._custom: list[ContentHandler] = []
        self._builtins: list[ContentHandler] = list(builtins)
        # media type -> handler claiming it: asked once or twice per URL in batch mode
        self._by_type_memo: dict[str, ContentHandler | None] = {}

    def register(self, handler: ContentHandler) -> None:
        """Add a custom handler; it is tried before every built-in."""
        if not isinstance(handler, ContentHandler):
            raise TypeError(f"{handler!r} does not implement ContentHandler")
        self._custom.append(handler)
        self._by_type_memo.clear()

    @property
    def handlers(self) -> list[ContentHandler]:
        return [*self._custom, *self._builtins]

    def get(self, name: str) -> ContentHandler:
        for handler in self.handlers:
            if handler.name == name:
                return handler
        raise KeyError(name)

    def claims(self, media_type: str) -> bool:
        """True when some handler claims this media type by name (no sniffing)."""
        return self._by_type(_bare(media_type)) is not None

    def _by_type(self, media_type: str) -> ContentHandler | None:
        try:
            return self._by_type_memo[media_type]
        except KeyError:
            pass
        found = next((handler for handler in self.handlers
                      if any(_matches(p, media_type) for p in handler.media_types)), None)
        if len(self._by_type_memo) < 1024:  # labels come from servers: keep the memo bounded
            self._by_type_memo[media_type] = found
        return found

    def _custom_sniffed(self, head: bytes) -> ContentHandler | None:
        # Only plugins' own sniffs are consulted: built-ins are found through classify(), so
        # a lenient built-in sniff can never pull binary bytes into a text handler.
        return next((h for h in self._custom if h.sniff(head)), None)

    def select(self, media_type: str | None, head: bytes) -> ContentHandler:
        """Pick the handler for a body whose first bytes are ``head``.

        A magic signature outranks the label (a PNG served as text/html is an image); binary
        bytes under a text label are refused; a specific label otherwise wins over weak
        text-like signals; generic or unclaimed labels go by the bytes.
        """
        label = _bare(media_type)
        head = head[:SNIFF_BYTES]
        found = classify(head)
        if found.strength == "signature":
            handler = self._by_type(found.media_type) or self._custom_sniffed(head)
            if handler is None:
                raise PipelineError("unsupported_type", _refusal(found, label))
            return handler
        labelled = None if label in GENERIC_TYPES else self._by_type(label)
        if labelled is not None:
            if found.strength == "binary" and is_textual(label) and mostly_binary(head):
                raise PipelineError("unsupported_type", _refusal(found, label))
            if found.strength == "markup" and not is_textual(label) and not labelled.sniff(head):
                # e.g. an HTML error page served as application/pdf
                return self._by_type(found.media_type) or labelled
            return labelled
        handler = self._custom_sniffed(head)
        if handler is None and found.strength != "binary":
            handler = self._by_type(found.media_type)
        if handler is None:
            raise PipelineError("unsupported_type", _refusal(found, label))
        return handler

    def rejects_early(self, media_type: str | None) -> bool:
        """True when a response with this Content-Type can be refused before its body is read:
        the type is obviously not text (images, audio, video, fonts, archives, executables)
        and no handler claims it. Generic types (``application/octet-stream``) are never
        rejected: their bytes decide."""
        label = _bare(media_type)
        return obviously_unsupported(label) and self._by_type(label) is None


def _bare(media_type: str | None) -> str:
    """``Text/HTML; charset=x`` ⇒ ``text/html``."""
    return (media_type or "").split(";", 1)[0].strip().lower()


def _refusal(found: Sniffed, label: str) -> str:
    served = f" served as {label}" if label and label not in GENERIC_TYPES else ""
    if found.strength == "binary":
        return f"binary content{served} (no known text format)"
    return f"{found.description} ({found.media_type}){served} is not a supported type"


def load_entry_point_handlers(registry: HandlerRegistry) -> None:
    """Register third-party handlers from the ``pipeline.handlers`` entry-point group.

    An entry point names a handler instance, or a class / zero-argument factory making one.
    Worker processes build their registry the same way (``default_registry()``), so plugins
    run in the process pool exactly like built-ins.
    """
    seen: set[str] = set()
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.value in seen:  # the same distribution visible twice on sys.path
            continue
        seen.add(point.value)
        try:
            obj = point.load()
            # A class satisfies the protocol's attribute check too: instantiate it.
            make = isinstance(obj, type) or (callable(obj) and not isinstance(obj, ContentHandler))
            registry.register(obj() if make else obj)
        except Exception as exc:  # a broken plugin must not break the run
            log.warning("handler plugin %s failed to load: %s", point.name, exc)
