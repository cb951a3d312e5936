"""Everything between a URL and the bytes a handler sees."""

from pipeline.fetch.base import FakeFetcher, Fetcher, FetchError, FetchResult

__all__ = ["FakeFetcher", "FetchError", "FetchResult", "Fetcher"]
