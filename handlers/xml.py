"""XML, RSS and Atom: feeds as readable item lists, other XML as an indented outline.

Parsing never expands entities, never loads a DTD and never touches the network, so XXE and
"billion laughs" documents are inert; lxml's default limits (``huge_tree=False``) bound depth
and node size.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from handlers.decode import clean_text, decode_body
from handlers.registry import ContentHandler, HandlerContext
from handlers.sniff import classify
from pipeline.core.errors import PipelineError
from pipeline.core.models import Document

ATOM = "http://www.w3.org/2005/Atom"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_ENCODING_DECL = re.compile(r"^(\s*<\?xml[^>]*?)\s+encoding\s*=\s*[\"'][^\"']*[\"']")
_SPACES = re.compile(r"[ \t\r\f\v]+")
_LINE_RUNS = re.compile(r"\s*\n\s*")
_BLOCK_TAGS = ("p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote")
MAX_ATTRIBUTES = 4
MAX_ATTRIBUTE_CHARS = 80


def _parser(recover: bool) -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
        huge_tree=False, remove_comments=True, remove_pis=True, recover=recover,
    )


def parse_xml(body: bytes, charset: str | None = None) -> etree._Element:
    """The root element, parsed safely. Bytes go to lxml as they are (it honours the BOM and
    the XML declaration); if that fails, the text decoded by the header charset or detection
    is tried, and last a recovering parse of it."""
    try:
        return etree.fromstring(body, _parser(recover=False))
    except etree.XMLSyntaxError as exc:
        error = exc
    text = _ENCODING_DECL.sub(r"\1", decode_body(body, charset), count=1)
    for recover in (False, True):
        try:
            root = etree.fromstring(text, _parser(recover=recover)) if text.strip() else None
        except etree.XMLSyntaxError:
            continue
        if root is not None:
            return root
    raise PipelineError("extract", f"malformed XML: {error}")


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _elements(parent: etree._Element) -> Iterator[etree._Element]:
    # Entity references (never expanded) and other non-element nodes carry no content.
    return (child for child in parent if isinstance(child.tag, str))


def _own_text(element: etree._Element) -> str:
    """All text under an element, one line, unexpanded entity references left out."""
    loose = [element.text or ""]  # text directly inside, between the children
    chunks = [loose[0]]
    for child in element:
        if isinstance(child.tag, str):
            chunks.append(_own_text(child))
        chunks.append(child.tail or "")
        loose.append(child.tail or "")
    # Prose with inline markup keeps its own spacing ("un<b>believ</b>able"); children
    # without text around them are separate values and need a space between them.
    glue = "" if any(text.strip() for text in loose) else " "
    return _SPACES.sub(" ", glue.join(chunks).replace("\n", " ")).strip()


def strip_html(fragment: str) -> str:
    """Readable text of an HTML fragment (feed summaries): block breaks kept, scripts gone."""
    if "<" not in fragment:
        return _LINE_RUNS.sub("\n", _SPACES.sub(" ", fragment)).strip()
    try:
        root = lxml_html.fragment_fromstring(fragment, create_parent="div")
    except (etree.ParserError, ValueError):
        return _SPACES.sub(" ", fragment).strip()
    for element in root.iter("script", "style"):
        element.drop_tree()
    for element in root.iter(*_BLOCK_TAGS):
        element.tail = "\n" + (element.tail or "")
    text = _SPACES.sub(" ", root.text_content())
    return _LINE_RUNS.sub("\n", text).strip()


def _child(parent: etree._Element, *names: str) -> etree._Element | None:
    for name in names:
        for child in _elements(parent):
            if _local(child) == name:
                return child
    return None


def _child_text(parent: etree._Element, *names: str) -> str:
    child = _child(parent, *names)
    return _own_text(child) if child is not None else ""


def _title(parent: etree._Element) -> str:
    # Feed titles may hold escaped markup (Atom type="html"): keep only its text.
    return strip_html(_child_text(parent, "title"))


@dataclass
class FeedItem:
    title: str
    link: str
    date: str
    summary: str


def _atom_link(entry: etree._Element) -> str:
    links = [c for c in _elements(entry) if _local(c) == "link"]
    for link in links:
        if link.get("rel", "alternate") == "alternate" and link.get("href"):
            return link.get("href", "")
    return links[0].get("href", "") if links else ""


def _summary(item: etree._Element, *names: str) -> str:
    node = _child(item, *names)
    if node is None:
        return ""
    if next(_elements(node), None) is not None:  # Atom type="xhtml": markup as elements
        return strip_html(etree.tostring(node, encoding="unicode", method="html"))
    return strip_html(node.text or "")


def _feed_items(root: etree._Element, kind: str) -> tuple[etree._Element, list[FeedItem]]:
    if kind == "atom":
        entries = [c for c in _elements(root) if _local(c) == "entry"]
        return root, [
            FeedItem(_title(e), _atom_link(e),
                     _child_text(e, "published", "updated"), _summary(e, "summary", "content"))
            for e in entries
        ]
    channel = _child(root, "channel")
    head = channel if channel is not None else root
    # RSS 2.0 nests items in the channel; RSS 1.0 (RDF) puts them beside it.
    items = [c for c in (*_elements(head), *_elements(root)) if _local(c) == "item"]
    return head, [
        FeedItem(_title(i), _child_text(i, "link") or i.get(f"{{{RDF}}}about", ""),
                 _child_text(i, "pubDate", "date", "published", "updated"),
                 _summary(i, "description", "encoded", "summary"))
        for i in dict.fromkeys(items)
    ]


def _feed_kind(root: etree._Element) -> str | None:
    name = _local(root).lower()
    if name == "feed" and etree.QName(root).namespace in (ATOM, None):
        return "atom"
    if name == "rss":
        return "rss"
    if name == "rdf" and _child(root, "item", "channel") is not None:
        return "rdf"
    return None


def render_feed(root: etree._Element, kind: str, markdown: bool) -> Document:
    head, items = _feed_items(root, kind)
    title = _title(head) or None
    description = _child_text(head, "description", "subtitle")
    blocks = []
    if title:
        blocks.append(f"# {title}" if markdown else title)
    if description:
        blocks.append(strip_html(description))
    for item in items:
        name = item.title or item.link or "(untitled)"
        if markdown:
            lines = [f"## [{name}]({item.link})" if item.link else f"## {name}"]
        else:
            lines = [name, *([item.link] if item.link else [])]
        lines += [item.date] if item.date else []
        blocks.append("\n".join(lines) + (f"\n\n{item.summary}" if item.summary else ""))
    site = _child_text(head, "link") if kind != "atom" else _atom_link(head)
    metadata: dict[str, Any] = {
        "feed": kind, "items": len(items), "description": description, "site_url": site,
        "published": _child_text(head, "lastBuildDate", "pubDate", "updated", "date"),
        "lang": _child_text(head, "language") or root.get(XML_LANG),
    }
    return Document(title=title, content="\n\n".join(blocks),
                    metadata={k: v for k, v in metadata.items() if v})


def _attributes(element: etree._Element) -> str:
    pairs = [(etree.QName(k).localname, v) for k, v in element.attrib.items()][:MAX_ATTRIBUTES]
    shown = " ".join(f"{k}={v[:MAX_ATTRIBUTE_CHARS]}" for k, v in pairs)
    return f" [{shown}]" if shown else ""


def _outline(element: etree._Element, depth: int, lines: list[str]) -> None:
    children = list(_elements(element))
    own = _SPACES.sub(" ", (element.text or "").replace("\n", " ")).strip()
    label = "  " * depth + _local(element) + _attributes(element)
    mixed = own or any((c.tail or "").strip() for c in children)
    if not children or mixed:  # a leaf, or prose with inline markup: one line of text
        text = _own_text(element)
        lines.append(f"{label}: {text}" if text else label)
        return
    lines.append(label)
    for child in children:
        _outline(child, depth + 1, lines)


def render_outline(root: etree._Element, markdown: bool) -> Document:
    lines: list[str] = []
    _outline(root, 0, lines)
    body = "\n".join(lines)
    title_node = _child(root, "title")
    if title_node is None:
        title_node = next((_child(c, "title") for c in _elements(root)
                           if _child(c, "title") is not None), None)
    title = _own_text(title_node) if title_node is not None else None
    content = f"```text\n{body}\n```" if markdown else body
    return Document(title=title or None, content=content, metadata={"root": _local(root)})


def _html_handler() -> ContentHandler | None:
    from handlers import default_registry  # late: the registry imports this module

    try:
        handler = default_registry().select("text/html", b"<html>")
    except PipelineError:
        return None
    return None if handler.name == XmlHandler.name else handler


@dataclass(frozen=True)
class XmlHandler:
    """RSS/Atom feeds as readable items; any other XML as an indented outline."""

    name: str = "xml"
    media_types: tuple[str, ...] = ("application/xml", "text/xml", "*/*+xml")

    def sniff(self, head: bytes) -> bool:
        return classify(head).kind in ("xml", "feed")

    def handle(self, body: bytes, ctx: HandlerContext) -> Document:
        root = parse_xml(body, ctx.charset)
        if _local(root).lower() == "html":  # XHTML served as XML is a web page
            html = _html_handler()
            if html is not None:
                return html.handle(body, ctx)
        markdown = ctx.format == "markdown"
        kind = _feed_kind(root)
        document = render_feed(root, kind, markdown) if kind else render_outline(root, markdown)
        document.content = clean_text(document.content).strip()
        if not _own_text(root) and not document.metadata.get("items"):
            raise PipelineError("empty", "XML document has no text")
        document.format = ctx.format
        return document


XML_HANDLER = XmlHandler()
