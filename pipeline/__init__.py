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

__all__ = [
    "Document",
    "ErrorInfo",
    "ExtractResponse",
    "Record",
    "SearchResponse",
    "SearchResult",
    "Settings",
    "__version__",
    "load_settings",
]
