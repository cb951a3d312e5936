"""The content-type handler registry.

A handler turns the bytes of one response into a :class:`~pipeline.models.Document`. The
registry picks one per response: custom handlers before built-ins, in registration order;
the media type first; the first bytes ("sniffing") when the type is missing,
``application/octet-stream``, or contradicted by the bytes. Nothing matches ⇒
``PipelineError('unsupported_type')``.

Third-party handlers register through the entry-point group ``pipeline.handlers``: the entry
point names a :class:`ContentHandler` instance (or a zero-argument callable returning one).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from pipeline.errors import PipelineError
from pipeline.models import Document, OutputFormat

ENTRY_POINT_GROUP = "pipeline.handlers"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HandlerContext:
    """What a handler knows besides the body. Picklable: it crosses into worker processes."""

    url: str
    final_url: str | None = None
    media_type: str | None = None  # lower-case, no parameters
    charset: str | None = None  # from the Content-Type header, if any
    format: OutputFormat = "markdown"
    options: dict[str, Any] = field(default_factory=dict)

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
      A handler whose sniff only recognises a kind of bytes, not a format (plain text),
      sets ``weak_sniff = True``: it is then tried after every other sniff and never
      overrides a media type.
    * ``handle(body, ctx)``: pure and CPU-bound; returns a Document or raises
      ``PipelineError`` (``decode``, ``extract``, ``empty``, ``challenge``). Any other
      exception is reported as ``extract``. Must be picklable (a module-level instance):
      in batch mode it runs in a worker process.
    """

    name: str
    media_types: tuple[str, ...]

    def sniff(self, head: bytes) -> bool: ...

    def handle(self, body: bytes, ctx: HandlerContext) -> Document: ...


def _matches(pattern: str, media_type: str) -> bool:
    return pattern == media_type or fnmatch.fnmatchcase(media_type, pattern)


GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream",
                           "application/unknown", "application/x-unknown"})


class HandlerRegistry:
    """Ordered handlers: custom (registered later) before the built-ins."""

    def __init__(self, builtins: Iterable[ContentHandler] = ()) -> None:
        self._custom: list[ContentHandler] = []
        self._builtins: list[ContentHandler] = list(builtins)

    def register(self, handler: ContentHandler) -> None:
        """Add a custom handler; it is tried before every built-in."""
        if not isinstance(handler, ContentHandler):
            raise TypeError(f"{handler!r} does not implement ContentHandler")
        self._custom.append(handler)

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
        media_type = media_type.lower()
        return any(_matches(p, media_type) for h in self.handlers for p in h.media_types)

    def _sniffed(self, head: bytes, *, weak: bool) -> ContentHandler | None:
        for handler in self.handlers:
            if getattr(handler, "weak_sniff", False) == weak and handler.sniff(head):
                return handler
        return None

    def select(self, media_type: str | None, head: bytes) -> ContentHandler:
        """Pick the handler for a body whose first bytes are ``head``."""
        media_type = (media_type or "").lower()
        head = head[:1024]
        sniffed = self._sniffed(head, weak=False)
        if media_type not in GENERIC_TYPES:
            for handler in self.handlers:
                if any(_matches(p, media_type) for p in handler.media_types):
                    # The bytes outrank a label they contradict (e.g. a PDF served as text/html).
                    if sniffed is not None and sniffed is not handler and not handler.sniff(head):
                        return sniffed
                    return handler
        sniffed = sniffed or self._sniffed(head, weak=True)
        if sniffed is not None:
            return sniffed
        raise PipelineError(
            "unsupported_type", f"no handler for content type {media_type or 'unknown'!r}"
        )


def load_entry_point_handlers(registry: HandlerRegistry) -> None:
    """Register third-party handlers from the ``pipeline.handlers`` entry-point group."""
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = point.load()
            handler = obj() if callable(obj) and not isinstance(obj, ContentHandler) else obj
            registry.register(handler)
        except Exception as exc:  # a broken plugin must not break the run
            log.warning("handler plugin %s failed to load: %s", point.name, exc)
