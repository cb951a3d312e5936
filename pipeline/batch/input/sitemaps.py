"""Sitemap documents, parsed as their bytes arrive: XML ``urlset`` / ``sitemapindex``
(sitemaps.org), plain-text sitemaps (one URL a line) and robots.txt ``Sitemap:`` lines.

The XML parser is lxml's pull parser fed chunk by chunk: each ``<loc>`` is handed out as soon
as its element ends and the elements before it are dropped, so a 50,000-URL sitemap never
exists as a tree. No entity is expanded, no DTD loaded, nothing fetched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

from lxml import etree

LinkKind = Literal["page", "sitemap"]
SITEMAP_ROOTS = frozenset({"urlset", "sitemapindex"})
FEED_ROOTS = frozenset({"rss", "feed", "RDF", "channel"})
# a <loc>'s parent says what it points to
_ENTRY: dict[str, LinkKind] = {"url": "page", "sitemap": "sitemap"}
_ROBOTS_SITEMAP = re.compile(rb"^\s*site-?map\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)


# What may come before the root element: spaces, a declaration, processing instructions,
# comments, a doctype (with its internal subset); then the root's (prefixed) name.
_ROOT = re.compile(rb"(?:\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>]|\[.*?\])*>)*"
                   rb"<(?:[A-Za-z_][\w.\-]*:)?([A-Za-z_][\w.\-]*)(?=[\s/>])", re.DOTALL)
_ROOT_SEARCH_BYTES = 1 << 20  # a prolog longer than this hides no sitemap


def _local(tag: object) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


class XmlLinks:
    """Incremental reader of one XML document: :meth:`feed` bytes, get the ``<loc>`` links
    found so far; :attr:`root` names the root element once seen (``urlset``,
    ``sitemapindex``, or a feed's ``rss``/``feed``/``RDF``, which this class leaves to
    :mod:`pipeline.batch.input.feeds`)."""

    def __init__(self) -> None:
        self.root: str | None = None
        self._head = b""
        # Only <loc> ends are reported (filtered inside lxml): one event per entry.
        self._parser = etree.XMLPullParser(
            events=("end",), tag="{*}loc", resolve_entities=False, no_network=True,
            load_dtd=False, huge_tree=False, remove_comments=True, remove_pis=True)

    def feed(self, data: bytes) -> list[tuple[LinkKind, str]]:
        """The links the bytes so far complete; raises ``etree.XMLSyntaxError`` on a
        document that is not well-formed (the links before it were handed out)."""
        if self.root is None:
            self._sniff(data)
        self._parser.feed(data)
        return self._links()

    def close(self) -> list[tuple[LinkKind, str]]:
        """The last links; raises ``etree.XMLSyntaxError`` on a truncated document."""
        self._parser.close()
        return self._links()

    def _sniff(self, data: bytes) -> None:
        self._head = (self._head + data)[:_ROOT_SEARCH_BYTES]
        match = _ROOT.match(self._head.removeprefix(b"\xef\xbb\xbf"))
        if match is not None:
            self.root = match.group(1).decode("ascii", errors="replace")
            self._head = b""
        elif len(self._head) >= _ROOT_SEARCH_BYTES:
            self.root = ""  # no root element in sight: not a sitemap

    def _links(self) -> list[tuple[LinkKind, str]]:
        found: list[tuple[LinkKind, str]] = []
        for _, element in self._parser.read_events():
            entry = element.getparent()
            if entry is None:
                continue
            kind = _ENTRY.get(_local(entry.tag))
            if kind is not None and element.text:
                found.append((kind, element.text.strip()))
            if (container := entry.getparent()) is not None:
                while entry.getprevious() is not None:  # the entries before: done with
                    del container[0]
        return found


def text_links(lines: bytes) -> Iterator[str]:
    """The URLs of a plain-text sitemap chunk (whole lines): one per non-blank line."""
    for line in lines.splitlines():
        url = line.strip()
        if url and not url.startswith(b"#"):
            yield url.decode("utf-8", errors="replace")


def robots_sitemaps(body: bytes) -> list[str]:
    """The ``Sitemap:`` URLs of a robots.txt."""
    return [match.decode("utf-8", errors="replace") for match in _ROBOTS_SITEMAP.findall(body)]
