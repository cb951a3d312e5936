"""PDF: text per page with ``--- page N ---`` markers, bounded in pages and time.

Running headers and footers (page numbers included) are dropped; the title is the Info
dictionary's, else the first line of page 1.

Built on pypdfium2 (the ``pdf`` extra), chosen over pypdf by ``benchmarks/pdf_choice.py``:
the same words in the same order on every test PDF, 7–15× less CPU per page. Imported lazily:
without it a PDF is ``unsupported_type`` with the install command in the message.

Options read from ``ctx.options`` (the settings of the same names): ``pdf_max_pages``
(default 200) and ``pdf_time_limit`` (seconds, default 20); pages past either cap are left out
and the document says so.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from handlers.decode import clean_text
from handlers.pdf_bounds import check_inflated_size
from handlers.registry import HandlerContext
from handlers.sniff import classify
from pipeline.core.errors import PipelineError
from pipeline.core.extras import install_hint
from pipeline.core.models import Document

INSTALL_HINT = install_hint("pdf")

# PDFium is not thread-safe; agents may run handlers in threads, so calls are serialised.
_PDFIUM_LOCK = threading.Lock()
_NONCHARACTERS = re.compile("[\ufffe\uffff]")
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
EDGE_LINES = 2  # how deep into a page's top and bottom running headers/footers are sought
MIN_PAGES_FOR_RUNNING = 3
RUNNING_SHARE = 0.6
MAX_RUNNING_CHARS = 120
MAX_TITLE_CHARS = 200
_PDF_DATE = re.compile(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz]|[+-]\d{2}'?\d{2})?")


def page_marker(number: int) -> str:
    return f"--- page {number} ---"


def _clean_page(text: str) -> str:
    text = clean_text(_NONCHARACTERS.sub("", text))
    return _BLANK_RUNS.sub("\n\n", _TRAILING_SPACE.sub("\n", text)).strip()


# A page number as running footers and headers print it: the whole line, or at its start or
# end, apart from the rest by a separator ("ACME | 3", "3 · Report"); with a page word, a
# total and decorations ("Page 3 of 9", "- 3 -", "Seite 3 von 9", "p. 3", "[3]").
_PAGE_WORD = r"(?:page|p\.|pg\.?|seite|s\.|p[aá]gina|side|sida|strona|strana|стр\.?|страница)"
_SEPARATOR = r"(?:\s+[-–—|·•/]\s+|\s*[|·•]\s*|\s{2,}|\t)"
_BEFORE_NUMBER = re.compile(rf"(?:.*{_SEPARATOR})?[\[(\-–—\s]*(?:{_PAGE_WORD}\s*)?", re.I)
_AFTER_NUMBER = re.compile(
    rf"(?:\s*(?:of|von|de|sur|di|z|из|/)\s*\d+)?[\])\-–—\s]*(?:{_SEPARATOR}.*)?", re.I)
_NUMBER = re.compile(r"\d+")


def _edges(lines: list[str]) -> Iterator[tuple[str, int, str]]:
    """(slot, index, line) for the non-blank lines at a page's edges: slot ``top0`` is the
    first, ``bottom1`` the last but one. Short pages: only the first and the last, so body
    lines are never at stake."""
    filled = [index for index, line in enumerate(lines) if line.strip()]
    depth = EDGE_LINES if len(filled) > 2 * EDGE_LINES + 1 else 1
    for place, indices in (("top", filled[:depth]), ("bottom", filled[::-1][:depth])):
        for rank, index in enumerate(indices):
            if len(lines[index]) <= MAX_RUNNING_CHARS:
                yield f"{place}{rank}", index, lines[index]


def _furniture_keys(slot: str, line: str, page: int) -> Iterator[tuple[str, ...]]:
    """What a running line has in common with its peers on other pages: the same text at the
    same edge slot, or a page number (its offset from the page's own) in the same words."""
    text = line.strip().lower()
    yield slot, text
    for number in _NUMBER.finditer(text):
        before, after = text[:number.start()], text[number.end():]
        if _BEFORE_NUMBER.fullmatch(before) and _AFTER_NUMBER.fullmatch(after):
            yield slot, f"{before}#{after}", str(int(number[0]) - page)


def drop_running_lines(pages: list[str], numbers: list[int] | None = None) -> list[str]:
    """Remove running headers and footers: lines at the same edge position of most pages that
    repeat there word for word, or differ only by the page's number ("Page 3 of 9", a bare
    page number). ``numbers`` are the pages' numbers (default 1, 2, ...). Body text that
    differs from page to page ("Section 3: Widget sales", "Total: 120 units") is never
    furniture."""
    if len(pages) < MIN_PAGES_FOR_RUNNING:
        return pages
    numbers = numbers or list(range(1, len(pages) + 1))
    split = [text.splitlines() for text in pages]
    candidates: list[dict[int, set[tuple[str, ...]]]] = []
    for lines, number in zip(split, numbers, strict=True):
        page: dict[int, set[tuple[str, ...]]] = {}
        for slot, index, line in _edges(lines):  # a one-line page: top0 and bottom0 at once
            page.setdefault(index, set()).update(_furniture_keys(slot, line, number))
        candidates.append(page)
    counts = Counter(key for page in candidates for key in set().union(*page.values()))
    running = {key for key, n in counts.items() if n >= RUNNING_SHARE * len(pages)}
    if not running:
        return pages
    kept = []
    for lines, page in zip(split, candidates, strict=True):
        edge = {index for index, keys in page.items() if keys & running}
        kept.append("\n".join(line for i, line in enumerate(lines) if i not in edge).strip())
    return kept


def _first_line_title(text: str) -> str | None:
    line = text.split("\n", 1)[0].strip()
    return line if 2 < len(line) <= MAX_TITLE_CHARS and any(c.isalpha() for c in line) else None


def pdf_date(value: str | None) -> str | None:
    """A PDF date (``D:YYYYMMDDHHmmSS+HH'mm'``) as ISO 8601, or None."""
    match = _PDF_DATE.match((value or "").strip())
    if not match:
        return None
    year, month, day, hour, minute, second, zone = match.groups()
    try:
        tz = None
        if zone and zone.upper() == "Z":
            tz = UTC
        elif zone:
            digits = zone.replace("'", "")
            offset = timedelta(hours=int(digits[1:3]), minutes=int(digits[3:5]))
            tz = timezone(offset if digits[0] == "+" else -offset)
        moment = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0),
                          int(minute or 0), int(second or 0), tzinfo=tz)
    except ValueError:
        return None
    return moment.isoformat()


