"""Trim the chosen main-content node: header block, captions and credits, page furniture.

What the body of an article does not include: its headline, byline and dateline (reported
as metadata instead), image captions, photo credits and gallery counters, and the widgets
pages put inside the article container — share bars, "related" link lists, ad labels.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree

from handlers.html_dom import drop, heading_text, inside_code, text_length, text_of
from handlers.html_extract import class_weight, link_density
from handlers.html_tags import BLOCK_TAGS

_FURNITURE_NAMES = re.compile(
    r"caption|credit|share|"
    r"social|related|recommend|tags|subscribe|newsletter|promo|advert|sponsor|gallery-count|"
    r"\bmeta\b|entry-meta|post-meta|article-meta|kicker|breadcrumb|read-more|more-link",
)
# Who wrote it and when: metadata in an article, content in each post of a discussion.
_ATTRIBUTION_NAMES = re.compile(r"byline|dateline|author|timestamp|published|updated|posted")
# What a forum shows beside each post besides its author and date: the poster's stats and
# badges, their signature.
_POSTER_FURNITURE = re.compile(
    r"signature|user-?(?:extras|stats|badges|title|info-?extra)|badges?\b|reputation|"
    r"post-?count|member-?(?:stats|since)|joined")
_CREDIT = re.compile(
    r"^\W*(?:photo|image|picture|foto|illustration|graphic|video|source|credit)s?"
    r"(?:\s+(?:credit|by|courtesy|source))?\s*[:(|©]",
)
# Credit lines naming a stock-photo agency ("Jane Roe/Getty Images"); news agencies are left
# alone, as "… told Reuters." closes sentences too.
_PHOTO_AGENCY = re.compile(r"(?:getty ?images|shutterstock|istock(?:photo)?|alamy)\W*$")
_COUNTER = re.compile(r"^\W*(?:image|photo|slide|picture)?\s*\d+\s*(?:of|/)\s*\d+\W*$",
                      re.IGNORECASE)
_LABEL_WORDS = frozenset((
    "advertisement", "advert", "ad", "sponsored", "sponsored content", "caption", "close",
    "video", "share", "share this", "share this article", "tags", "comments", "expand",
    "enlarge this image", "toggle caption", "hide caption", "back to gallery", "text size",
    "print", "email", "read more", "continue reading", "see more", "skip ad", "more",
    "topics",
))
# "Related: <headline>", "Read more: …" — a pointer to another page, not a sentence.
_PROMO_LEAD = re.compile(
    r"^(?:related(?: (?:posts?|stories|articles?|content|coverage|reading))?|"
    r"read (?:more|also|next)|see also|also read|more|recommended|watch|listen)\s*:"
)
_DATE = re.compile(
    r"\b(?:\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{4}-\d{2}-\d{2}|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}|"
    r"\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|"
    r"\d{1,2}:\d{2}\s*(?:am|pm)?|(?:updated|published|posted)\b)",
)
# Blocks that can be a list of links rather than prose.
_CONTAINERS = frozenset({"div", "section", "ul", "ol", "aside", "table", "dl", "p", "figure",
                         "header", "footer"})
_PROSE_CHARS = 150
_Links = dict[etree._Element, int]
# A sentence ends with a period after a word of 3+ letters (not "p.m." or "Jan.").
_SENTENCE_END = re.compile(r"[^\W\d_]{3,}[.!?。]['\"”’)]?$")
_TEASER_CHARS = 800
_HEADER_SCAN = 12  # blocks looked at before the first real paragraph
_PARAGRAPH_CHARS = 120
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_TABLE_PARTS = frozenset({"td", "th", "tr", "tbody", "thead", "tfoot", "caption"})
_TAIL_SCAN = 12  # blocks looked at from the end of the article
_TAIL_CHARS = 300
# Calls to action and credits that close articles. Mostly anchored or phrased as commands, so
# that a last sentence merely mentioning Twitter or a download is not mistaken for one.
_CALL_TO_ACTION = re.compile(
    r"^(?:subscribe|sign up|join|follow|share|download|read more|click|learn more|"
    r"get (?:the|our)|don't miss|like this|tell us|leave a|related|more (?:great|from|in|"
    r"on|stories|news))\b|"
    r"newsletter|click here|subscribe (?:to|now|today|for)|follow (?:us|him|her|them) on|"
    r"like this (?:story|article)|\brelated (?:stories|posts|articles|coverage|content)\b|"
    r"have a (?:news )?tip|contact us|\S+@\S+\.\w{2,}|twitter\.com/|"
    r"reporting by|editing by|contributed to this report|additional reporting|"
    r"contributed reporting|^contributing:|filed under|back to gallery|what do you think|"
    r"^comments?$",
    re.IGNORECASE,
)


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


@lru_cache(maxsize=8192)
def _furniture_name(label: str | None, ident: str | None, discussion: bool) -> bool:
    """Whether an element's raw class and id name page furniture (a page repeats them)."""
    text = f"{label or ''} {ident or ''}".lower()
    return bool(text.strip()) and bool(
        _FURNITURE_NAMES.search(text) or _POSTER_FURNITURE.search(text)
        or (not discussion and _ATTRIBUTION_NAMES.search(text)))


