"""Main-content detection on a cleaned lxml tree: our own readability-style scoring.

One parse, one scoring pass: every paragraph-like block gives points (length, commas) to its
parent and, decaying, to its ancestors; class/id names nudge the score; link density scales
it down. The best node wins, widened to the common ancestor of its chunks (an article split
in several containers) and joined by sibling blocks that look like part of it. Trimming the
winner is :mod:`handlers.html_boilerplate`'s job.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from lxml import etree

from handlers.html_dom import (
    drop,
    inside_code,
    name_words,
    names,
    text_length,
    text_of,
    words_of,
)
from handlers.html_tags import BLOCK_TAGS

# Removal patterns match whole words or word starts of ``name_words`` (" c product widget "):
# "ad" never inside "pad", "nav" never inside "canvas".
# Containers that are boilerplate by name, unless the name also says "this is the article".
_UNLIKELY_STARTS = (
    r"comment|disqus|replies|discussion|share|sharing|social|related|recommend|"
    r"newsletter|subscri|promo|advert|ads?\b|sponsor|sidebar|footer|nav|menu|breadcrumb|"
    r"popup|modal|cookie|banner|masthead|widget|outbrain|taboola|sign ?up|login|toolbar|"
    r"pagination|pager|skip|jump|print|rss\b|follow|more stories|read more|trending|popular|"
    r"tooltip|popover|hovercard|rollover|consent|gdpr|onetrust")
_UNLIKELY_ENDS = ("nav", "menu", "sidebar", "footer")  # compounds: "topnav", "mainmenu"
_UNLIKELY = re.compile(rf"\b(?:{_UNLIKELY_STARTS})|\w(?:{'|'.join(_UNLIKELY_ENDS)})\b")
# Names that say "this is the article" ("lead": the lede).
_MAYBE = re.compile(r"\b(?:and\b|article|body|column|content|main|post|entry|story|text|"
                    r"shadow|lead)")
_POSITIVE = re.compile(
    r"article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story|prose"
)
_NEGATIVE = re.compile(
    r"hidden|\bhid\b|banner|combx|comment|com-|contact|foot|footer|footnote|"
    r"masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|"
    r"sponsor|shopping|tags|tool|widget|byline|author|caption|credit|social|newsletter",
)
# Names that mark the article body itself: an "unlikely" wrapper around one stays.
_ARTICLE_BODY = re.compile(
    r"\b(?:article ?body|post ?body|entry ?content|post ?content|story ?body|hentry|h entry|"
    r"main ?content)",
)
# Never removed for their names: the document, the article landmarks, links, and
# blockquotes (quotations and embedded posts, whose classes say "tweet", "social", …).
_NEVER_UNLIKELY = frozenset({"html", "body", "article", "main", "a", "blockquote"})
_BOILERPLATE_ROLES = frozenset({"navigation", "complementary", "contentinfo", "banner",
                                "dialog", "alertdialog"})
# Cookie consent, sign-up prompts: out however much text they hold.
_DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
_CONSENT_STARTS = r"consent|gdpr|onetrust"
_CONSENT = re.compile(rf"\b(?:{_CONSENT_STARTS})")
_COMMENTS_STARTS = r"comment|reply|replies|disqus|discussion"
_COMMENTS = re.compile(rf"\b(?:{_COMMENTS_STARTS})")
# A word start of any of the three (words follow a space in ``name_words``): one scan, from
# one space to the next, rules out most labels before the three regexes run.
_ANY_START = re.compile(rf" (?:{_UNLIKELY_STARTS}|{_COMMENTS_STARTS}|{_CONSENT_STARTS})")
_ANY_END = tuple(f"{end} " for end in _UNLIKELY_ENDS)
_LANDMARK_TAGS = frozenset({"nav", "aside", "footer", "header"})
_SCORED = frozenset({"p", "pre", "blockquote", "li", "dd"})
# Containers whose loose text (outside block children) is a paragraph of their own: the
# div-and-<br> pages, and the table-layout pages whose article is a <td>.
_LOOSE_TEXT = frozenset({"div", "section", "article", "span", "font", "center", "td", "body",
                         "main", "form"})


def class_weight(element: etree._Element) -> int:
    """±25 for class/id names that say content or boilerplate (both may apply)."""
    return _name_weight(names(element))


@lru_cache(maxsize=8192)
def _name_weight(text: str) -> int:
    if not text.strip():
        return 0
    weight = 0
    if _NEGATIVE.search(text):
        weight -= 25
    if _POSITIVE.search(text):
        weight += 25
    return weight


def link_density(element: etree._Element,
                 links: dict[etree._Element, int] | None = None) -> float:
    """Share of the element's text that sits inside links. ``links`` caches each link's
    length across calls on one unchanged tree (nested candidates share their links)."""
    total = text_length(element)
    if not total:
        return 0.0
    if links is None:
        return sum(text_length(a) for a in element.iter("a")) / total
    linked = 0
    for a in element.iter("a"):
        length = links.get(a)
        if length is None:
            length = links[a] = text_length(a)
        linked += length
    return linked / total


@lru_cache(maxsize=8192)
def _unlikely_name(text: str) -> bool:
    return bool(_UNLIKELY.search(text)) and not _MAYBE.search(text)


def remove_unlikely(root: etree._Element, keep_threads: bool = False,
                    by_name: bool = True) -> list[etree._Element]:
    """Drop navigation landmarks and containers named like boilerplate.

    A container holding most of the page's text, the article, or several paragraphs of prose
    is a layout wrapper misnamed (a "sidebar layout" column, a page builder's "widget", a
    ``<header>`` left open around the page), not boilerplate: it stays. Comment threads go,
    unless ``keep_threads``: then they stay and are returned (every thread element, in
    document order) for the caller to decide. Without ``by_name`` only landmarks,
    boilerplate roles, threads and dialogs go.
    """
    total = max(text_length(root), 1)
    code = inside_code(root)
    doomed = []
    threads = []
    for element in root.iter():
        tag = element.tag
        if not isinstance(tag, str) or tag in _NEVER_UNLIKELY or element in code:
            continue
        comment = element.get("itemprop") == "comment"
        label, ident = element.get("class"), element.get("id")
        named = bool(label or ident)
        unlikely, thread, dialog = _label_kinds(label, ident) if named else _NOTHING
        if keep_threads and (thread or comment):
            threads.append(element)
            continue
        role = element.get("role")
        by_tag = ((tag in _LANDMARK_TAGS and not _section_header(element))
                  or role in _BOILERPLATE_ROLES or comment)
        if by_tag or (named and (unlikely if by_name else thread or dialog)):
            # Threads and dialogs go however much text they hold.
            doomed.append((element, thread or comment or dialog or role in _DIALOG_ROLES))
    removed: set[etree._Element] = set()
    for element, regardless in doomed:  # document order: ancestors are decided first
        if any(ancestor in removed for ancestor in element.iterancestors()):
            continue
        if regardless:
            pass
        elif element.tag in _LANDMARK_TAGS:
            # A landmark wrapping the page (a theme's layout, an unclosed <header>), not
            # one as long as the article (a mega-menu, a footer of fine print).
            if text_length(element) > _WRAPS_PAGE * total or _holds_article(element):
                continue
        elif (text_length(element) > total / 2 or _holds_article(element)
              or holds_prose(element)):
            continue
        removed.add(element)
        drop(element)
    return threads


_NOTHING = (False, False, False)
_SECTIONING = ("article", "aside", "main", "nav", "section")
_SECTION_HEADINGS = ("h2", "h3", "h4", "h5", "h6")
_SECTION_HEADER_CHARS = 300


def _section_header(element: etree._Element) -> bool:
    """A ``<header>`` that heads a section: its closest sectioning ancestor is a
    ``<section>``, it holds the section's heading (``<h2>``–``<h6>``) and a line or two at
    most. Not the page's banner (HTML makes a header one only outside sectioning content),
    nor an article's or a product's head (headline, standfirst, byline: metadata)."""
    if element.tag != "header" or element.find(".//h1") is not None:
        return False
    closest = next(element.iterancestors(*_SECTIONING), None)
    return (closest is not None and closest.tag == "section"
            and next(element.iter(*_SECTION_HEADINGS), None) is not None
            and text_length(element) < _SECTION_HEADER_CHARS)


@lru_cache(maxsize=8192)
def _label_kinds(label: str | None, ident: str | None) -> tuple[bool, bool, bool]:
    """:func:`_name_kinds` of an element's raw class and id (a page repeats them)."""
    return _name_kinds(words_of(label, ident))


