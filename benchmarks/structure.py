"""Markdown structure on pages whose structure is known: ours vs trafilatura vs readability-lxml
+ markdownify / html2text, by element kind.

    python benchmarks/structure.py [--set fixtures|news|modern ...] [--only ours,trafilatura]
                                   [--no-write] [-v]

The known structure is what a page's HTML states, as a browser shows it: headings (``<h1>`` –
``<h6>``, a ``<br>`` inside read as a space), list items (an ``<li>``'s own text, without its
nested lists), data tables (rows × columns, ``rowspan``/``colspan`` expanded: a cell at its
first row and column, the slots it spans free; rows and columns with no text dropped; a table
is data when it nests no table, no list or ``<pre>`` sits in a cell, no cell holds over 400
characters and it has two rows and two columns) and code blocks (a ``<pre>``'s lines, a
``<br>`` or a block element inside it starting a new line; blank lines and indentation
aside). Elements are compared by their words (``\\w+`` tokens).

Only the structure inside the region the truth's text covers is counted, on both sides:

- ``fixtures``: hand-written pages (``benchmarks/structure_pages/``) of the cases the
  renderer must get right; the truth is the visible text of the page's ``<main>``, one line
  per block.
- ``news`` and ``modern``: the dev sets' pages (``../shared/datasets``); the truth is the set's
  ``articleBody``. A heading or list item counts when its words are at least half of one line
  of the truth; a table when 80% of its cells' words occur in the truth; a code block when 80%
  of its 4-word shingles do. That is the structure of the part of the page the truth keeps,
  as the page's markup states it — not a structure-preserving truth written by people.

Each extractor's markdown is parsed with a CommonMark + GFM-tables parser (markdown-it-py) and
read the same way. Scores, summed over the pages of a set: F1 of headings, list items and
table cells (multisets of their words); tables reproduced (a markdown table of the same shape
with at least 90% of the cells in place); code blocks found with their line breaks (the same
non-blank lines, in order). ``ours`` is the command line's ``--format markdown`` output
(through :class:`pipeline.extract.native.NativeExtractor`, truncation included).
Prints the table and writes it into ``benchmarks/README.md`` between the structure markers.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lxml import etree  # noqa: E402

from benchmarks.quality import (  # noqa: E402
    SETS,
    Page,
    available,
    command_line_records,
    load_set,
)
from benchmarks.readme_block import write_block  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "structure_pages"
_WORD = re.compile(r"\w+")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# What a browser starts on a new line (the HTML spec's block-level rendering).
_BLOCK_SPEC = (
    "address article aside blockquote body dd details div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tr "
    "td th ul caption")
_BLOCKS = frozenset(_BLOCK_SPEC.split())
_NOT_SHOWN = ("script", "style", "template", "head", "svg")
_CELL_CHARS = 400
_LINE_SHARE = 0.5  # a heading or list item is at least this share of a truth line
_TABLE_SHARE = 0.8
_CODE_SHARE = 0.8
_IN_PLACE = 0.9
_AROUND = 8  # words of context on each side of an element


def words(text: str) -> str:
    """The words of ``text``, space-separated: markup, punctuation and spacing aside."""
    return " ".join(_WORD.findall(text))


# --------------------------------------------------------------------------- the region
class Region:
    """What the truth's text covers."""

    def __init__(self, truth: str) -> None:
        self.text = f" {words(truth)} "
        self.lines = [f" {line} " for line in (words(ln) for ln in truth.splitlines()) if line]
        tokens = self.text.split()
        self.shingles = set(_shingles(tokens))

    def holds(self, text: str) -> bool:
        return f" {text} " in self.text

    def is_line(self, text: str) -> bool:
        """``text`` is most of one line of the truth (a heading, a list item)."""
        size = len(text.split())
        return any(f" {text} " in line and size >= _LINE_SHARE * (line.count(" ") - 1)
                   for line in self.lines)

    def covers(self, text: str) -> bool:
        tokens = text.split()
        if len(tokens) < 4:
            return self.holds(text)
        found = [s in self.shingles for s in _shingles(tokens)]
        return sum(found) >= _CODE_SHARE * len(found)