def _removable_by_name(element: etree._Element, discussion: bool, links: _Links) -> bool:
    # Blockquotes are quotations or embedded posts ("social" embeds): content, whatever named.
    label, ident = element.get("class"), element.get("id")
    if not (label or ident) or element.tag == "blockquote":
        return False
    return _furniture_name(label, ident, discussion) and (
        text_length(element) < 300 or link_density(element, links) > 0.5
    )


def _is_furniture_text(text: str) -> bool:
    squashed = _squash(text)
    if not squashed:
        return False
    short = squashed.strip(" :|·•-–—")
    return short in _LABEL_WORDS or (len(short) < 200 and bool(
        _CREDIT.match(short) or _COUNTER.match(short) or _PROMO_LEAD.match(squashed)
        or _PHOTO_AGENCY.search(short)))


def _data_table(table: etree._Element) -> bool:
    """A table of data: a header row or several columns over several rows."""
    rows = table.findall(".//tr")
    if table.find(".//th") is not None and len(rows) >= 2:
        return True
    return len(rows) >= 3 and max(len(r.findall("td")) for r in rows) >= 3


def _inside_data_tables(main: etree._Element) -> set[etree._Element]:
    """Everything inside a data table: its cells are data whatever they hold (a cell that
    is a link in a ``<div>`` is a name in a list of names, not a link block)."""
    return {node for table in main.iter("table") if _data_table(table)
            for node in table.iterdescendants()}


def _link_block(element: etree._Element, links: _Links) -> bool:
    """A block of links (related stories, tag lists) rather than prose."""
    if element.tag not in _CONTAINERS or next(element.iter("a"), None) is None:
        return False  # no link at all: no need to measure
    if element.tag == "table" and _data_table(element):
        return False  # rows of linked names with figures: data, not navigation
    length = text_length(element)
    if not length:
        return False
    density = link_density(element, links)
    if element.tag == "p" and (length * (1 - density) >= _PROSE_CHARS or density < 0.8):
        # A paragraph is prose unless it is nearly all link ("Related: <headline>").
        return False
    weight = class_weight(element)
    return density > 0.5 or (weight < 0 and density > 0.25 and length < 1000)


def _dateline_like(text: str) -> bool:
    """Short and not a sentence: "By Jane Doe", "Updated 5:27 am, Nov. 20, 2019"."""
    return len(text) < 80 and len(text.split()) < 12 and not _SENTENCE_END.search(text)


_WORD = re.compile(r"[^\W\d_]")  # a letter: prose has them; a price or a counter has none


def _line_break(node: etree._Element) -> bool:
    return isinstance(node.tag, str) and (node.tag in BLOCK_TAGS or node.tag == "br")


