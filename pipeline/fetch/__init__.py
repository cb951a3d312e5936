"""Everything between a URL and the bytes a handler sees."""

from pipeline.fetch.base import FakeFetcher, Fetcher, FetchError, FetchResult
from pipeline.fetch.client import HttpFetcher
from pipeline.fetch.media import is_binary_media_type
from pipeline.fetch.policy import NetworkPolicy
from pipeline.fetch.transport import FakeResponse, FakeTransport, Request, Transport
from pipeline.fetch.urls import normalize_url

__all__ = [
    "FakeFetcher",
    "FakeResponse",
    "FakeTransport",
    "FetchError",
    "FetchResult",
    "Fetcher",
    "HttpFetcher",
    "NetworkPolicy",
    "Request",
    "Transport",
    "is_binary_media_type",
    "normalize_url",
]
