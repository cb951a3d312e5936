"""extract-pipeline: URLs in, clean bounded LLM-ready text out."""

from pipeline.models import (
    Document,
    ErrorInfo,
    ExtractResponse,
    Record,
    SearchResponse,
    SearchResult,
)
from pipeline.settings import Settings, load_settings

__version__ = "0.1.0"

# The kernel is imported on first use so that ``import pipeline`` stays light (no aiohttp).
_LAZY = {name: "pipeline.web" for name in
         ("web_search", "web_extract", "web_search_sync", "web_extract_sync", "SearchArgs",
          "ExtractArgs")}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
    "web_extract",
    "web_extract_sync",
    "web_search",
    "web_search_sync",
]