def _alone_on_its_line(element: etree._Element, main: etree._Element) -> bool:
    """Whether an inline element is all the words of the line it is shown on (a headline
    link among blocks) rather than words inside a line of prose ("Call <code>f()</code>
    with…"). The line runs to the nearest block or ``<br>`` on each side; in a heading,
    every line is the header's (a headline link beside its date)."""
    block = next((a for a in element.iterancestors() if a.tag in BLOCK_TAGS), None)
    if block is not None and block.tag in _HEADINGS:
        return True
    node = element
    while (parent := node.getparent()) is not None:
        if _WORD.search(node.tail or ""):
            return False
        for after in node.itersiblings():
            if _line_break(after):
                break
            if _WORD.search(text_of(after)) or _WORD.search(after.tail or ""):
                return False
        for before in node.itersiblings(preceding=True):
            if _WORD.search(before.tail or ""):
                return False  # after a block, its tail still shares the line
            if _line_break(before):
                break
            if _WORD.search(text_of(before)):
                return False
        else:  # nothing breaks the line before it here: the parent's own text leads it
            if _WORD.search(parent.text or ""):
                return False
        if parent is main or parent.tag in BLOCK_TAGS:
            return True
        node = parent
    return True  # inside a block already dropped


def _strip_header(main: etree._Element, title: str | None, byline: str | None) -> None:
    """Drop headline, byline and dateline blocks before the first real paragraph: whole
    blocks, or inline elements alone on their line, never words inside a line of prose."""
    wanted_title = _squash(title or "")
    wanted_byline = _squash(byline or "")
    byline_pattern = (re.compile(rf"\b{re.escape(wanted_byline)}\b")
                      if len(wanted_byline) >= 3 else None)
    seen = 0
    tabular = _inside_data_tables(main)
    for element in list(main.iter()):
        if not isinstance(element.tag, str) or element is main or element in tabular:
            continue
        if element.getparent() is None:
            continue
        if element.tag == "pre":
            return  # code: the header is over
        # Leaf-ish blocks only: a container holding the article must not be judged whole.
        if any(c.tag in BLOCK_TAGS for c in element):
            continue
        if element.tag not in BLOCK_TAGS and not _alone_on_its_line(element, main):
            continue  # a word of the prose ("explains <b>quickstart</b>"), even the title's
        text = (heading_text(element).lower() if element.tag in _HEADINGS
                else _squash(text_of(element)))
        if not text:
            continue
        if element.tag not in ("h1", "h2", "h3", "time") and len(text) >= _PARAGRAPH_CHARS:
            return
        seen += 1
        if seen > _HEADER_SCAN:
            return
        if (
            (wanted_title and text == wanted_title)
            or element.tag == "time"
            or (byline_pattern is not None and byline_pattern.search(text)
                and len(text) < 3 * len(wanted_byline) + 40)
            or (_dateline_like(text) and _DATE.search(text))
            or (_dateline_like(text) and re.match(r"^by\s+\w", text))
        ):
            drop(element)


_CAPTION_TAGS = frozenset({"span", "div", "p", "small", "cite"})


def _figure_caption(element: etree._Element) -> bool:
    """Text a ``<figure>`` holds beside its picture, without ``<figcaption>``: a caption or a
    credit. (Figures also wrap quotations, code and tables: those stay.)"""
    if element.tag not in _CAPTION_TAGS:
        return False
    parent = element.getparent()
    return (parent is not None and parent.tag == "figure"
            and element.find(".//img") is None
            and next(element.iter("blockquote", "pre", "table", "code"), None) is None)


def _is_furniture(element: etree._Element, wanted_title: str, discussion: bool,
                  links: _Links) -> bool:
    tag = element.tag
    if (tag == "figcaption" or _removable_by_name(element, discussion, links)
            or _link_block(element, links)):
        return True
    if _figure_caption(element):
        return True
    if tag in ("h1", "h2") and wanted_title:
        return heading_text(element).lower() == wanted_title
    standalone = tag in BLOCK_TAGS or (tag == "span" and not (element.tail or "").strip())
    return standalone and len(element) == 0 and _is_furniture_text(text_of(element))


