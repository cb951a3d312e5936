"""JSON-LD blocks (``<script type="application/ld+json">``) as Python values, tolerantly.

Pages get JSON-LD wrong often: trailing commas, ``//`` comments, raw control characters
inside strings, single quotes, unescaped quotes, several objects in one block. A block is
read with :func:`json.loads` (``strict=False`` takes the control characters); one that fails
goes to json-repair, within a per-page character budget, since repairing runs in Python at
about a millisecond per KB. Nothing here raises: a block that cannot be read is skipped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lxml import etree

BLOCK_CHARS = 1_000_000  # a larger block is skipped: no page declares that much
PAGE_CHARS = 2_000_000  # JSON-LD read per page, all blocks together
REPAIR_CHARS = 20_000  # broken JSON-LD repaired per page (json-repair is slow per KB)
MAX_BLOCKS = 64
# Wrappers some CMSs put around the JSON: an HTML comment or a CDATA section.
_WRAPPER = re.compile(r"^\s*(?://\s*)?(?:<!--|<!\[CDATA\[)|(?://\s*)?(?:-->|\]\]>)\s*$")


def is_json_ld(script: etree._Element) -> bool:
    kind = script.get("type")
    return kind is not None and kind.split(";", 1)[0].strip().lower() == "application/ld+json"


def json_ld_values(root: etree._Element) -> list[Any]:
    """The JSON value of each readable JSON-LD block of the page, in document order."""
    values: list[Any] = []
    read = 0
    repair_left = REPAIR_CHARS
    for script in root.iter("script"):
        if not is_json_ld(script):
            continue
        text = script.text or ""
        if not text.strip() or len(text) > BLOCK_CHARS or read + len(text) > PAGE_CHARS:
            continue
        read += len(text)
        value, repaired = _decode(text, repair_left)
        repair_left -= repaired
        if isinstance(value, dict | list):
            values.append(value)
        if len(values) >= MAX_BLOCKS:
            break
    return values


_DECODER = json.JSONDecoder(strict=False)
_SEPARATORS = re.compile(r"[\s,;]*")


def _decode(text: str, repair_budget: int) -> tuple[Any, int]:
    """(the block's value or None, characters spent repairing)."""
    try:
        return json.loads(text, strict=False), 0
    except (ValueError, RecursionError):
        pass
    text = _WRAPPER.sub("", text)
    several = _several(text)
    if several is not None:
        return several, 0
    if len(text) > repair_budget:
        return None, 0
    try:
        from json_repair import loads as repair  # only pages with broken JSON-LD need it
    except ImportError:  # pragma: no cover - a core dependency; a broken install skips
        return None, 0
    try:
        return repair(text, skip_json_loads=True), len(text)
    except Exception:  # json-repair's own limits (recursion on deep nesting, ...)
        return None, len(text)


def _several(text: str) -> Any:
    """The value of a block that is valid JSON once unwrapped, or a list of the values of
    one holding several (``{…}{…}``, ``{…},{…}``); None otherwise."""
    values = []
    position = _skip(text, 0)
    try:
        while position < len(text):
            value, position = _DECODER.raw_decode(text, position)
            values.append(value)
            position = _skip(text, position)
    except (ValueError, RecursionError):
        return None
    return values[0] if len(values) == 1 else values or None


def _skip(text: str, position: int) -> int:
    """The position after the separators at ``position``."""
    match = _SEPARATORS.match(text, position)
    return match.end() if match else position
