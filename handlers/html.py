"""The default HTML handler: main content as markdown or text, plus page metadata.

One lxml parse. Metadata and challenge signals are read first; then the tree is cleaned
(hidden and active content out), the main content is found by our own scoring
(:mod:`handlers.html_extract`), trimmed of header and end-of-article boilerplate
(:mod:`handlers.html_boilerplate`), and rendered (:mod:`handlers.html_render`). A short result
falls back to landmark containers, then to the whole body.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from handlers.decode import decode_html
from handlers.html_boilerplate import drop_repeats, trim_content
from handlers.html_clean import clean_tree
from handlers.html_dates import dateline
from handlers.html_dom import heading_text, parse, text_length, text_of
from handlers.html_extract import (
    best_candidate,
    drop_threads,
    holds_prose,
    is_discussion,
    outermost,
    paragraph_chars,
    product_block,
    prose_mass,
    remove_unlikely,
    take_threads,
)
from handlers.html_links import page_links
from handlers.html_metadata import page_metadata
from handlers.html_readability import readability_main
from handlers.html_render import render
from handlers.html_signals import challenge_reason, looks_binary
from handlers.registry import HandlerContext
from pipeline.core.errors import PipelineError
from pipeline.core.models import Document

# Optional XML prologue and comments, then the document's first HTML tag. The comments are
# an atomic group: a comment ends at its first "-->", never tried again across the next
# (that made a kilobyte of "<!-- -->" take 2^128 steps).
_SNIFF = re.compile(
    rb"^\s*(?:<\?xml[^>]*>\s*)?(?>(?:<!--.*?-->\s*)*)<(?:!doctype\s+html|html|head|body)[\s>]",
    re.IGNORECASE | re.DOTALL,
)
# Fallback containers, best first: landmark tags, the main role, common body class names.
_LANDMARK_TAGS = ("article", "main")
_LANDMARK_CLASSES = ("post-content", "entry-content", "content")
MIN_CHARS = 100  # below this, the scorer probably picked a fragment: try the fallbacks
# A page showing this much paragraph text is never reported `empty` or `challenge`: the claim
# would be false. When extraction keeps less than a tenth of it, the paragraphs are the page.
PROSE_FLOOR = 2000
_PROSE_KEPT = 0.1
_LONGER = 1.3
_PROSE_SHARE = 0.5
_SHORT_SHARE = 0.1  # ... or when it kept less than this share of a long page's visible text


def _landmarks(root: etree._Element) -> list[list[etree._Element]]:
    """Landmark candidates in preference order: tags, role=main, then class names."""
    by_tag: list[etree._Element] = list(root.iter(*_LANDMARK_TAGS))
    by_role = [e for e in root.iter() if e.get("role") == "main"]
    by_class = [e for e in root.iter() if isinstance(e.tag, str)
                and set((e.get("class") or "").split()) & set(_LANDMARK_CLASSES)]
    return [by_tag, by_role, by_class]


def _headline(root: etree._Element, title: str | None) -> etree._Element | None:
    """The heading showing the title, else the first ``<h1>``."""
    wanted = " ".join((title or "").split()).lower()
    first = None
    for heading in root.iter("h1", "h2"):
        if wanted and heading_text(heading).lower() == wanted:
            return heading
        if first is None and heading.tag == "h1":
            first = heading
    return first


def _landmark(root: etree._Element) -> etree._Element | None:
    best, best_len = None, 0
    for group in _landmarks(root):
        for element in group:
            length = text_length(element)
            if length > best_len:
                best, best_len = element, length
        if best_len >= MIN_CHARS:
            return best
    return best


class HTMLHandler:
    """HTML and XHTML pages → main content (markdown or text) with metadata."""

    name = "html"
    media_types = ("text/html", "application/xhtml+xml")

    def sniff(self, head: bytes) -> bool:
        head = head[:1024]
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16: compare as text
            codec = "utf-16-le" if head.startswith(b"\xff\xfe") else "utf-16-be"
            head = head[2:].decode(codec, "ignore").encode("ascii", "ignore")
        return bool(_SNIFF.match(head.removeprefix(b"\xef\xbb\xbf")))

    def handle(self, body: bytes, ctx: HandlerContext) -> Document:
        if looks_binary(body):
            raise PipelineError("decode", "binary content, not an HTML page")
        text, source = decode_html(body, ctx.charset)
        if not text.strip():
            raise PipelineError("empty", "the page is empty")
        try:
            root = parse(source)
        except (etree.ParserError, ValueError) as exc:
            raise PipelineError("empty", f"no parsable HTML: {exc}") from exc
        read = page_metadata(root, ctx.base_url, raw=ctx.options.structured_raw)
        title, metadata = read.title, read.metadata
        fields = None
        if ctx.options.schema is not None:  # before cleaning: it reads scripts and buttons
            from handlers.fields import FieldReader

            fields = FieldReader(ctx.options.schema, root, source=text, base_url=ctx.base_url,
                                 title=title, declared=read.declared, metas=read.metas,
                                 props=read.props)
        # with links asked for, a page without text still gives them: the caller says
        # "empty" then (pipeline.extract.native), so a crawl goes on past a hub of links
        links = page_links(root, ctx.base_url) if ctx.options.links else None
        hidden = clean_tree(root)
        if "published" not in metadata:  # the date shown with the headline
            shown = dateline(_headline(root, title))
            if shown:
                metadata["published"] = shown
        body_element = root.find("body")
        page = root if body_element is None else body_element
        visible = " ".join(text_of(page).split())
        title_element = next(root.iter("title"), None)
        page_title = "" if title_element is None else text_of(title_element)
        picked: dict[str, Any] = {} if fields is None else dict(zip(
            ("fields", "fields_meta"), fields.finish(page, title, metadata), strict=True))
        if links is not None:
            picked.update(links=links[0], nofollow_links=links[1])
        reason = challenge_reason(page_title, text, body_element, visible)
        # An interstitial never holds an article.
        if reason and not holds_prose(page) and paragraph_chars(page) < PROSE_FLOOR:
            raise PipelineError("challenge", reason)

        markdown = ctx.format == "markdown"
        enough = max(MIN_CHARS, _SHORT_SHARE * len(visible))
        if ctx.options.html_extractor == "readability":
            chosen = readability_main(text, ctx.base_url)
            if chosen is not None:
                clean_tree(chosen)
            content = "" if chosen is None else render(chosen, markdown=markdown,
                                                         base_url=ctx.base_url)
            if len(content) < enough:
                content = _unless_prose_lost(source, content, markdown, ctx.base_url)
            if not content.strip() and links is None:
                raise PipelineError("empty", "no extractable text on the page")
            return Document(title=title, content=content, format=ctx.format,
                            metadata=metadata, **picked)
        # Comments are left out unless asked for; then they follow the article. On a
        # discussion page the threads are the content.
        found = remove_unlikely(root, keep_threads=True)
        declared = metadata.get("page_type")
        discussion = declared in (None, "forum") and is_discussion(
            page, outermost(found), declared=declared == "forum")
        threads = []  # on a discussion page, the content rather than comments to append
        if not discussion:
            if ctx.options.include_comments:
                threads = take_threads(found)
            drop_threads(found)
        headline = _headline(root, title) if declared == "product" else None
        main = best_candidate(page)
        if headline is not None and headline.getparent() is not None and (
                main is None or headline not in main.iter(str(headline.tag))):
            block = product_block(headline)
            main = main if block is None else block
        content = ""
        if main is not None:
            trim_content(main, title, metadata.get("byline"), discussion=discussion)
            if declared == "product":
                drop_repeats(main)
            content = render(main, markdown=markdown, base_url=ctx.base_url)
        if len(content) < enough:
            content = self._fallback(root, source, content, markdown, ctx.base_url,
                                     (title, metadata.get("byline")), discussion, enough,
                                     declared == "article")
        if len(content) < (MIN_CHARS if declared == "article" else enough):
            content = _unless_prose_lost(source, content, markdown, ctx.base_url)
        if not content.strip() and links is None:
            raise PipelineError("empty", "no extractable text on the page")
        comments = "\n\n".join(filter(None, (render(t, markdown=markdown, base_url=ctx.base_url)
                                              for t in threads)))
        if comments:
            content += ("\n\n## Comments\n\n" if markdown else "\n\nComments\n\n") + comments
        if hidden:
            metadata["hidden_removed"] = hidden
        return Document(title=title, content=content, format=ctx.format, metadata=metadata,
                        **picked)

    def _fallback(self, root: etree._Element, source: bytes, content: str, markdown: bool,
                  base_url: str, header: tuple[str | None, str | None],
                  discussion: bool, enough: float, article: bool) -> str:
        # Retry: names can mislead (a page builder's "widget" sections), so score again with
        # only what is boilerplate by tag or role (navigation, threads, dialogs) removed.
        page = _page(_boilerplate_out(source, discussion))
        main = best_candidate(page)
        if main is not None:
            trim_content(main, *header, discussion=discussion)
            content = _longer(render(main, markdown=markdown, base_url=base_url), content)
        if len(content) >= enough:
            return content
        landmark = _landmark(root)
        if landmark is not None:
            trim_content(landmark, *header)
            content = _longer(render(landmark, markdown=markdown, base_url=base_url), content)
        if len(content) >= (MIN_CHARS if article else enough):
            return content  # an article may be short beside a busy page
        # Last, the whole page, still without its navigation, header and footer, unless what
        # we have is most of the page's prose (a short article on a page of menus).
        page = _page(_boilerplate_out(source, discussion))
        if content and len(content) >= _PROSE_SHARE * prose_mass(page).get(page, 0):
            return content
        candidate = render(page, markdown=markdown, base_url=base_url)
        return candidate if len(candidate) > len(content) else content


def _page(root: etree._Element) -> etree._Element:
    body = root.find("body")
    return root if body is None else body


def _boilerplate_out(source: bytes, discussion: bool) -> etree._Element:
    """A fresh tree of the page, cleaned, with only tag- and role-named boilerplate out."""
    fresh = parse(source)
    clean_tree(fresh)
    remove_unlikely(fresh, keep_threads=discussion, by_name=False)
    return fresh


def _unless_prose_lost(source: bytes, content: str, markdown: bool, base_url: str) -> str:
    """``content``, or — when it holds under a tenth of a page showing ``PROSE_FLOOR``
    characters of paragraphs (every rule removed the container they sit in: a dialog, a
    misnamed wrapper) — the page's visible paragraphs and headings, in document order."""
    tree = parse(source)
    clean_tree(tree)
    page = _page(tree)
    chars = paragraph_chars(page)
    if chars < PROSE_FLOOR or len(content) >= _PROSE_KEPT * chars:
        return content
    shown = page.makeelement("div", {})
    shown.extend(outermost(list(page.iter("p", *_HEADINGS))))  # moved: the tree is ours
    return render(shown, markdown=markdown, base_url=base_url)


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def _longer(candidate: str, content: str) -> str:
    """Only a clearly longer text replaces what we had: the second try usually holds it,
    plus furniture."""
    return candidate if len(candidate) > _LONGER * len(content) else content


HTML_HANDLER = HTMLHandler()