def _blocks_backwards(main: etree._Element) -> list[etree._Element]:
    """Leaf-ish text blocks of ``main``, last first; a data table is one block."""
    found = []
    tabular = _inside_data_tables(main)
    for element in main.iter():
        if element is main or element in tabular:
            continue
        if element.tag == "table" and _data_table(element):
            found.append(element)
            continue
        if element.tag not in BLOCK_TAGS or element.tag in _TABLE_PARTS:
            continue
        if any(child.tag in BLOCK_TAGS for child in element):
            continue
        found.append(element)
    found.reverse()
    return found


def _quoted(element: etree._Element, main: etree._Element) -> bool:
    """Inside a blockquote (an embedded post or a quotation) or a code block: part of the
    article ("join(parts)" is code, not a call to join)."""
    node: etree._Element | None = element
    while node is not None and node is not main:
        if node.tag in ("blockquote", "pre"):
            return True
        node = node.getparent()
    return False


def _cut_tail(main: etree._Element) -> None:
    """Drop end-of-article boilerplate: calls to action, credits, link lists and the
    headings left dangling above them, up to the last block of prose."""
    cut = 0
    for element in _blocks_backwards(main):
        text = " ".join(text_of(element).split())
        if not text:
            continue
        if (len(text) >= _TAIL_CHARS or cut >= _TAIL_SCAN or element.tag == "table"
                or _quoted(element, main)):
            return  # prose, data or a quotation: the article goes on to here
        dangling = element.tag in _HEADINGS
        # A call to action is short or links somewhere; a longer plain sentence that merely
        # mentions subscribing is prose.
        calls = bool(_CALL_TO_ACTION.search(text)) and (
            len(text) < 150 or next(element.iter("a"), None) is not None
        )
        if not (calls or link_density(element) > 0.5 or dangling):
            return
        drop(element)
        cut += 1


def _drop_teasers(main: etree._Element) -> None:
    """Nested ``<article>`` cards — short, linking elsewhere — are other posts (related,
    "you may also like"), not part of this one. Two or more make a pattern."""
    cards = [a for a in main.iter("article") if a is not main
             and text_length(a) < _TEASER_CHARS and a.find(".//a[@href]") is not None]
    if len(cards) < 2:
        return
    # A live blog is cards and little else: keep them unless an article stands beside them.
    total = text_length(main)
    if total - sum(text_length(c) for c in cards) >= _TEASER_CHARS / 2:
        for card in cards:
            if card.getparent() is not None:
                drop(card)


def drop_repeats(main: etree._Element) -> None:
    """Drop blocks repeating an earlier block word for word: a shop renders a product's
    panels once per screen width and shows one copy (articles repeat themselves on purpose:
    an interview's question, a recipe's line — so this is for product pages)."""
    seen: set[str] = set()
    for element in reversed(_blocks_backwards(main)):
        text = " ".join(text_of(element).split())
        if len(text) < _REPEAT_CHARS:
            continue
        if text in seen:
            drop(element)
        else:
            seen.add(text)


_REPEAT_CHARS = 60


def trim_content(main: etree._Element, title: str | None, byline: str | None,
                 discussion: bool = False) -> None:
    """Remove in place what belongs in metadata or to the page furniture, not the body.
    In a discussion each post's author and date are part of the content: they stay."""
    if not discussion:  # a discussion's posts are its "cards"
        _strip_header(main, title, byline)
        _drop_teasers(main)
    wanted_title = _squash(title or "")
    kept = inside_code(main) | _inside_data_tables(main)
    links: _Links = {}  # nested blocks share their links; nothing is dropped until the end
    doomed = []
    for element in main.iter():
        tag = element.tag
        if not isinstance(tag, str) or element is main or element in kept:
            continue
        if _is_furniture(element, wanted_title, discussion, links):
            doomed.append(element)
    for element in doomed:
        drop(element)
    _cut_tail(main)  # last: what the passes above removed may have left headings dangling