def _shingles(tokens: list[str]) -> Iterator[tuple[str, ...]]:
    return (tuple(tokens[i:i + 4]) for i in range(len(tokens) - 3))


# --------------------------------------------------------------------------- structure
Grid = list[list[str | None]]  # None: a slot a spanning cell covers


@dataclass(frozen=True)
class Part:
    """One element: its words (a table's grid, a code block's lines), and on the HTML side
    the words just before and after it on the page."""

    value: Any
    around: tuple[str, ...] = ()


@dataclass
class Structure:
    headings: list[Part] = field(default_factory=list)
    items: list[Part] = field(default_factory=list)
    tables: list[Part] = field(default_factory=list)  # value: a Grid
    code: list[Part] = field(default_factory=list)  # value: the block's non-blank lines
    text: list[str] = field(default_factory=list)  # all of it, in order (markdown only)

    def cells(self) -> list[str]:
        return [c for table in self.tables for row in table.value for c in row if c]

    def within(self, region: Region) -> Structure:
        """What lies in the truth's region: headings and list items that are most of a line
        of it, tables whose cells it holds, code blocks it covers."""
        return Structure(
            [h for h in self.headings if region.is_line(h.value)],
            [i for i in self.items if region.is_line(i.value)],
            [t for t in self.tables if _table_in(t.value, region)],
            [c for c in self.code if region.covers(" ".join(c.value))])

    def kept_in(self, text: Region) -> Structure:
        """What an output's text holds in some form (the element's words, in order), or
        holds the words around (an element lost from inside the text it kept)."""

        def kept(part: Part, held: bool) -> bool:
            return held or any(text.holds(words_) for words_ in part.around if words_)

        return Structure(
            [h for h in self.headings if kept(h, text.holds(h.value))],
            [i for i in self.items if kept(i, text.holds(i.value))],
            [t for t in self.tables if kept(t, _table_in(t.value, text))],
            [c for c in self.code if kept(c, text.covers(" ".join(c.value)))])


def _table_in(grid: Grid, region: Region) -> bool:
    cells = [c for row in grid for c in row if c]
    return bool(cells) and sum(region.holds(c) for c in cells) >= _TABLE_SHARE * len(cells)


def tidy(grid: Grid) -> Grid:
    """The grid without rows and columns that show no text; None where empty after that
    only for covered slots."""
    rows = [row for row in grid if any(row)]
    width = max((len(row) for row in rows), default=0)
    rows = [row + [""] * (width - len(row)) for row in rows]
    keep = [c for c in range(width) if any(row[c] for row in rows)]
    return [[row[c] for c in keep] for row in rows]


# --------------------------------------------------------------------------- HTML side
def _shown_text(element: etree._Element, out: list[str], skip: frozenset[str],
                br: str) -> None:
    """The text a browser shows, a block or a ``<br>`` adding a line break."""
    out.append(element.text or "")
    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag and tag not in skip:
            if tag == "br" or tag in _BLOCKS:
                out.append(br if tag == "br" else "\n")
            _shown_text(child, out, skip, br)
            if tag in _BLOCKS:
                out.append("\n")
        out.append(child.tail or "")


def shown(element: etree._Element, skip: frozenset[str] = frozenset(), br: str = "\n") -> str:
    out: list[str] = []
    _shown_text(element, out, skip, br)
    return "".join(out)


def _rows(table: etree._Element) -> Iterator[etree._Element]:
    for child in table:
        if child.tag == "tr":
            yield child
        elif child.tag in ("thead", "tbody", "tfoot"):
            yield from (row for row in child if row.tag == "tr")


def _span(cell: etree._Element, name: str) -> int:
    try:
        return max(1, min(int(cell.get(name) or 1), 100))
    except ValueError:
        return 1


def html_grid(table: etree._Element) -> Grid:
    """The table's cells on the grid their spans give them."""
    grid: dict[tuple[int, int], str | None] = {}
    rows = list(_rows(table))
    for r, row in enumerate(rows):
        c = 0
        for cell in (x for x in row if x.tag in ("td", "th")):
            while (r, c) in grid:
                c += 1
            rowspan, colspan = _span(cell, "rowspan"), _span(cell, "colspan")
            for dr in range(min(rowspan, len(rows) - r)):
                for dc in range(colspan):
                    grid[(r + dr, c + dc)] = None
            grid[(r, c)] = words(shown(cell))
            c += colspan
    height = len(rows)
    width = max((c + 1 for (_r, c) in grid), default=0)
    return tidy([[grid.get((r, c), "") for c in range(width)] for r in range(height)])


