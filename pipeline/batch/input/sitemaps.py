"""Sitemap documents, parsed as their bytes arrive: XML ``urlset`` / ``sitemapindex``
(sitemaps.org), plain-text sitemaps (one URL a line) and robots.txt ``Sitemap:`` lines.

The XML parser is lxml's pull parser fed chunk by chunk: each ``<loc>`` is handed out as soon
as its element ends and the elements before it are dropped, so a 50,000-URL sitemap never
exists as a tree. No entity is expanded, no DTD loaded, nothing fetched. Nothing here runs a
regular expression on the document's bytes (one that backtracks would let a few bytes hold
the parser for hours); it all runs in a worker process (:mod:`pipeline.batch.input.documents`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from lxml import etree

LinkKind = Literal["page", "sitemap"]
SITEMAP_ROOTS = frozenset({"urlset", "sitemapindex"})
FEED_ROOTS = frozenset({"rss", "feed", "RDF", "channel"})
# a <loc>'s parent says what it points to
_ENTRY: dict[str, LinkKind] = {"url": "page", "sitemap": "sitemap"}
_ROBOTS_FIELDS = (b"sitemap", b"site-map")
_ROOT_SEARCH_BYTES = 1 << 20  # a prolog longer than this hides no sitemap


def _local(tag: object) -> str:
    """An element's name without its namespace (or an undeclared prefix)."""
    return tag.rpartition("}")[2].rpartition(":")[2] if isinstance(tag, str) else ""


class XmlLinks:
    """Incremental reader of one XML document: :meth:`feed` bytes, get the ``<loc>`` links
    found so far; :attr:`root` names the root element once seen (``urlset``,
    ``sitemapindex``, or a feed's ``rss``/``feed``/``RDF``, which this class leaves to
    :mod:`pipeline.batch.input.feeds`)."""

    def __init__(self) -> None:
        self.root: str | None = None
        # The root element is lxml's first start event (libxml2 reads a prolog in linear
        # time, as it reads the rest: no regular expression guesses at it).
        self._roots: etree.XMLPullParser | None = etree.XMLPullParser(
            events=("start",), resolve_entities=False, no_network=True, load_dtd=False,
            huge_tree=False)
        self._sniffed = 0
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
        assert self._roots is not None
        self._roots.feed(data[:_ROOT_SEARCH_BYTES - self._sniffed])
        self._sniffed += len(data)
        for _, element in self._roots.read_events():
            self.root = _local(element.tag)
            break
        else:
            if self._sniffed >= _ROOT_SEARCH_BYTES:
                self.root = ""  # no root element in sight: not a sitemap
        if self.root is not None:
            self._roots = None

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
    """The ``Sitemap:`` URLs of a robots.txt (line by line: a regular expression with
    ``\\s*`` at each line start reads a run of blank lines again from every line of it)."""
    found = []
    for line in body.splitlines():
        field, colon, value = line.partition(b":")
        if colon and field.strip().lower() in _ROBOTS_FIELDS and (url := value.split()):
            found.append(url[0].decode("utf-8", errors="replace"))
    return found