@lru_cache(maxsize=8192)
def _name_kinds(words: str) -> tuple[bool, bool, bool]:
    """Whether class/id words name boilerplate, a comment thread, a dialog."""
    if not _ANY_START.search(words) and not any(end in words for end in _ANY_END):
        return _NOTHING
    return (_unlikely_name(words), bool(_COMMENTS.search(words)), bool(_CONSENT.search(words)))


_WRAPS_PAGE = 0.75
_PROSE_CHARS = 150
_PROSE_PARAGRAPHS = 3


def holds_prose(element: etree._Element) -> bool:
    """Several long paragraphs that are not links: an article's text, whatever the
    container is named."""
    found = 0
    for paragraph in element.iter("p"):
        if text_length(paragraph) >= _PROSE_CHARS and link_density(paragraph) < 0.25:
            found += 1
            if found >= _PROSE_PARAGRAPHS:
                return True
    return False


def outermost(elements: list[etree._Element]) -> list[etree._Element]:
    """The elements not inside another of them, in the given order."""
    chosen = set(elements)
    return [e for e in elements if not any(a in chosen for a in e.iterancestors())]


def drop_threads(threads: list[etree._Element]) -> None:
    """Remove the comment threads ``remove_unlikely(keep_threads=True)`` left: those named
    like boilerplate or marked as comments (a "reply" box inside a post is not a thread)."""
    for element in threads:
        if element.get("itemprop") == "comment" or _name_kinds(name_words(element))[0]:
            drop(element)