def _data_table(table: etree._Element) -> bool:
    if table.get("role") in ("presentation", "none"):
        return False
    if next(table.iterdescendants("table", "ul", "ol", "pre"), None) is not None:
        return False
    return all(len(" ".join(shown(c).split())) <= _CELL_CHARS for c in table.iter("td", "th"))


def _gutter(lines: list[str]) -> bool:
    """Line numbers beside a code block (1, 2, 3, ...), not code."""
    return lines == [str(n) for n in range(1, len(lines) + 1)]


def _code_lines(text: str) -> list[str]:
    return [line for line in (words(ln) for ln in text.splitlines()) if line]


def page_structure(body: bytes) -> Structure:
    """The structure the page's markup states."""
    root = etree.fromstring(body, etree.HTMLParser(encoding="utf-8", remove_comments=True))
    if root is None:
        return Structure()
    return element_structure(root)


def _spans(root: etree._Element, targets: set[etree._Element]) -> tuple[list[str],
                                                                       dict[Any, range]]:
    """The page's words in order, and where each target element's words lie among them."""
    tokens: list[str] = []
    spans: dict[Any, range] = {}

    def walk(element: etree._Element) -> None:
        start = len(tokens)
        tokens.extend(_WORD.findall(element.text or ""))
        for child in element:
            if isinstance(child.tag, str):
                walk(child)
            tokens.extend(_WORD.findall(child.tail or ""))
        if element in targets:
            spans[element] = range(start, len(tokens))

    walk(root)
    return tokens, spans


