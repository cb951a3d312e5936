"""Content handlers: the registry and the built-in handlers.

Adding a content type is one new module defining a handler instance plus one line in
``BUILTIN_HANDLERS`` below (``"module:attribute"``), tried in that order after any custom
handler.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module

from handlers.registry import (
    ContentHandler,
    HandlerContext,
    HandlerRegistry,
    load_entry_point_handlers,
)

BUILTIN_HANDLERS: tuple[str, ...] = (
    "handlers.pdf:PDF_HANDLER",
    "handlers.xml:XML_HANDLER",  # after HTML (xhtml+xml), before any text/* catch-all
)


def builtin_handlers() -> list[ContentHandler]:
    found: list[ContentHandler] = []
    for spec in BUILTIN_HANDLERS:
        module, _, attribute = spec.partition(":")
        found.append(getattr(import_module(module), attribute))
    return found


@cache
def default_registry() -> HandlerRegistry:
    """Built-ins plus entry-point plugins; one per process, built on first use."""
    registry = HandlerRegistry(builtin_handlers())
    load_entry_point_handlers(registry)
    return registry


__all__ = [
    "BUILTIN_HANDLERS",
    "ContentHandler",
    "HandlerContext",
    "HandlerRegistry",
    "default_registry",
]