def take_threads(threads: list[etree._Element]) -> list[etree._Element]:
    """Detach and return the outermost of ``threads`` (for ``include_comments``)."""
    taken = outermost(threads)
    for thread in taken:
        drop(thread)
    return taken


def is_discussion(root: etree._Element, threads: list[etree._Element],
                  declared: bool = False) -> bool:
    """The threads are the page (a forum thread, questions and answers), not comments below
    an article: nothing outside them reads like one. On a page that declares itself a
    discussion, prose outside the threads shorter than they are is the opening post."""
    if not threads:
        return False
    inside = set(threads)
    outside = found = 0
    for paragraph in root.iter("p"):
        if any(a in inside for a in paragraph.iterancestors()):
            continue
        length = text_length(paragraph)
        outside += length
        found += length >= _PROSE_CHARS and link_density(paragraph) < 0.25
    if not declared:
        return found < _PROSE_PARAGRAPHS and not any(
            text_length(a) >= _PROSE_CHARS for a in _articles(root)
            if not any(p in inside for p in a.iterancestors()) and a not in inside)
    return outside < sum(text_length(t) for t in threads)


def _articles(root: etree._Element) -> Iterator[etree._Element]:
    """Elements that say "I am the article": ``<article>`` and ``itemprop=articleBody``."""
    for element in root.iter("article", "div", "section"):
        if element.tag == "article" or (element.get("itemprop") or "").lower() == "articlebody":
            yield element


def _holds_article(element: etree._Element) -> bool:
    for node in element.iter("article", "div", "section"):
        if (node.get("itemprop") or "").lower() == "articlebody":
            return True
        if node.tag == "article" and not _article_names(name_words(node))[0]:
            return True
        if node is not element and _article_names(name_words(node))[1]:
            return True
    return False


@lru_cache(maxsize=8192)
def _article_names(words: str) -> tuple[bool, bool]:
    """Whether class/id words name a comment, the article's body."""
    return bool(_COMMENTS.search(words)), bool(_ARTICLE_BODY.search(words))


def _own_text(element: etree._Element) -> str:
    """The text of ``element`` outside its block-level children."""
    text = element.text
    parts = [text] if text else []
    for child in element:
        if child.tag not in BLOCK_TAGS and isinstance(child.tag, str):
            parts.append(text_of(child))
        tail = child.tail
        if tail:
            parts.append(tail)
    return " ".join(" ".join(parts).split()) if parts else ""