def element_structure(root: etree._Element) -> Structure:
    for element in list(root.iter(*_NOT_SHOWN)):
        element.getparent().remove(element)  # type: ignore[union-attr]
    found: list[tuple[str, etree._Element, Any]] = []
    in_tables: set[etree._Element] = set()
    for table in root.iter("table"):
        if _data_table(table):
            grid = html_grid(table)
            if len(grid) >= 2 and len(grid[0]) >= 2:
                found.append(("tables", table, grid))
                in_tables.update(table.iter())
    for heading in root.iter(*_HEADINGS):
        if heading not in in_tables and (text := words(shown(heading))):
            found.append(("headings", heading, text))
    for item in root.iter("li"):
        if text := words(shown(item, skip=frozenset({"ul", "ol", "dl"}))):
            found.append(("items", item, text))
    for pre in root.iter("pre"):
        lines = _code_lines(shown(pre))
        if lines and not _gutter(lines) and next(pre.iterancestors("pre"), None) is None:
            found.append(("code", pre, lines))
    tokens, spans = _spans(root, {element for _kind, element, _value in found})
    structure = Structure()
    for kind, element, value in found:
        span = spans[element]
        before = " ".join(tokens[max(0, span.start - _AROUND):span.start])
        after = " ".join(tokens[span.stop:span.stop + _AROUND])
        around = tuple(w for w in (before, after) if w.count(" ") >= _AROUND // 2)
        getattr(structure, kind).append(Part(value, around))
    return structure


# --------------------------------------------------------------------------- markdown side
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _inline_text(token: Any) -> str:
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak", "html_inline"):
            parts.append(" ")
    return "".join(parts)


def markdown_structure(markdown: str) -> Structure:
    """The structure a CommonMark + GFM-tables parser reads in ``markdown``."""
    found = Structure()
    items: list[list[str]] = []  # the open list items' own text
    containers: list[str] = []
    heading: list[str] | None = None
    table: list[list[str | None]] = []
    row: list[str | None] = []
    for token in _parser().parse(markdown):
        kind = token.type
        if kind.endswith("_open"):
            containers.append(kind)
        elif kind.endswith("_close"):
            containers.pop()
        if kind == "heading_open":
            heading = []
        elif kind == "heading_close" and heading is not None:
            found.headings.append(Part(words(" ".join(heading))))
            heading = None
        elif kind == "list_item_open":
            items.append([])
        elif kind == "list_item_close":
            text = words(" ".join(items.pop()))
            if text:
                found.items.append(Part(text))
        elif kind == "table_open":
            table = []
        elif kind == "tr_close":
            table.append(row)
            row = []
        elif kind == "table_close":
            found.tables.append(Part(tidy(table)))
        elif kind in ("fence", "code_block"):
            found.text.append(token.content)
            if items:  # an item's own text is all of it but its nested lists
                items[-1].append(token.content)
            if lines := _code_lines(token.content):
                found.code.append(Part(lines))
        elif kind == "inline":
            text = _inline_text(token)
            found.text.append(text)
            if items:
                items[-1].append(text)
            if heading is not None:
                heading.append(text)
            elif containers[-1:] in (["th_open"], ["td_open"]):
                row.append(words(text))
    return found


# --------------------------------------------------------------------------- scoring
@dataclass
class Score:
    """Counts summed over pages: (true positives, false positives, false negatives) per kind."""

    headings: list[int] = field(default_factory=lambda: [0, 0, 0])
    items: list[int] = field(default_factory=lambda: [0, 0, 0])
    cells: list[int] = field(default_factory=lambda: [0, 0, 0])
    tables: list[int] = field(default_factory=lambda: [0, 0])  # reproduced, declared
    code: list[int] = field(default_factory=lambda: [0, 0, 0])  # lines kept, found, declared
    pages: int = 0

    def add(self, other: Score) -> None:
        for name in ("headings", "items", "cells", "tables", "code"):
            mine, theirs = getattr(self, name), getattr(other, name)
            for index, value in enumerate(theirs):
                mine[index] += value
        self.pages += other.pages


def _values(parts: list[Part]) -> list[Any]:
    return [part.value for part in parts]


def _match(truth: list[str], predicted: list[str]) -> list[int]:
    common = sum((Counter(truth) & Counter(predicted)).values())
    return [common, len(predicted) - common, len(truth) - common]


def f1(counts: Sequence[int]) -> float | None:
    tp, fp, fn = counts
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None


def in_place(truth: Grid, predicted: Grid) -> tuple[bool, int]:
    """Whether ``predicted`` has ``truth``'s shape, and how many of its cells it has in place."""
    same_shape = len(truth) == len(predicted) and all(
        len(a) == len(b) for a, b in zip(truth, predicted, strict=False))
    placed = sum(1 for r, row in enumerate(truth) for c, cell in enumerate(row)
                 if cell and r < len(predicted) and c < len(predicted[r])
                 and predicted[r][c] == cell)
    return same_shape, placed


def reproduced(truth: Grid, candidates: list[Grid]) -> bool:
    cells = sum(1 for row in truth for cell in row if cell)
    for candidate in candidates:
        same_shape, placed = in_place(truth, candidate)
        if same_shape and placed >= _IN_PLACE * cells:
            return True
    return False


def _code_kept(truth: list[list[str]], predicted: list[list[str]]) -> list[int]:
    by_lines = Counter(tuple(block) for block in predicted)
    by_words = Counter(" ".join(block) for block in predicted)
    kept = found = 0
    for block in truth:
        if by_lines[tuple(block)] > 0:
            by_lines[tuple(block)] -= 1
            kept += 1
        if by_words[" ".join(block)] > 0:
            by_words[" ".join(block)] -= 1
            found += 1
    return [kept, found, len(truth)]


def compare(declared: Structure, read: Structure, region: Region) -> Score:
    """One page: the declared structure against the markdown's (``read``), both inside the
    truth's region."""
    inside = read.within(region)
    return Score(
        _match(_values(declared.headings), _values(inside.headings)),
        _match(_values(declared.items), _values(inside.items)),
        _match(declared.cells(), inside.cells()),
        [sum(reproduced(t.value, _values(read.tables)) for t in declared.tables),
         len(declared.tables)],
        _code_kept(_values(declared.code), _values(read.code)),
        1)


def score(declared: Structure, markdown: str, region: Region) -> tuple[Score, Score]:
    """One page, two ways: all the declared structure in the truth's region (what extraction
    lost counts as lost), and only the part whose words the markdown holds (rendering)."""
    read = markdown_structure(markdown)
    kept = declared.kept_in(Region(" ".join(read.text)))
    return compare(declared, read, region), compare(kept, read, region)


# --------------------------------------------------------------------------- pages
def load_fixtures(folder: Path = FIXTURES) -> list[Page]:
    """The hand-written pages. Each one's truth is the visible text of its ``<main>``, a line
    per block, without the headline (its ``<h1>``: the title, metadata in every truth)."""
    pages = []
    for path in sorted(folder.glob("*.html")):
        body = path.read_bytes()
        root = etree.fromstring(body, etree.HTMLParser(encoding="utf-8"))
        main = next(root.iter("main"))
        text = shown(main, skip=frozenset({"h1"}), br=" ")
        truth = "\n".join(ln.strip() for ln in text.splitlines() if ln.strip())
        pages.append(Page(path.stem, f"https://fixtures.example/{path.stem}", body, truth, ""))
    return pages


# --------------------------------------------------------------------------- extractors
def ours(pages: Sequence[Page]) -> list[str]:
    return [record.content or "" for record, _ms in
            command_line_records(pages, output_format="markdown")]


@functools.lru_cache(maxsize=1024)  # both converters take the same summary of a page
def _readability(body: bytes) -> str:
    from readability import Document as ReadabilityDocument

    return str(ReadabilityDocument(body.decode("utf-8", "replace")).summary(html_partial=True))


def trafilatura_markdown(body: bytes, url: str) -> str:
    import trafilatura

    return trafilatura.extract(body.decode("utf-8", "replace"), url=url,
                               output_format="markdown", include_comments=False,
                               include_tables=True, include_formatting=True,
                               include_links=True) or ""


def readability_markdownify(body: bytes, url: str) -> str:
    from markdownify import markdownify

    return str(markdownify(_readability(body), heading_style="ATX", bullets="-"))


def readability_html2text(body: bytes, url: str) -> str:
    import html2text

    converter = html2text.HTML2Text(baseurl=url, bodywidth=0)
    return str(converter.handle(_readability(body)))


def _each(convert: Callable[[bytes, str], str]) -> Callable[[Sequence[Page]], list[str]]:
    return lambda pages: [convert(page.body, page.url) for page in pages]


EXTRACTORS: dict[str, tuple[Callable[[Sequence[Page]], list[str]], tuple[str, ...]]] = {
    "ours": (ours, ()),
    "trafilatura": (_each(trafilatura_markdown), ("trafilatura",)),
    "readability+markdownify": (_each(readability_markdownify), ("readability", "markdownify")),
    "readability+html2text": (_each(readability_html2text), ("readability", "html2text")),
}


# --------------------------------------------------------------------------- report
def _cell(counts: Sequence[int]) -> str:
    value = f1(counts)
    declared = counts[0] + counts[2]
    return "–" if value is None else f"{value:.3f} ({declared})"


def table(results: dict[str, dict[str, Score]]) -> str:
    lines = ["| set | extractor | headings F1 | list items F1 | table cells F1 | "
             "tables reproduced | code blocks with line breaks | code blocks found |",
             "|---|---|---|---|---|---|---|---|"]
    for set_name, rows in results.items():
        for name, s in rows.items():
            reproduced_, declared = s.tables
            kept, found, blocks = s.code
            lines.append(
                f"| {set_name} ({s.pages}) | {name} | {_cell(s.headings)} | {_cell(s.items)} | "
                f"{_cell(s.cells)} | {reproduced_}/{declared} | {kept}/{blocks} | "
                f"{found}/{blocks} |")
    return "\n".join(lines)


def misses(page: Page, declared: Structure, markdown: str, region: Region) -> Iterator[str]:
    """What one page's markdown holds the words of but lost the structure of, or added."""
    read = markdown_structure(markdown)
    declared = declared.kept_in(Region(" ".join(read.text)))
    inside = read.within(region)
    for kind in ("headings", "items"):
        truth = Counter(_values(getattr(declared, kind)))
        got = Counter(_values(getattr(inside, kind)))
        for text in (truth - got):
            yield f"{page.id} {kind} missing: {text[:90]}"
        for text in (got - truth):
            yield f"{page.id} {kind} extra: {text[:90]}"
    for grid in _values(declared.tables):
        if not reproduced(grid, _values(read.tables)):
            yield (f"{page.id} table {len(grid)}x{len(grid[0])} not reproduced: "
                   f"{' | '.join(c or '' for c in grid[0])[:90]}")
    kept = Counter(tuple(block) for block in _values(read.code))
    for block in _values(declared.code):
        if kept[tuple(block)] == 0:
            yield f"{page.id} code ({len(block)} lines) lost: {' / '.join(block)[:90]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=["fixtures", *SETS],
                        help="repeatable; default: all three")
    parser.add_argument("--dataset", type=Path, help="one dataset folder instead of the sets")
    parser.add_argument("--fixtures", type=Path, default=FIXTURES,
                        help="the folder of hand-written pages")
    parser.add_argument("--only", help="comma-separated extractor names: " + ", ".join(EXTRACTORS))
    parser.add_argument("--no-write", action="store_true",
                        help="do not update benchmarks/README.md")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="list what ours lost or added, page by page")
    args = parser.parse_args(argv)
    if args.dataset and not (args.dataset / "ground-truth.json").is_file():
        parser.error(f"no ground-truth.json in {args.dataset}")
    loaders: dict[str, Callable[[], list[Page]]] = {
        "fixtures": lambda: load_fixtures(args.fixtures),
        **{name: functools.partial(load_set, path) for name, path in SETS.items()}}
    if args.dataset:
        loaders = {args.dataset.name: functools.partial(load_set, args.dataset)}
    sets = [args.dataset.name] if args.dataset else args.set or list(loaders)
    names = args.only.split(",") if args.only else list(EXTRACTORS)
    notes = [f"{name}: skipped (no dataset at {SETS[name]})" for name in sets
             if name in SETS and not args.dataset and not SETS[name].is_dir()]
    sets = [name for name in sets if name not in SETS or args.dataset or SETS[name].is_dir()]
    load_before = os.getloadavg()[0]
    results: dict[str, dict[str, Score]] = {}  # of the text each extractor kept
    pipeline: dict[str, dict[str, Score]] = {}  # of all in the truth's region
    for set_name in sets:
        pages = loaders[set_name]()
        regions = [Region(page.truth) for page in pages]
        declared = [page_structure(page.body).within(region)
                    for page, region in zip(pages, regions, strict=True)]
        for name in names:
            run, modules = EXTRACTORS[name]
            missing = [m for m in modules if not available(m)]
            if missing:
                notes.append(f"{name}: skipped ({', '.join(missing)} not installed)")
                continue
            in_region, rendered = Score(), Score()
            for page, markdown, region, truth in zip(pages, run(pages), regions, declared,
                                                     strict=True):
                whole, kept = score(truth, markdown, region)
                in_region.add(whole)
                rendered.add(kept)
                if args.verbose and name == "ours":
                    for line in misses(page, truth, markdown, region):
                        print(line)
            results.setdefault(set_name, {})[name] = rendered
            pipeline.setdefault(set_name, {})[name] = in_region
    options = "".join(f" --set {s}" for s in args.set or []) + (
        f" --only {args.only}" if args.only else "") + (
        f" --dataset {args.dataset}" if args.dataset else "")
    report = (
        "Structure read from each extractor's markdown with markdown-it-py (CommonMark + GFM "
        "tables), summed over the pages of a set; F1 with the number of declared elements in "
        "brackets. Machine load average "
        f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.\n\n"
        "**Rendering**: the declared structure whose words the extractor's output holds (what "
        "its extraction left out is not counted against its markdown):\n\n"
        + table(results) + "\n\n"
        "**Whole pipeline**: all the declared structure in the truth's region (what extraction "
        "left out counts as lost):\n\n"
        + table(pipeline) + "\n" + "".join(f"\n- {note}" for note in dict.fromkeys(notes))
        + f"\n\nCommand: `python benchmarks/structure.py{options}`")
    print(report)
    if not args.no_write and not args.dataset:
        write_block(report, "structure", "## Markdown structure")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
