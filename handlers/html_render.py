"""Render a cleaned lxml subtree as markdown or as plain text, in one walk.

Block elements start new paragraphs, inline ones flow; whitespace is collapsed as a browser
would. Markdown keeps headings, emphasis, links (made absolute), images (``data:`` ones become
``[image: alt]``), lists, blockquotes, fenced code with its language, and GFM tables.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from lxml import etree

from handlers.html_code import code_language, code_span, code_text, fenced, is_gutter
from handlers.html_dom import is_permalink, text_of
from handlers.html_table import cells, grid, is_layout, own_rows
from handlers.html_tags import BLOCK_TAGS

_SPACE = re.compile(r"[ \t\n\r\f\v\u00a0\u200b]+")
_MAX_DEPTH = 100  # each level costs up to ~5 Python frames; the limit is 1000
# Markdown's inline marks, and a "<" that would open raw HTML ("use the <div> tag").
_MD_ESCAPE = re.compile(r"([\\`*_\[\]]|<(?=[A-Za-z/!?]))")
# What would start a heading, list item, quotation, thematic break, code fence or HTML block
# at the start of a paragraph ("1984. That year …", "# of users", "- Sent from my phone").
_BLOCK_START = re.compile(r"(?:#{1,6}|[-+*]|\d{1,9}[.)])(?=\s|$)|[><]|---|~~~")
_ORDINAL = re.compile(r"\d{1,9}")
_HEADING = re.compile(r"(#{1,6} )(.*)", re.DOTALL)
_REPEAT_CHARS = 120  # longer repeated blocks may be meant (a refrain, a quoted line)
_BLOCK_TAG_LIST = tuple(sorted(BLOCK_TAGS))
# Characters a markdown link destination cannot hold bare.
_URL_UNSAFE = str.maketrans({" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E"})


def holds_blocks(element: etree._Element) -> bool:
    """Whether an inline element (a link, emphasis) wraps block elements: a card's heading
    and blurb, a list in ``<em>``."""
    # (most links and emphasis hold text alone: no descendants to look through)
    return len(element) > 0 and next(element.iterdescendants(*_BLOCK_TAG_LIST),
                                     None) is not None


def _escape_block_start(text: str) -> str:
    """``text`` with what would make a paragraph another block escaped."""
    match = _BLOCK_START.match(text)
    if match is None:
        return text
    if digits := _ORDINAL.match(text):  # "1984. That year": escape the dot, not a digit
        end = digits.end()
        return f"{text[:end]}\\{text[end:]}"
    return "\\" + text


def _url(base_url: str, href: str) -> str:
    return urljoin(base_url, href.strip()).translate(_URL_UNSAFE)


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
        if text and self.markdown and not prefix and not self.in_heading:
            text = _escape_block_start(text)
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

    def inner_blocks(self, element: etree._Element) -> list[str]:
        """Render a subtree on its own and return its blocks."""
        saved_blocks, saved_line = self.blocks, self.line
        self.blocks, self.line = [], []
        self.children(element)
        self.flush()
        blocks = self.blocks
        self.blocks, self.line = saved_blocks, saved_line
        return blocks

    def inner(self, element: etree._Element) -> str:
        """Render a subtree on its own and return its text."""
        return "\n\n".join(self.inner_blocks(element))

    # -- elements ----------------------------------------------------------------------------
    def heading(self, element: etree._Element, level: int) -> None:
        self.flush()
        self.in_heading += 1  # a heading is emphasis enough: no "## **Title**"
        try:
            # One line, whatever breaks it inside: "Results<br>and what they mean", a
            # permalink's <div>.
            self.line = [" ".join(self.inner_blocks(element))]
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
        if not self.markdown or self.in_heading or holds_blocks(element):
            self.children(element)  # emphasis cannot span blocks: "**- a - b**"
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
        self.line.append(code_span(text) if self.markdown and text.strip() else text)

    def tag_a(self, element: etree._Element) -> None:
        href = element.get("href")
        if is_permalink(element):
            return  # a heading's permalink anchor ("Path#", "§Examples", "Usage¶")
        if not self.markdown or not href or href.startswith("#"):
            self.children(element)
            return
        url = _url(self.base_url, href)
        if holds_blocks(element):  # a card: its heading (or first paragraph) is the link
            self._linked_blocks(element, url)
            return
        text = _SPACE.sub(" ", self.inner(element)).strip()
        if text:
            self.line.append(_spaced(element, f"[{text}]({url})"))

    def _linked_blocks(self, element: etree._Element, url: str) -> None:
        blocks = self.inner_blocks(element)
        self.flush()
        for index, block in enumerate(blocks):
            heading = _HEADING.fullmatch(block)
            prefix, text = heading.groups() if heading else ("", block)
            if "\n" not in text and "](" not in text and not _BLOCK_START.match(text):
                blocks[index] = f"{prefix}[{text}]({url})"
                break
        self.blocks.extend(blocks)

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
            self.line.append(f"![{alt}]({_url(self.base_url, src)})")

    def tag_pre(self, element: etree._Element) -> None:
        self.flush()
        text = code_text(element).strip("\n")
        if text.strip() and not is_gutter(text):
            self.blocks.append(fenced(text, code_language(element)) if self.markdown else text)

    def _list(self, element: etree._Element, ordered: bool) -> None:
        self.flush()
        items = []
        start = element.get("start", "").strip()
        number = int(start) - 1 if ordered and start.isdigit() and len(start) < 9 else 0
        for child in element:
            if child.tag != "li":
                self.walk(child)
                continue
            value = child.get("value", "").strip()
            number = int(value) if value.isdigit() and len(value) < 9 else number + 1
            blocks = self.inner_blocks(child)
            if not blocks:
                continue
            if self.markdown:
                marker = f"{number}. " if ordered else "- "
                # Tight: one line break between an item's blocks, two before a rule ("---"
                # right below a line of text would make that line a heading).
                text = "".join(("\n\n" if block == "---" else "\n") + block
                               for block in blocks)[1:].lstrip("\n")
                indent = " " * len(marker)
                items.append(marker + "\n".join(
                    indent + line if line and index else line
                    for index, line in enumerate(text.split("\n"))))
            else:
                items.append("\n\n".join(blocks))
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
        if is_layout(element):  # its cells' lists, code and tables stay what they are
            for row in own_rows(element):
                for cell in cells(row):  # each cell whole, as a one-column table's are
                    self.blocks.extend(self.inner_blocks(cell))
            return
        rows = grid(element, lambda cell: _SPACE.sub(" ", self.inner(cell)).strip())
        if not rows:
            return
        width = len(rows[0])
        if width == 1:  # a layout table: its cells are paragraphs
            self.blocks.extend(r[0] for r in rows if r[0])
            return
        if not self.markdown:  # plain text: a row is one line, no markdown escapes
            self.blocks.append("\n".join(" | ".join(c for c in cells if c) for cells in rows))
            return
        rows = [[cell.replace("|", "\\|") for cell in cells] for cells in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        self.blocks.append("\n".join(lines))


def render(element: etree._Element, *, markdown: bool, base_url: str = "") -> str:
    """The readable text of ``element``: markdown or plain text with blank-line paragraphs."""
    renderer = _Renderer(markdown, base_url)
    renderer.children(element)
    renderer.flush()
    return "\n\n".join(renderer.blocks)