def _paragraphs(root: etree._Element) -> Iterator[tuple[etree._Element, str, bool]]:
    """Paragraph-like nodes with their text, and whether they score themselves (a div whose
    loose text is a paragraph) or only their ancestors (a real ``<p>``)."""
    for element in root.iter(*_SCORED, *_LOOSE_TEXT):  # tags filtered inside libxml2
        tag = element.tag
        if tag in _SCORED:
            # A list item or quotation made of paragraphs: those score, not it as well (the
            # text counted twice made a manual's option list outscore the whole manual).
            if tag != "p" and any(inner is not element for inner in element.iter(*_SCORED)):
                continue
            yield element, " ".join(text_of(element).split()), False
        elif tag in _LOOSE_TEXT:
            text = _own_text(element)
            if text:
                yield element, text, True


# keyed by lxml's tag (a str for an element): looked up with any node's tag
_TAG_BONUS: dict[object, int] = {
    "div": 5, "article": 10, "main": 5, "section": 3, "pre": 3, "td": 3,
    "blockquote": 3, "form": -3, "ol": -3, "ul": -3, "dl": -3, "li": -3,
    "th": -5, "h1": -5, "h2": -5, "h3": -5}


_ITEM_TAGS = frozenset({"li", "dd"})


_Paragraphs = list[tuple[etree._Element, str, bool]]


def readable_paragraphs(root: etree._Element) -> _Paragraphs:
    """The paragraphs of 25+ characters that scoring reads, in document order."""
    return [item for item in _paragraphs(root) if len(item[1]) >= 25]


