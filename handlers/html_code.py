"""Code on a page as markdown keeps it: a ``<pre>`` block's lines as a browser shows them, its
language, a fence no line of the code can close, and inline code spans."""

from __future__ import annotations

import re

from lxml import etree

from handlers.html_dom import text_of
from handlers.html_tags import BLOCK_TAGS

_LANGUAGE = re.compile(r"(?:lang(?:uage)?-|brush:\s*|highlight-source-|highlight-)([\w+#-]+)")
# Language names some highlighters (rustdoc, older plugins) put bare on <pre>/<code>.
_BARE_LANGUAGES = frozenset((
    "bash", "c", "cpp", "csharp", "css", "go", "haskell", "html", "java", "javascript", "js",
    "json", "kotlin", "lua", "perl", "php", "python", "ruby", "rust", "scala", "shell", "sql",
    "swift", "toml", "typescript", "xml", "yaml",
))
# Inside <pre>, what breaks a line besides "\n": <br>, and a block element (highlighters
# that write each line as a <div>).
_LINE_BREAKS = ("br", *sorted(BLOCK_TAGS - {"pre"}))
_BACKTICKS = re.compile(r"`+")


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


def code_text(element: etree._Element) -> str:
    """A code block's text as shown: its own line breaks, plus one for each ``<br>`` and
    around each block element inside (serialised as text, a ``<br>`` is nothing and a
    highlighter's line ``<div>`` runs into the next)."""
    if not len(element) or next(element.iterdescendants(*_LINE_BREAKS), None) is None:
        return text_of(element)
    parts: list[str] = []
    _lines(element, parts)
    return "".join(parts)


def _lines(element: etree._Element, parts: list[str]) -> None:
    parts.append(element.text or "")
    for child in element:
        tag = child.tag
        tail = child.tail or ""
        if tag == "br":
            parts.append("\n")
        elif isinstance(tag, str):
            block = tag in BLOCK_TAGS
            if block:
                _new_line(parts)
            _lines(child, parts)
            if block:
                _new_line(parts)
                tail = tail.removeprefix("\n")  # the line break the block already made
        parts.append(tail)


def _new_line(parts: list[str]) -> None:
    """End the current line, unless nothing is on it."""
    last = next((part for part in reversed(parts) if part), "\n")
    if not last.endswith("\n"):
        parts.append("\n")


def is_gutter(text: str) -> bool:
    """The line numbers a highlighter sets beside its code (1, 2, 3, …): not code."""
    lines = text.split()
    return len(lines) >= 2 and lines == [str(n) for n in range(1, len(lines) + 1)]


def fenced(code: str, language: str) -> str:
    """``code`` in a fence longer than any run of backticks inside it (CommonMark: a fence
    closes at a line of at least as many backticks)."""
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{language}\n{code}\n{marks}"


def code_span(text: str) -> str:
    """``text`` as an inline code span, delimited by more backticks than it holds."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    marks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{marks}{pad}{text}{pad}{marks}"
