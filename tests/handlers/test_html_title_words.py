"""The page's title is stripped from the body only as a block that repeats it (the headline
above the article), never as words inside the prose (issue 33, item 2)."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from handlers.html import HTML_HANDLER
from handlers.registry import HandlerContext

BODY = (
    "It covers installation, configuration and the first run, with examples you can paste "
    "into a terminal and adapt to your own project before moving on."
)


def run(html: str, fmt: str = "text"):
    return HTML_HANDLER.handle(html.encode(), HandlerContext(
        url="https://docs.example.org/guide/page.html", format=fmt))


def docs_page(title: str, article: str) -> str:
    return (
        f"<!doctype html><html lang='en'><head><title>{title} - Example Docs</title></head>"
        "<body><nav><a href='/'>Home</a><a href='/guide/'>Guide</a></nav>"
        f"<main><article>{article}<p>{BODY}</p><p>{BODY}</p></article></main>"
        "<footer>Example Docs. All rights reserved.</footer></body></html>"
    )


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_title_word_in_bold_inside_a_sentence_stays(fmt):
    doc = run(docs_page("Quickstart", "<h1>Quickstart</h1>"
                        "<p>This page explains <strong>quickstart</strong> for new users.</p>"),
              fmt)
    assert doc.title == "Quickstart"
    shown = doc.content.replace("**", "")
    assert "This page explains quickstart for new users." in shown
    assert not doc.content.lstrip("# ").startswith("Quickstart")  # the headline: metadata


@pytest.mark.parametrize(("fmt", "sentence"), [
    ("text", "Call fetch_events() with a start date."),
    ("markdown", "Call `fetch_events()` with a start date."),
])
def test_title_in_code_inside_a_sentence_stays(fmt, sentence):
    doc = run(docs_page("fetch_events()", "<h1><code>fetch_events()</code></h1>"
                        "<p>Call <code>fetch_events()</code> with a start date.</p>"), fmt)
    assert doc.title == "fetch_events()"
    assert sentence in doc.content
    assert doc.content.count("fetch_events()") == 1  # the heading above went


def test_title_recurring_in_bold_code_and_links_of_the_opening_paragraphs():
    article = (
        "<header><h1>Connection pooling<a class='headerlink' href='#top'>¶</a></h1></header>"
        "<p><a href='/guide/pooling'>Connection pooling</a> keeps sockets open.</p>"
        "<p>Turn on <em>connection pooling</em> per client.</p>"
        "<p><code>Connection pooling</code>, <b>connection pooling</b>: the same thing.</p>"
        "<p>Released on <time datetime='2024-01-02'>Jan. 2, 2024</time> with the pool.</p>"
    )
    doc = run(docs_page("Connection pooling", article))
    assert doc.title == "Connection pooling"
    for sentence in ("Connection pooling keeps sockets open.",
                     "Turn on connection pooling per client.",
                     "Connection pooling, connection pooling: the same thing.",
                     "Released on Jan. 2, 2024 with the pool."):
        assert sentence in doc.content
    assert doc.content.startswith("Connection pooling keeps")  # the heading went


@pytest.mark.parametrize("header", [
    "<h1>Storm hits the coast</h1>",
    "<h2><a href='/a/storm'>Storm hits the coast</a></h2>",
    "<div class='entry-title'><a href='/a/storm'>Storm hits the coast</a></div>",
    "<p><strong>Storm hits the coast</strong></p>",
    # inside a heading every inline part is the header's: the headline link beside its date
    "<h2><a href='/a/storm'>Storm hits the coast</a> <span class='date'> / Jan 2024</span></h2>",
    # a headline standing alone among blocks: no words beside it on its line
    "<div class='head'><a href='/a/storm'>Storm hits the coast</a>"
    "<p class='meta'>By Jane Doe</p></div>",
    "<div class='head'><span> <b>Storm hits the coast</b> </span><br>"
    "<p>Jan. 2, 2024</p></div>",
])
def test_a_repeated_title_block_above_the_article_is_still_removed(header):
    html = (
        "<!doctype html><html><head><title>Storm hits the coast | Example News</title>"
        "<meta name='author' content='Jane Doe'></head><body>"
        f"<article>{header}<p>{BODY}</p><p>{BODY}</p></article></body></html>"
    )
    doc = run(html)
    assert doc.title == "Storm hits the coast"
    assert "Storm hits" not in doc.content
    assert doc.content.startswith("It covers installation")


def test_the_byline_inside_a_sentence_stays():
    # The author's name in bold opening a sentence is a word of the prose, not a byline.
    sentence = ("Jane Doe, chief executive of the company, explains how the storm reached "
                "the coast.")
    html = (
        "<!doctype html><html><head><title>Storm hits the coast | Example News</title>"
        "<meta name='author' content='Jane Doe'></head><body><article>"
        "<h1>Storm hits the coast</h1><p class='byline'>By Jane Doe</p>"
        f"<p><strong>Jane Doe</strong>, chief executive of the company, explains how the storm "
        f"reached the coast.</p><p>{BODY}</p><p>{BODY}</p></article></body></html>"
    )
    doc = run(html)
    assert doc.content.startswith(sentence)


_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9)


@settings(max_examples=60, deadline=None)
@given(before=st.lists(_WORDS, max_size=6), title=st.lists(_WORDS, min_size=1, max_size=3),
       after=st.lists(_WORDS, max_size=6),
       tag=st.sampled_from(["b", "strong", "em", "code", "a", "span", "time", "small"]))
def test_the_title_wrapped_anywhere_in_a_sentence_stays(before, title, after, tag):
    assume(before or after)  # the title alone on its line is a header block, not a sentence
    name = " ".join(title)
    line = " ".join([*before, f"<{tag}>{name}</{tag}>", *after]) + "."
    doc = run(docs_page(name, f"<h1>{name}</h1><p>{line}</p>"))
    assert " ".join([*before, name, *after]) + "." in doc.content