def score_candidates(root: etree._Element, paragraphs: _Paragraphs | None = None,
                     links: dict[etree._Element, int] | None = None
                     ) -> dict[etree._Element, float]:
    """Content score of every ancestor of a paragraph, scaled by (1 - link density)."""
    scores: dict[etree._Element, float] = {}
    for paragraph, text, scores_itself in (
            readable_paragraphs(root) if paragraphs is None else paragraphs):
        if paragraph.tag in _ITEM_TAGS:
            # A list item is a line, not a paragraph: its commas are a citation's or a
            # spec's, and a long list (references, captions) must not outweigh the prose.
            points = 1 + min(len(text) // 100, 1)
        else:
            points = 1 + text.count(",") + text.count("，") + min(len(text) // 100, 3)
        node, level = (paragraph if scores_itself else paragraph.getparent()), 0
        while node is not None and level < 3:
            if node not in scores:
                scores[node] = _TAG_BONUS.get(node.tag, 0) + class_weight(node)
            scores[node] += points / (1 if level == 0 else 2 if level == 1 else level * 3)
            node, level = node.getparent(), level + 1
    links = {} if links is None else links
    return {node: score * (1 - link_density(node, links)) for node, score in scores.items()}


def prose_mass(root: etree._Element, paragraphs: _Paragraphs | None = None,
               links: dict[etree._Element, int] | None = None) -> dict[etree._Element, int]:
    """Characters of readable text (paragraphs of 25+ characters outside links) under each
    element, for every element above such a paragraph."""
    mass: dict[etree._Element, int] = {}
    for paragraph, text, _scores_itself in (
            readable_paragraphs(root) if paragraphs is None else paragraphs):
        chars = int(len(text) * (1 - link_density(paragraph, links)))
        node: etree._Element | None = paragraph
        while node is not None:
            mass[node] = mass.get(node, 0) + chars
            node = node.getparent()
    return mass


def _ancestors(element: etree._Element) -> list[etree._Element]:
    found = []
    node = element.getparent()
    while node is not None and node.tag not in ("body", "html"):
        found.append(node)
        node = node.getparent()
    return found


_CHUNK_CHARS = 200  # a chunk of the article holds at least a paragraph


def _kind(element: etree._Element) -> tuple[object, str]:
    """Tag and first class name: chunks of one article share them ("block-text" and
    "block-text block-text_initial-letter"). A chunk without a class is known by its
    parent's (the cells of ``<tr class="answer">`` rows in a FAQ)."""
    classes = (element.get("class") or "").split()
    if classes:
        return element.tag, classes[0]
    parent = element.getparent()
    parent_classes = [] if parent is None else (parent.get("class") or "").split()
    if parent is None or not parent_classes:
        return element.tag, ""
    return element.tag, f"{parent.tag!s}.{parent_classes[0]}>"


def best_candidate(root: etree._Element) -> etree._Element | None:
    """The element holding the main content (possibly a new wrapper of siblings), or None
    when nothing on the page reads like a paragraph."""
    paragraphs = readable_paragraphs(root)
    links: dict[etree._Element, int] = {}  # the tree is unchanged until _with_siblings
    scores = score_candidates(root, paragraphs, links)
    if not scores:
        return None
    ranked = sorted(scores, key=scores.__getitem__, reverse=True)
    top = ranked[0]
    # The article split in chunks: close runners-up, or paragraph-sized blocks of the
    # winner's kind (tag and first class), below one common ancestor mean that ancestor is
    # the article.
    lineage = set(_ancestors(top))
    kind = _kind(top)
    group = []
    for rank, candidate in enumerate(ranked[1:], start=1):
        if candidate in lineage or top in _ancestors(candidate):
            continue
        close = rank < 5 and scores[candidate] >= scores[top] * 0.75
        same_kind = bool(kind[1]) and _kind(candidate) == kind
        if close or (same_kind and scores[candidate] >= scores[top] * 0.1
                     and text_length(candidate) >= _CHUNK_CHARS):
            group.append(candidate)
    if group:
        for ancestor in _ancestors(top):
            if all(ancestor in _ancestors(c) for c in group):
                scores.setdefault(ancestor, scores[top])
                top = ancestor
                break
    # Climb while the parent scores nearly as well: the article is split over siblings.
    parent = top.getparent()
    while parent is not None and parent.tag not in ("body", "html"):
        if parent in scores and scores[parent] >= scores[top] * 0.85:
            top = parent
            parent = top.getparent()
        else:
            break
    # A winner holding little of the page's prose is one block of many (a review, a product
    # feature, an FAQ answer): climb to the ancestor that holds most of it, if not links.
    mass = {} if holds_prose(top) else prose_mass(root, paragraphs, links)
    whole = mass.get(root, 0)
    if whole and mass.get(top, 0) < _COVERS * whole:
        for ancestor in _ancestors(top):
            if mass.get(ancestor, 0) >= _COVERS * whole and link_density(ancestor,
                                                                          links) < 0.5:
                scores.setdefault(ancestor, scores[top])
                top = ancestor
                break
    # A list or table that wins (a manual's option list) is a part: climb to the closest
    # ancestor holding clearly more text, if that is not mostly links.
    if top.tag in _LISTS:
        length = text_length(top)
        for ancestor in _ancestors(top)[:_LIST_CLIMB]:
            if (text_length(ancestor) >= _RICHER * length
                    and link_density(ancestor, links) < _LIST_ANCESTOR_LINKS):
                scores.setdefault(ancestor, scores[top])
                top = ancestor
                break
    return _with_siblings(top, scores)


_COVERS = 0.5
_LISTS = frozenset({"ul", "ol", "dl", "table"})
_LIST_CLIMB = 4  # levels looked at above a winning list
_RICHER = 1.5
_LIST_ANCESTOR_LINKS = 0.3


def product_block(name: etree._Element) -> etree._Element | None:
    """On a product page, the block around the product's name that holds its description:
    the closest ancestor with a description's worth of text. The scorer's pick elsewhere on
    such a page is a review, an FAQ or a banner."""
    node = name.getparent()
    while node is not None and node.tag not in ("body", "html"):
        if sum(len(text) for _e, text, _own in _paragraphs(node) if len(text) >= 25) >= (
                _PRODUCT_PROSE):
            return node
        node = node.getparent()
    return None


_PRODUCT_PROSE = 1000  # a description's worth of text


def _with_siblings(top: etree._Element, scores: dict[etree._Element, float]) -> etree._Element:
    parent = top.getparent()
    if parent is None:
        return top
    threshold = max(10.0, scores[top] * 0.2)
    keep = []
    for sibling in parent:
        if sibling is top:
            keep.append(sibling)
            continue
        if scores.get(sibling, -1) >= threshold:
            keep.append(sibling)
        elif sibling.tag == "p":
            length = text_length(sibling)
            density = link_density(sibling)
            text = text_of(sibling)
            if (length > 80 and density < 0.25) or (
                0 < length <= 80 and density == 0 and re.search(r"\.( |$)", text)
            ):
                keep.append(sibling)
    if len(keep) == 1:
        return top
    wrapper = top.makeelement("div", {})
    for element in keep:
        wrapper.append(element)  # moves: the page tree is ours to consume
    return wrapper
