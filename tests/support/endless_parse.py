"""Loaded as a handler plugin (``--handler tests.support.endless_parse:handler``), this module
makes every XML sitemap parse endless in each process that imports it: the batch's own
process and its handler workers (their forkserver preloads handler plugins). So a run is
stuck parsing a sitemap wherever the parse runs — the stand-in for a document whose parse
would outlast every limit."""

from __future__ import annotations

from pipeline.batch.input.sitemaps import XmlLinks
from pipeline.core.models import Document


def _endless(self: XmlLinks, data: bytes) -> list:
    while True:  # CPU-bound, like a backtracking regular expression
        pass


XmlLinks.feed = _endless  # type: ignore[method-assign]


class _Unused:
    """The plugin's handler: a media type no page has."""

    name = "unused"
    media_types = ("application/x-test-unused",)

    def sniff(self, head: bytes) -> bool:
        return False

    def handle(self, body: bytes, ctx) -> Document:
        return Document(content=body.decode())


handler = _Unused()
