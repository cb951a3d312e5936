"""An `empty` or `challenge` record is a claim about the page: never made on a page showing
2,000 characters of paragraph text, whatever wraps them (tags, roles, class names that say
ad, rail, dialog, comments, consent) and whatever else the page holds."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handlers.html import HTML_HANDLER, PROSE_FLOOR
from handlers.registry import HandlerContext, HandlerOptions
from pipeline.core.errors import PipelineError

WRAPPER_TAGS = ("div", "section", "article", "aside", "nav", "header", "footer", "main",
                "form", "span", "td")
ROLES = ("", "dialog", "alertdialog", "complementary", "navigation", "banner",
         "contentinfo", "main")
# Class/id words that name boilerplate to some rule (none that hide an element).
NAME_WORDS = ("ad", "ads", "ad-slot", "slot", "right-rail", "rail", "sidebar", "comments",
              "comment-list", "replies", "discussion", "modal", "popup", "sheet", "cookie",
              "consent", "gdpr", "related", "share", "social", "widget", "nav", "menu",
              "footer", "promo", "newsletter", "sponsor", "banner", "article", "content",
              "story-body", "body")
# Short visible furniture and challenge vocabulary beside the prose. Kept under a tenth of
# the prose: a page holding more than that besides its prose may be something else.
NOISE = (
    "<nav><a href='/'>Home</a> <a href='/news'>News</a></nav>",
    "<footer><p>Copyright 2025 Example</p></footer>",
    "<div class='g-recaptcha' data-sitekey='x'></div>",
    "<script>window.cf_chl_opt = {};</script>",
    "<noscript><p>Please enable JavaScript to continue.</p></noscript>",
    "<div hidden><p>Verifying you are human. Just a moment.</p></div>",
    "<div id='root'></div>",
    "<p>Are you a robot?</p>",
)
TITLES = ("Just a moment...", "Attention Required! | Cloudflare", "Access denied", "A story")


def sentence(n: int) -> str:
    return (f"Paragraph {n} of the report says that the river rose by {n + 3} centimetres "
            f"overnight, and that the council will meet again on Friday to decide.")


@st.composite
def pages(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A page of plain paragraphs (at least PROSE_FLOOR characters) inside 1–4 wrappers,
    with noise before and after; and the paragraphs."""
    count = draw(st.integers(min_value=PROSE_FLOOR // len(sentence(10)) + 1, max_value=40))
    texts = [sentence(n) for n in range(count)]
    prose = "".join(f"<p>{text}</p>" for text in texts)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        tag = draw(st.sampled_from(WRAPPER_TAGS))
        words = draw(st.lists(st.sampled_from(NAME_WORDS), max_size=3))
        role = draw(st.sampled_from(ROLES))
        attrs = f" class='{' '.join(words)}'" if words else ""
        attrs += f" role='{role}'" if role else ""
        if draw(st.booleans()):
            attrs += f" id='{draw(st.sampled_from(NAME_WORDS))}'"
        if tag == "td":
            prose = f"<table><tr><td{attrs}>{prose}</td></tr></table>"
        else:
            prose = f"<{tag}{attrs}>{prose}</{tag}>"
    before = "".join(draw(st.lists(st.sampled_from(NOISE), max_size=3)))
    after = "".join(draw(st.lists(st.sampled_from(NOISE), max_size=3)))
    title = draw(st.sampled_from(TITLES))
    html = (f"<!doctype html><html><head><title>{title}</title></head>"
            f"<body>{before}{prose}{after}</body></html>")
    return html, texts


def handle(html: str, extractor: str = "builtin") -> str:
    ctx = HandlerContext(url="https://example.test/p", format="text",
                         options=HandlerOptions(html_extractor=extractor))
    return HTML_HANDLER.handle(html.encode(), ctx).content


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages())
def test_a_page_of_prose_is_never_empty_or_a_challenge(page):
    html, texts = page
    content = handle(html)  # raises PipelineError('empty' | 'challenge') on a false claim
    assert any(text in content for text in texts)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages())
def test_the_invariant_holds_with_the_readability_extractor(page):
    html, _texts = page
    assert handle(html, "readability").strip()


ARTICLE = "".join(f"<p>{sentence(n)}</p>" for n in range(70))  # ~11,000 characters


@pytest.mark.parametrize("wrapper", [
    # An article whose class also names ad slots and a right rail, in a slide-out sheet.
    f"<div role='dialog' aria-modal='false'><article class='story has-ad-slots right-rail'>"
    f"{ARTICLE}</article></div>",
    # The only prose on the page sits in a container named like a consent manager.
    f"<div class='consent-layout'><div class='article-text'>{ARTICLE}</div></div>",
    f"<div role='alertdialog'><div class='modal-body'>{ARTICLE}</div></div>",
])
def test_prose_every_rule_removed_comes_back_as_the_page(wrapper):
    html = (f"<!doctype html><html><head><title>Flood report</title></head><body>"
            f"<nav><a href='/'>Home</a></nav>{wrapper}<footer>Copyright</footer></body></html>")
    content = handle(html)
    assert sentence(0) in content and sentence(69) in content
    assert "Home" not in content.split("\n")


def test_under_the_floor_a_page_whose_only_text_is_a_dialog_is_still_empty():
    notice = "".join(f"<p>{sentence(n)}</p>" for n in range(5))
    html = ("<!doctype html><html><head><title>Shop</title></head><body><nav><a href='/'>Home"
            f"</a></nav><div role='dialog'>{notice}</div></body></html>")
    with pytest.raises(PipelineError) as info:
        handle(html)
    assert info.value.kind == "empty"


def test_challenge_markup_beside_an_article_is_not_a_challenge():
    html = ("<!doctype html><html><head><title>Just a moment...</title></head><body>"
            "<div class='cf-challenge'></div><script>window.cf_chl_opt={}</script>"
            + "".join(f"<p>{sentence(n)} Short.</p>" for n in range(16)) + "</body></html>")
    assert sentence(15) in handle(html)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("dataset", ["news_dataset", "modern_dataset"])
def test_no_real_page_showing_prose_is_empty_or_a_challenge(dataset, request):
    """Every page of a dev set: where the cleaned page shows PROSE_FLOOR characters of
    paragraphs, the handler returns content."""
    import gzip
    import json

    from handlers.decode import decode_html
    from handlers.html_clean import clean_tree
    from handlers.html_dom import parse
    from handlers.html_extract import paragraph_chars

    folder = request.getfixturevalue(dataset)
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    checked = 0
    for page_id, item in truth.items():
        body = gzip.decompress((folder / "html" / f"{page_id}.html.gz").read_bytes())
        tree = parse(decode_html(body)[1])
        clean_tree(tree)
        if paragraph_chars(tree) < PROSE_FLOOR:
            continue
        checked += 1
        ctx = HandlerContext(url=item["url"], format="text")
        assert HTML_HANDLER.handle(body, ctx).content.strip(), page_id
    assert checked > len(truth) / 2
