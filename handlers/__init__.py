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
    HandlerOptions,
    HandlerRegistry,
    InlineHandler,
    handles_inline,
    load_entry_point_handlers,
)

BUILTIN_HANDLERS: tuple[str, ...] = (
    "handlers.html:HTML_HANDLER",
    "handlers.pdf:PDF_HANDLER",
    "handlers.xml:XML_HANDLER",  # after HTML (xhtml+xml), before any text/* catch-all
    "handlers.json:handler",
    # text claims text/*: keep it after every handler of a specific text type (HTML...).
    "handlers.text:handler",
)


def load_handler(spec: str) -> ContentHandler:
    """The handler a ``"module:attribute"`` spec names."""
    module, _, attribute = spec.partition(":")
    handler: ContentHandler = getattr(import_module(module), attribute)  # checked on register
    return handler


def builtin_handlers() -> list[ContentHandler]:
    return [load_handler(spec) for spec in BUILTIN_HANDLERS]


@cache
def default_registry() -> HandlerRegistry:
    """Built-ins plus entry-point plugins; one per process, built on first use."""
    registry = HandlerRegistry(builtin_handlers())
    load_entry_point_handlers(registry)
    return registry


def build_registry(specs: tuple[str, ...] = ()) -> HandlerRegistry:
    """A new registry: the built-ins, entry-point plugins, and the handlers ``specs`` name
    (``"module:attribute"``, tried before the built-ins).

    Worker processes build theirs with the same specs as the parent, so a handler given by
    ``--handler module:attribute`` runs in batch mode too.
    """
    registry = HandlerRegistry(builtin_handlers())
    load_entry_point_handlers(registry)
    for spec in specs:
        registry.register(load_handler(spec))
    return registry


@cache
def registry_for(specs: tuple[str, ...] = ()) -> HandlerRegistry:
    """:func:`default_registry` plus the handlers ``specs`` name; one per process."""
    return build_registry(specs) if specs else default_registry()


__all__ = [
    "BUILTIN_HANDLERS",
    "ContentHandler",
    "HandlerContext",
    "HandlerOptions",
    "HandlerRegistry",
    "InlineHandler",
    "build_registry",
    "default_registry",
    "handles_inline",
    "load_handler",
    "registry_for",
]
