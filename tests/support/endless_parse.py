"""Loaded as a handler plugin (``--handler tests.support.endless_parse:handler``), this module
makes every XML sitemap parse endless in each process that imports it: the batch's own
process and its handler workers (their forkserver preloads handler plugins). So a run is
stuck parsing a sitemap wherever the parse runs — the stand-in for a document whose parse
would outlast every limit."""

from __future__ import annotations

from pipeline.batch.input.sitemaps import XmlLinks
from tests.support.faulty_handlers import _Faulty


def _endless(self: XmlLinks, data: bytes) -> list:
    while True:  # CPU-bound, like a backtracking regular expression
        pass


XmlLinks.feed = _endless  # type: ignore[method-assign]


handler = _Faulty("unused", lambda body: None)  # the plugin's handler: a type no page has
