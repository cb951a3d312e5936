"""extract-pipeline: URLs in, clean bounded LLM-ready text out."""

from typing import TYPE_CHECKING, Any

from pipeline.core.errors import PipelineError
from pipeline.core.models import (
    CrawlResponse,
    Document,
    ErrorInfo,
    ExtractResponse,
    MapResponse,
    Record,
    SearchResponse,
    SearchResult,
)
from pipeline.core.settings import Settings, load_settings

__version__ = "0.1.0"

# Loaded on first use so `import pipeline` stays fast: the kernel pulls in aiohttp and the
# providers, the tools module pydantic schema machinery.
_LAZY = {
    "web_search": "pipeline.agent.kernel",
    "web_extract": "pipeline.agent.kernel",
    "web_search_sync": "pipeline.agent.kernel",
    "web_extract_sync": "pipeline.agent.kernel",
    "web_crawl": "pipeline.agent.crawl",
    "web_map": "pipeline.agent.crawl",
    "web_crawl_sync": "pipeline.agent.crawl",
    "web_map_sync": "pipeline.agent.crawl",
    "CrawlArgs": "pipeline.agent.crawl",
    "MapArgs": "pipeline.agent.crawl",
    "render": "pipeline.agent.rendering",
    "tool_definitions": "pipeline.agent.tools",
    "run_tool": "pipeline.agent.tools",
    "agent_tools": "pipeline.agent.tools",
    "FakeCompressor": "pipeline.store.compress",
    "SearchArgs": "pipeline.agent.kernel",
    "ExtractArgs": "pipeline.agent.kernel",
}

if TYPE_CHECKING:
    from pipeline.agent.crawl import (
        CrawlArgs,
        MapArgs,
        web_crawl,
        web_crawl_sync,
        web_map,
        web_map_sync,
    )
    from pipeline.agent.kernel import (
        ExtractArgs,
        SearchArgs,
        web_extract,
        web_extract_sync,
        web_search,
        web_search_sync,
    )
    from pipeline.agent.rendering import render
    from pipeline.agent.tools import agent_tools, run_tool, tool_definitions
    from pipeline.store.compress import FakeCompressor


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
    "CrawlArgs",
    "CrawlResponse",
    "Document",
    "ErrorInfo",
    "ExtractArgs",
    "ExtractResponse",
    "FakeCompressor",
    "MapArgs",
    "MapResponse",
    "PipelineError",
    "Record",
    "SearchArgs",
    "SearchResponse",
    "SearchResult",
    "Settings",
    "__version__",
    "agent_tools",
    "load_settings",
    "render",
    "run_tool",
    "tool_definitions",
    "web_crawl",
    "web_crawl_sync",
    "web_extract",
    "web_extract_sync",
    "web_map",
    "web_map_sync",
    "web_search",
    "web_search_sync",
]
