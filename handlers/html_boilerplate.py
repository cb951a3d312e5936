"""Trim the chosen main-content node: header block, credits, end-of-article boilerplate."""

from __future__ import annotations

from lxml import etree


def trim_content(main: etree._Element, title: str | None, byline: str | None) -> None:
    """Remove in place what belongs in metadata or to the page furniture, not the body."""