def _metadata(info: dict[str, str], pages: int) -> dict[str, Any]:
    found = {
        "byline": (info.get("Author") or "").strip(),
        "published": pdf_date(info.get("CreationDate")),
        "modified": pdf_date(info.get("ModDate")),
        "description": (info.get("Subject") or "").strip(),
        "pages": pages,
    }
    return {key: value for key, value in found.items() if value}


def _open(pdfium: Any, body: bytes) -> Any:
    try:
        return pdfium.PdfDocument(body)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise PipelineError("extract", "PDF is encrypted and needs a password") from None
        raise PipelineError("extract", f"PDF is corrupt or unreadable: {exc}") from None


@dataclass(frozen=True)
class PdfHandler:
    """Text of each page, in order, under a ``--- page N ---`` marker (both formats)."""

    name: str = "pdf"
    media_types: tuple[str, ...] = ("application/pdf", "application/x-pdf")

    def sniff(self, head: bytes) -> bool:
        return classify(head).kind == "pdf"

    def handle(self, body: bytes, ctx: HandlerContext) -> Document:
        try:
            import pypdfium2 as pdfium
        except ImportError:
            raise PipelineError(
                "unsupported_type", f"PDF support is not installed: {INSTALL_HINT}"
            ) from None
        max_pages = ctx.options.pdf_max_pages
        time_limit = ctx.options.pdf_time_limit
        check_inflated_size(body)
        with _PDFIUM_LOCK:
            doc = _open(pdfium, body)
            try:
                total = len(doc)
                info = doc.get_metadata_dict(skip_empty=True)
                parts, stopped, read = self._pages(doc, total, max_pages, time_limit)
            except pdfium.PdfiumError as exc:
                raise PipelineError("extract", f"PDF is corrupt or unreadable: {exc}") from None
            finally:
                doc.close()
        first_line = _first_line_title(parts[0][1]) if parts and parts[0][0] == 1 else None
        texts = drop_running_lines([text for _, text in parts], [number for number, _ in parts])
        parts = [(number, text) for (number, _), text in zip(parts, texts, strict=True) if text]
        if not parts:
            if stopped == "time_limit":
                raise PipelineError("timeout", f"PDF text took over {time_limit:g} s")
            raise PipelineError(
                "empty", f"PDF has no extractable text ({total} pages; scanned images need OCR)"
            )
        metadata = _metadata(info, total)
        if stopped:
            reason = stopped.replace("_", " ")
            parts.append((0, f"--- stopped after {read} of {total} pages: {reason} ---"))
            metadata.update(pdf_stopped=stopped, pages_read=read)
        content = "\n\n".join(
            text if number == 0 else f"{page_marker(number)}\n\n{text}" for number, text in parts
        )
        title = (info.get("Title") or "").strip() or first_line
        return Document(title=title, content=content, format=ctx.format, metadata=metadata)

    @staticmethod
    def _pages(doc: Any, total: int, max_pages: int, time_limit: float
               ) -> tuple[list[tuple[int, str]], str | None, int]:
        """(page number, text) for non-empty pages, why reading stopped early (if it did), and
        how many pages were read."""
        deadline = time.monotonic() + time_limit
        parts: list[tuple[int, str]] = []
        for index in range(total):
            if index >= max_pages:
                return parts, "page_cap", index
            if time.monotonic() > deadline:
                return parts, "time_limit", index
            page = doc[index]
            textpage = page.get_textpage()
            try:
                text = _clean_page(textpage.get_text_range())
            finally:
                textpage.close()
                page.close()
            if text:
                parts.append((index + 1, text))
        return parts, None, total


PDF_HANDLER = PdfHandler()
