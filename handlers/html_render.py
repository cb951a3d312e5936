"""Render a cleaned lxml subtree as markdown or as plain text, in one walk.

Block elements start new paragraphs, inline ones flow; whitespace is collapsed as a browser
would. Markdown keeps headings, emphasis, links (made absolute), images (``data:`` ones become
``[image: alt]``), lists, blockquotes, fenced code with its language, and GFM tables.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urljoin

from lxml import etree

from handlers.html_dom import is_permalink, text_of
from handlers.html_tags import BLOCK_TAGS

_SPACE = re.compile(r"[ \t\n\r\f\v\u00a0\u200b]+")
_LANGUAGE = re.compile(r"(?:lang(?:uage)?-|brush:\s*|highlight-source-|highlight-)([\w+#-]+)")
# Language names some highlighters (rustdoc, older plugins) put bare on <pre>/<code>.
_BARE_LANGUAGES = frozenset((
    "bash", "c", "cpp", "csharp", "css", "go", "haskell", "html", "java", "javascript", "js",
    "json", "kotlin", "lua", "perl", "php", "python", "ruby", "rust", "scala", "shell", "sql",
    "swift", "toml", "typescript", "xml", "yaml",
))
_MAX_DEPTH = 100  # each level costs up to ~5 Python frames; the limit is 1000
_MD_ESCAPE = re.compile(r"([\\`*_\[\]])")
_REPEAT_CHARS = 120  # longer repeated blocks may be meant (a refrain, a quoted line)


def code_language(element: etree._Element) -> str:
    """The language a ``<pre>`` block declares in its class (or its ``<code>``'s, or its
    highlighter wrapper's: ``<div class="highlight-source-python"><pre>``), if any."""
    parent = element.getparent()
    wrappers: tuple[etree._Element, ...] = () if parent is None else (parent,)
    for node in (element, *element.iterchildren("code"), *wrappers):
        match = _LANGUAGE.search(node.get("class") or "")
        if match:
            return match.group(1).lower()
        if language := node.get("data-lang"):
            return language.lower()
    for node in (element, *element.iterchildren("code")):  # <pre class="rust">
        bare = _BARE_LANGUAGES.intersection((node.get("class") or "").lower().split())
        if bare:
            return min(bare)
    return ""


def _spaced(element: etree._Element, formatted: str) -> str:
    """Keep the whitespace the element's text had at its edges outside the markup."""
    text = text_of(element)
    lead = " " if text[:1].isspace() else ""
    trail = " " if text[-1:].isspace() else ""
    return f"{lead}{formatted}{trail}"


class _Renderer:
    def __init__(self, markdown: bool, base_url: str) -> None:
        self.markdown = markdown
        self.base_url = base_url
        self.blocks: list[str] = []
        self.depth = 0
        self.in_heading = 0
        self.line: list[str] = []

    # -- output plumbing ------------------------------------------------------------------
    def flush(self, prefix: str = "") -> None:
        text = _SPACE.sub(" ", "".join(self.line)).strip()
        self.line = []
        # A short block repeating the one before is a slideshow's per-slide title or a label
        # rendered twice (its copies told apart only by a stylesheet we do not read).
        if text and (len(text) >= _REPEAT_CHARS or not self.blocks
                     or self.blocks[-1] != prefix + text):
            self.blocks.append(prefix + text)

    def inline(self, text: str | None) -> None:
        if text:
            self.line.append(_MD_ESCAPE.sub(r"\\\1", text) if self.markdown else text)

    # -- walking -----------------------------------------------------------------------------
    def walk(self, element: etree._Element) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        self.depth += 1
        try:
            if self.depth > _MAX_DEPTH:  # absurd nesting: keep the words, drop the structure
                self.inline(text_of(element))
            else:
                self._walk_tag(element, tag)
        finally:
            self.depth -= 1
        self.inline(element.tail)

    def _walk_tag(self, element: etree._Element, tag: str) -> None:
        handler = getattr(self, f"tag_{tag}", None)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.heading(element, int(tag[1]))
        elif handler is not None:
            handler(element)
        elif tag in BLOCK_TAGS:
            self.flush()
            self.children(element)
            self.flush()
        else:
            self.children(element)

    def children(self, element: etree._Element) -> None:
        self.inline(element.text)
        for child in element:
            self.walk(child)

    def inner(self, element: etree._Element) -> str:
        """Render a subtree on its own and return its text."""
        saved_blocks, saved_line = self.blocks, self.line
        self.blocks, self.line = [], []
        self.children(element)
        self.flush()
        text = "\n\n".join(self.blocks)
        self.blocks, self.line = saved_blocks, saved_line
        return text

    # -- elements ----------------------------------------------------------------------------
    def heading(self, element: etree._Element, level: int) -> None:
        self.flush()
        self.in_heading += 1  # a heading is emphasis enough: no "## **Title**"
        try:
            self.children(element)
        finally:
            self.in_heading -= 1
        self.flush("#" * level + " " if self.markdown else "")

    def tag_br(self, element: etree._Element) -> None:
        self.flush()

    def tag_hr(self, element: etree._Element) -> None:
        self.flush()
        if self.markdown:
            self.blocks.append("---")

    def _emphasis(self, element: etree._Element, mark: str) -> None:
        if not self.markdown or self.in_heading:
            self.children(element)
            return
        text = _SPACE.sub(" ", self.inner(element)).strip()
        if not text:
            return
        formatted = _spaced(element, f"{mark}{text}{mark}")
        previous = self.line[-1] if self.line else ""
        # Back-to-back runs (<b>Game D</b><b>ay</b>) join: "**Game D****ay**" is not markdown.
        if (previous.endswith(mark) and previous.startswith(mark)
                and not previous.endswith(mark + mark[0]) and formatted.startswith(mark)):
            self.line[-1] = previous[: -len(mark)] + formatted[len(mark):]
        else:
            self.line.append(formatted)

    def tag_strong(self, element: etree._Element) -> None:
        self._emphasis(element, "**")

    tag_b = tag_strong

    def tag_em(self, element: etree._Element) -> None:
        self._emphasis(element, "*")

    tag_i = tag_em

    def tag_code(self, element: etree._Element) -> None:
        text = text_of(element)
        self.line.append(f"`{text}`" if self.markdown else text)

    def tag_a(self, element: etree._Element) -> None:
        href = element.get("href")
        if is_permalink(element):
            return  # a heading's permalink anchor ("Path#", "§Examples", "Usage¶")
        if not self.markdown or not href or href.startswith("#"):
            self.children(element)
            return
        text = _SPACE.sub(" ", self.inner(element)).strip()
        if text:
            self.line.append(_spaced(element, f"[{text}]({urljoin(self.base_url, href.strip())})"))

    def tag_img(self, element: etree._Element) -> None:
        if not self.markdown:
            return
        alt = _SPACE.sub(" ", element.get("alt") or "").strip()
        src = (element.get("src") or "").strip()
        if not src or src.startswith("data:"):  # lazy loading keeps the real one aside
            lazy = element.get("data-src") or element.get("data-lazy-src") or element.get(
                "data-original")
            src = lazy.strip() if lazy else src
        if not alt:  # decorative (HTML's own rule for empty alt) or a tracking pixel
            return
        if src.startswith("data:"):
            self.line.append(f"[image: {alt}]")
        elif src:
            self.line.append(f"![{alt}]({urljoin(self.base_url, src)})")

    def tag_pre(self, element: etree._Element) -> None:
        self.flush()
        text = text_of(element).strip("\n")
        if text.strip():
            if self.markdown:
                self.blocks.append(f"```{code_language(element)}\n{text}\n```")
            else:
                self.blocks.append(text)

    def _list(self, element: etree._Element, ordered: bool) -> None:
        self.flush()
        items = []
        number = 0
        for child in element:
            if child.tag != "li":
                self.walk(child)
                continue
            number += 1
            text = self.inner(child)
            if not text:
                continue
            if self.markdown:
                marker = f"{number}. " if ordered else "- "
                text = text.replace("\n\n", "\n").replace("\n", "\n" + " " * len(marker))
                items.append(marker + text)
            else:
                items.append(text)
        self.flush()
        if items:  # one block: a tight list
            self.blocks.append("\n".join(items))

    def tag_ul(self, element: etree._Element) -> None:
        self._list(element, ordered=False)

    tag_menu = tag_ul

    def tag_ol(self, element: etree._Element) -> None:
        self._list(element, ordered=True)

    def tag_blockquote(self, element: etree._Element) -> None:
        self.flush()
        text = self.inner(element)
        if text:
            self.blocks.append("\n".join("> " + ln for ln in text.split("\n")) if self.markdown
                               else text)

    def tag_table(self, element: etree._Element) -> None:
        self.flush()
        rows = []
        for row in _own_rows(element):
            cells = [_SPACE.sub(" ", self.inner(cell)).strip()
                     for cell in row if cell.tag in ("td", "th")]
            if any(cells):
                rows.append(cells)
        if not rows:
            return
        width = max(len(r) for r in rows)
        if width == 1:  # a layout table: its cells are paragraphs
            self.blocks.extend(r[0] for r in rows if r[0])
            return
        if not self.markdown:  # plain text: a row is one line, no markdown escapes
            self.blocks.append("\n".join(" | ".join(c for c in cells if c) for cells in rows))
            return
        rows = [[cell.replace("|", "\\|") for cell in cells] for cells in rows]
        padded = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(padded[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(r) + " |" for r in padded[1:]]
        self.blocks.append("\n".join(lines))


def _own_rows(table: etree._Element) -> Iterator[etree._Element]:
    """The rows of ``table`` itself, not of tables nested in its cells (rendering those
    here as well doubled the work at each level: 22 nested tables took 33 s)."""
    for child in table:
        if child.tag == "tr":
            yield child
        elif child.tag in ("thead", "tbody", "tfoot"):
            yield from (row for row in child if row.tag == "tr")


def render(element: etree._Element, *, markdown: bool, base_url: str = "") -> str:
    """The readable text of ``element``: markdown or plain text with blank-line paragraphs."""
    renderer = _Renderer(markdown, base_url)
    renderer.children(element)
    renderer.flush()
    return "\n\n".join(renderer.blocks)
