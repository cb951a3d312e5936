"""extract-pipeline: URLs in, clean bounded LLM-ready text out."""

from typing import TYPE_CHECKING, Any

from pipeline.core.models import (
    Document,
    ErrorInfo,
    ExtractResponse,
    Record,
    SearchResponse,
    SearchResult,
)
from pipeline.core.settings import Settings, load_settings

__version__ = "0.1.0"

# Loaded on first use so `import pipeline` stays fast: the kernel pulls in aiohttp and the
# providers, the tools module pydantic schema machinery.
_LAZY = {
    "web_search": "pipeline.web",
    "web_extract": "pipeline.web",
    "web_search_sync": "pipeline.web",
    "web_extract_sync": "pipeline.web",
    "render": "pipeline.rendering",
    "tool_definitions": "pipeline.tools",
    "SearchArgs": "pipeline.web",
    "ExtractArgs": "pipeline.web",
}

if TYPE_CHECKING:
    from pipeline.rendering import render
    from pipeline.tools import tool_definitions
    from pipeline.web import (
        ExtractArgs,
        SearchArgs,
        web_extract,
        web_extract_sync,
        web_search,
        web_search_sync,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "Document",
    "ErrorInfo",
    "ExtractArgs",
    "ExtractResponse",
    "Record",
    "SearchArgs",
    "SearchResponse",
    "SearchResult",
    "Settings",
    "__version__",
    "load_settings",
    "render",
    "tool_definitions",
    "web_extract",
    "web_extract_sync",
    "web_search",
    "web_search_sync",
]
