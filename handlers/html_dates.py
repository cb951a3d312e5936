"""Dates as ISO 8601: ``2024-09-05``, or a full timestamp with its offset when the page
gives the time (``2024-09-05T10:00:00+02:00``).

:func:`iso_date` normalises what pages declare (JSON-LD, ``<meta>``, ``<time datetime>``) and
what they show ("Sep 5, 2024", "5 September 2024", "05.09.2024", "9/5/2024" when the order is
unambiguous). :func:`dateline` finds the date a page shows under its headline. Our own small
parser: htmldate (measured on the modern-web-dev set) cost 5.6 ms median on each page without
a declared date and gave a date to 137 of 238 pages that have none; see benchmarks/README.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, datetime

from lxml import etree

_MONTHS = {name: number for number, names in enumerate((
    ("jan", "january", "janeiro", "enero", "janvier", "januar", "gennaio"),
    ("feb", "february", "fevereiro", "febrero", "février", "fevrier", "februar", "febbraio"),
    ("mar", "march", "março", "marco", "marzo", "mars", "märz", "maerz"),
    ("apr", "april", "abril", "avril", "aprile"),
    ("may", "maio", "mayo", "mai", "maggio"),
    ("jun", "june", "junho", "junio", "juin", "juni", "giugno"),
    ("jul", "july", "julho", "julio", "juillet", "juli", "luglio"),
    ("aug", "august", "agosto", "août", "aout"),
    ("sep", "sept", "september", "setembro", "septiembre", "septembre", "settembre"),
    ("oct", "october", "outubro", "octubre", "octobre", "oktober", "ottobre"),
    ("nov", "november", "novembro", "noviembre", "novembre"),
    ("dec", "december", "dezembro", "diciembre", "décembre", "decembre", "dezember",
     "dicembre"),
), start=1) for name in names}
_MONTH = r"(?P<month>[^\W\d_]{3,10})\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th|º)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_ISO = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d\d)-(?P<day>\d\d)"
    r"(?:[T ](?P<time>\d\d:\d\d(?::\d\d)?)(?:\.\d+)?\s*(?P<zone>Z|[+-]\d\d:?\d\d)?)?")
_TEXTUAL = (
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),  # Sep 5, 2024
    re.compile(rf"\b{_DAY}\.?\s+(?:de\s+)?{_MONTH},?\s+(?:de\s+)?{_YEAR}\b",
               re.IGNORECASE),  # 5 September 2024, 5 de setembro de 2024
)
_NUMERIC = re.compile(
    r"\b(?P<a>\d{1,2})(?P<sep>[./])(?P<b>\d{1,2})(?P=sep)(?P<year>(?:19|20)\d\d)\b")
_SLASHED_ISO = re.compile(r"\b(?P<year>(?:19|20)\d\d)/(?P<month>\d\d)/(?P<day>\d\d)\b")
_DATELINE_CHARS = 500  # text read after the headline, looking for its date
_BEFORE_CHARS = 120  # ... and just above it


def _valid(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def _from_iso(match: re.Match[str]) -> str | None:
    day = _valid(int(match["year"]), int(match["month"]), int(match["day"]))
    if day is None or not match["time"]:
        return day
    zone = match["zone"] or ""
    if zone and zone != "Z" and ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    try:
        return datetime.fromisoformat(f"{day}T{match['time']}{zone}").isoformat()
    except ValueError:
        return day


def _textual(text: str) -> tuple[int, str] | None:
    """(position, ISO day) of the first date written with a month name."""
    found = []
    for pattern in _TEXTUAL:
        for match in pattern.finditer(text):
            month = _MONTHS.get(match["month"].lower())
            day = month and _valid(int(match["year"]), month, int(match["day"]))
            if day:
                found.append((match.start(), day))
                break
    return min(found) if found else None


def _numeric(text: str) -> tuple[int, str] | None:
    """(position, ISO day) of the first all-digit date whose order is unambiguous: day and
    month are told apart when one is above 12; dots mean day first (05.09.2024)."""
    for match in _SLASHED_ISO.finditer(text):
        day = _valid(int(match["year"]), int(match["month"]), int(match["day"]))
        if day:
            return match.start(), day
    for match in _NUMERIC.finditer(text):
        a, b, year = int(match["a"]), int(match["b"]), int(match["year"])
        if match["sep"] == "." or a > 12:
            day = _valid(year, b, a)
        elif b > 12:
            day = _valid(year, a, b)
        else:
            continue
        if day:
            return match.start(), day
    return None


def iso_date(value: str | None) -> str | None:
    """``value`` (a declared or shown date) in ISO 8601, or None when it holds no date."""
    if not value:
        return None
    found = [hit for hit in (_textual(value), _numeric(value)) if hit]
    match = _ISO.search(value)
    if match and (not found or match.start() <= min(found)[0]):
        return _from_iso(match)
    return min(found)[1] if found else None


def dateline(headline: etree._Element | None) -> str | None:
    """The date shown next to the headline — a byline's "Published Sep 5, 2024" under it, an
    "Updated: …" line just above it — as an ISO day, or None. Reads the cleaned page."""
    if headline is None:
        return None
    for text in (_text_after(headline), _text_before(headline)):
        hits = [hit for hit in (_textual(text), _numeric(text)) if hit]
        match = _ISO.search(text)
        day = match and _valid(int(match["year"]), int(match["month"]), int(match["day"]))
        if match and day:
            hits.append((match.start(), day))
        if hits:
            return min(hits)[1]
    return None


def _text_after(headline: etree._Element) -> str:
    pieces: list[str] = []
    seen = 0
    node: etree._Element | None = headline
    while node is not None and node.tag not in ("body", "html") and seen < _DATELINE_CHARS:
        for piece in _after(node):
            pieces.append(piece)
            seen += len(piece.strip())
            if seen >= _DATELINE_CHARS:
                break
        node = node.getparent()
    return " ".join(" ".join(pieces).split())[:_DATELINE_CHARS]


def _text_before(headline: etree._Element) -> str:
    """The short text just above the headline, in its own block."""
    previous = headline.getprevious()
    while previous is not None and not isinstance(previous.tag, str):
        previous = previous.getprevious()
    text = "" if previous is None else " ".join(" ".join(previous.itertext()).split())
    return text[-_BEFORE_CHARS:]


def _after(node: etree._Element) -> Iterator[str]:
    """Text after ``node`` inside its parent: its tail, then its following siblings."""
    yield node.tail or ""
    for sibling in node.itersiblings():
        if isinstance(sibling.tag, str):
            yield from sibling.itertext()
        yield sibling.tail or ""
