import pickle

import pytest

from handlers import default_registry
from handlers.html import HTML_HANDLER
from handlers.registry import HandlerContext
from pipeline.core.errors import PipelineError

PARA = (
    "This paragraph is the body of the article, long enough to be scored as real content, "
    "with commas, clauses, and a few more words to make it count. "
)


def page(body: str, head: str = "<title>Big News Today - Example Site</title>") -> bytes:
    return f"<!doctype html><html lang='en'><head>{head}</head><body>{body}</body></html>".encode()


def article(inner: str) -> str:
    return (
        "<nav><a href='/'>Home</a><a href='/news'>News</a></nav>"
        f"<article>{inner}</article>"
        "<footer>Copyright Example Site. All rights reserved.</footer>"
    )


def run(body: bytes, fmt: str = "text", url: str = "https://example.org/a/b.html"):
    return HTML_HANDLER.handle(body, HandlerContext(url=url, format=fmt))


def test_registered_and_sniffed():
    registry = default_registry()
    assert registry.select("text/html", b"<html>") is HTML_HANDLER
    assert registry.select("application/xhtml+xml", b"<html>") is HTML_HANDLER
    assert registry.select(None, b"  <!DOCTYPE html><html>") is HTML_HANDLER
    assert HTML_HANDLER.sniff(b"<!-- hi --><head><title>x</title>")
    assert not HTML_HANDLER.sniff(b'{"html": 1}')
    assert HTML_HANDLER.sniff(b'<?xml version="1.0"?>\n<!DOCTYPE html PUBLIC "x"><html>')
    assert HTML_HANDLER.sniff(b"\xff\xfe" + "<!DOCTYPE html><html>".encode("utf-16-le"))
    assert not HTML_HANDLER.sniff(b'<?xml version="1.0"?><rss version="2.0">')
    assert pickle.loads(pickle.dumps(HTML_HANDLER)).name == "html"


def test_main_content_without_navigation():
    doc = run(page(article(f"<p>{PARA}</p><p>{PARA}</p>")))
    assert "body of the article" in doc.content
    assert "Home" not in doc.content
    assert "rights reserved" not in doc.content
    assert doc.format == "text"


def test_title_cleaned_and_metadata():
    head = (
        "<title>Big News Today | Example Site</title>"
        "<meta property='og:site_name' content='Example Site'>"
        "<meta name='author' content='Jane Doe'>"
        "<meta name='description' content='What happened.'>"
        "<link rel='canonical' href='/a/canon'>"
        "<meta property='article:published_time' content='2024-01-02T03:04:05Z'>"
    )
    doc = run(page(article(f"<p>{PARA}</p>"), head))
    assert doc.title == "Big News Today"
    assert doc.metadata["byline"] == "Jane Doe"
    assert doc.metadata["site_name"] == "Example Site"
    assert doc.metadata["canonical_url"] == "https://example.org/a/canon"
    assert doc.metadata["published"] == "2024-01-02T03:04:05+00:00"  # ISO 8601, offset spelled out
    assert doc.metadata["lang"] == "en"


def test_hidden_elements_are_dropped_and_counted():
    body = article(
        f"<p>{PARA}</p><p hidden>secret one</p><div aria-hidden='true'>secret two</div>"
        f"<p style='color:red; display: none'>secret three</p><p>{PARA}</p>"
    )
    doc = run(page(body))
    assert "secret" not in doc.content
    assert doc.metadata["hidden_removed"] == 3


def test_javascript_links_and_handlers_keep_their_text():
    body = article(
        f"<p>{PARA} <a href='javascript:alert(1)' onclick='evil()'>click text</a> "
        f"and <a href='/rel/page'>relative link</a>.</p><p>{PARA}</p>"
    )
    doc = run(page(body), "markdown")
    assert "click text" in doc.content
    assert "javascript:" not in doc.content
    assert "evil" not in doc.content
    assert "[relative link](https://example.org/rel/page)" in doc.content


def test_markdown_structure():
    body = article(
        f"<h2>Section</h2><p>{PARA} <em>stress</em> and <strong>bold</strong>.</p>"
        "<ul><li>first item</li><li>second item</li></ul>"
        "<blockquote>quoted words here</blockquote>"
        "<pre><code class='language-python'>print('hi')</code></pre>"
        "<img src='data:image/png;base64,AAAA' alt='a chart'>"
        "<img src='/pics/x.png' alt='photo'>"
        "<table><tr><th>Name</th><th>Score</th></tr><tr><td>Ann</td><td>9</td></tr></table>"
    )
    doc = run(page(body), "markdown")
    assert "## Section" in doc.content
    assert "*stress*" in doc.content and "**bold**" in doc.content
    assert "- first item\n\n- second item" in doc.content or "- first item\n- second item" in (
        doc.content
    )
    assert "> quoted words here" in doc.content
    assert "```python\nprint('hi')\n```" in doc.content
    assert "[image: a chart]" in doc.content and "base64" not in doc.content
    assert "![photo](https://example.org/pics/x.png)" in doc.content
    assert "| Name | Score |\n| --- | --- |\n| Ann | 9 |" in doc.content


def test_text_format_is_clean():
    body = article(f"<h2>Section</h2><p>{PARA} <em>stress</em></p><ul><li>item</li></ul>")
    doc = run(page(body), "text")
    assert "#" not in doc.content and "*" not in doc.content
    assert "stress" in doc.content and "item" in doc.content


def test_empty_page_is_empty_error():
    for body in (b"", b"   ", page(""), page("<div><script>var a=1;</script></div>")):
        with pytest.raises(PipelineError) as info:
            run(body)
        assert info.value.kind == "empty"


@pytest.mark.parametrize(
    ("title", "body"),
    [
        ("Just a moment...", "<div id='cf-wrapper'><h1>Checking your browser before accessing "
                             "the site.</h1><form id='challenge-form'></form></div>"),
        ("Attention Required!", "<p>Please complete the security check to access.</p>"),
        ("Access Denied", "<h1>Access Denied</h1><p>You don't have permission.</p>"),
        ("Robot check", "<p>Are you a robot?</p><div class='g-recaptcha'></div>"),
    ],
)
def test_bot_challenges(title, body):
    with pytest.raises(PipelineError) as info:
        run(page(body, f"<title>{title}</title>"))
    assert info.value.kind == "challenge"
    assert "challenge" in info.value.message


def test_javascript_app_shell():
    shell = page(
        "<noscript>You need to enable JavaScript to run this app.</noscript>"
        "<div id='root'></div><script src='/static/main.js'></script>",
        "<title>App</title>",
    )
    with pytest.raises(PipelineError) as info:
        run(shell)
    assert info.value.kind == "challenge"
    assert "JavaScript" in info.value.message


def test_article_mentioning_captcha_is_not_a_challenge():
    text = "Researchers studied how captcha systems and bot detection work. " * 40
    doc = run(page(article(f"<p>{text}</p>"), "<title>Just a moment of science</title>"))
    assert "captcha" in doc.content


def test_utf16_with_bom_and_meta_charset():
    html = "<html><head><title>Café</title></head><body><article><p>" + PARA + "é</p></article>"
    doc = run(b"\xff\xfe" + html.encode("utf-16-le"))
    assert doc.content.endswith("é")
    latin = ("<html><head><meta charset='iso-8859-1'></head><body><article><p>" + PARA
             + "ação\x00</p></article></body></html>").encode("latin-1")
    doc = run(latin)
    assert "ação" in doc.content and "\x00" not in doc.content


@pytest.mark.parametrize("prefix", [b"", b"\xef\xbb\xbf"])
def test_utf8_page_whose_meta_charset_lies_is_parsed_as_utf8(prefix):
    # The header (or the BOM) says UTF-8, the page's own <meta> says windows-1252: the
    # parser reads the page's bytes and must not re-sniff them by the <meta>.
    html = ("<html><head><meta charset='windows-1252'><title>Café “Zürich”</title></head>"
            "<body><article><p>" + PARA + "Grüße — 日本語</p></article></body></html>")
    doc = HTML_HANDLER.handle(prefix + html.encode(), HandlerContext(
        url="https://example.org/", format="text", charset=None if prefix else "utf-8"))
    assert doc.title == "Café “Zürich”"
    assert doc.content.endswith("Grüße — 日本語")


def test_header_block_is_metadata_not_body():
    head = ("<title>Storm hits the coast | Example Site</title>"
            "<meta name='author' content='Jane Doe'>")
    body = article(
        "<h1>Storm hits the coast</h1><p class='byline'>By Jane Doe</p>"
        "<p><time datetime='2024-01-02'>Jan. 2, 2024 10:04 am ET</time></p>"
        f"<p>{PARA}</p><p>{PARA}</p>"
    )
    doc = run(page(body, head))
    assert doc.title == "Storm hits the coast"
    assert doc.metadata["byline"] == "Jane Doe"
    assert "Storm hits" not in doc.content
    assert "Jane Doe" not in doc.content
    assert "Jan. 2" not in doc.content
    assert doc.content.startswith("This paragraph")


def test_captions_credits_and_gallery_counters_dropped():
    body = article(
        f"<p>{PARA}</p>"
        "<figure><img src='/a.jpg'><figcaption>The mayor speaks to reporters.</figcaption></figure>"
        "<p>Photo: Jane Roe / Agency</p><div>Image 3 of 12</div><div>(Image credit: NASA)</div>"
        f"<p>{PARA}</p>"
    )
    doc = run(page(body))
    for gone in ("mayor speaks", "Jane Roe", "3 of 12", "NASA"):
        assert gone not in doc.content
    assert doc.content.count("This paragraph") == 2


def test_end_of_article_boilerplate_cut_but_embedded_posts_kept():
    body = article(
        f"<p>{PARA}</p><p>{PARA}</p>"
        "<blockquote class='twitter-tweet'><p>We are on it. Great news for everyone today!</p>"
        "— Someone (@someone) <a href='https://twitter.com/someone/status/1'>Nov 18</a>"
        "</blockquote>"
        "<h3>More Great Stories</h3>"
        "<ul><li><a href='/x'>Another story you might like</a></li>"
        "<li><a href='/y'>Yet another story</a></li></ul>"
        "<p>Sign up for our newsletter to get the latest news.</p>"
        "<div class='share-tools'><a href='/s'>Share</a></div>"
    )
    doc = run(page(body))
    assert "We are on it" in doc.content and "@someone" in doc.content
    for gone in ("More Great Stories", "Another story", "newsletter", "Share"):
        assert gone not in doc.content


def test_tables_and_lists_inside_the_article_are_kept():
    body = article(
        f"<p>{PARA}</p><table><tr><th>City</th><th>Rain</th></tr>"
        "<tr><td>Oslo</td><td>12 mm</td></tr><tr><td>Bergen</td><td>40 mm</td></tr></table>"
        "<ol><li>Close the windows before the storm.</li><li>Charge your phone.</li></ol>"
        f"<p>{PARA}</p>"
    )
    doc = run(page(body), "markdown")
    assert "| City | Rain |" in doc.content and "| Bergen | 40 mm |" in doc.content
    assert "1. Close the windows" in doc.content and "2. Charge your phone." in doc.content


def test_plain_text_has_one_line_per_table_row_and_no_markdown_escapes():
    body = article(
        f"<p>{PARA}</p><table><tr><th>Name</th><th>Mark</th></tr>"
        "<tr><td>Alpha</td><td>a*b_c</td></tr><tr><td>Beta | pipe</td><td>[x]</td></tr></table>"
        f"<p>{PARA}</p>"
    )
    text = run(page(body), "text").content
    assert "Name | Mark\nAlpha | a*b_c\nBeta | pipe | [x]" in text
    assert "\\" not in text
    markdown = run(page(body), "markdown").content
    assert "| Beta \\| pipe | \\[x\\] |" in markdown  # markdown still escapes


def test_short_scored_result_falls_back_to_landmarks():
    body = (
        "<div class='promo'><p>" + "Buy now, limited offer, while stocks last. " * 2 + "</p></div>"
        "<main><div><span>Short lines only here.</span><br><span>Another line.</span></div>"
        "<div><span>And a third line of main text.</span></div></main>"
    )
    doc = run(page(body))
    assert "Short lines only here." in doc.content
    assert "third line" in doc.content


def test_binary_bytes_are_not_text():
    for body in (b"\x89PNG\r\n\x1a\n" + bytes(2000), bytes(range(256)) * 8):
        with pytest.raises(PipelineError) as info:
            run(body)
        assert info.value.kind == "decode"


def test_absurd_nesting_neither_crashes_nor_lies():
    deep = b"<html><body>" + b"<div>" * 3000 + b"<p>bottom text, with words.</p>" + b"</div>" * 3000
    try:
        doc = run(deep)
    except PipelineError as exc:
        assert exc.kind == "empty"
    else:
        assert "bottom text" in doc.content


@pytest.mark.parametrize(
    ("label", "text", "codec"),
    [("gb2312", "中文页面的内容，包括一个扩展字符：镕", "gbk"),
     ("iso-8859-1", "Café – “quoted” text", "cp1252"),
     ("windows-874", "ภาษาไทย", "cp874"),
     ("shift_jis", "日本語のページ①", "cp932")],
)
def test_legacy_labels_decode_as_their_browser_superset(label, text, codec):
    body = f"<html><head><meta charset='{label}'></head><body><article><p>{PARA}{text}</p>"
    doc = run(body.encode(codec))
    assert doc.content.endswith(text)


def test_embedded_social_posts_survive_their_class_names():
    body = article(
        f"<p>{PARA}</p>"
        "<blockquote class='social-embed twitter-tweet'><p>Short post from the scene.</p>"
        "— Reporter (@reporter)</blockquote>"
        f"<p>{PARA}</p>"
    )
    doc = run(page(body))
    assert "Short post from the scene." in doc.content


def _card(n: int) -> str:
    return (f"<article class='post'><h3><a href='/p/{n}'>Other post number {n}</a></h3>"
            f"<p>Teaser text of another post, number {n}, with a few words.</p></article>")


def test_teaser_cards_inside_the_article_are_dropped_but_a_live_blog_is_kept():
    doc = run(page(article(f"<p>{PARA}</p>" * 6 + _card(1) + _card(2) + _card(3))))
    assert "Other post" not in doc.content and doc.content.count("This paragraph") == 6
    live = page("<main>" + "".join(_card(n) for n in range(8)) + "</main>")
    assert "Other post number 5" in run(live).content


def test_closing_sentences_that_merely_mention_cta_words_are_kept():
    body = article(
        "<p>On Monday, Nov. 18, the council voted.</p>"
        f"<p>{PARA}</p><p>{PARA}</p>"
        "<p>The deaths were not related to the storm.</p>"
        "<p>He posted the statement on Twitter.</p>"
        "<p>Shares of the company fell 3% on Monday.</p>"
    )
    doc = run(page(body))
    assert doc.content.startswith("On Monday, Nov. 18, the council voted.")
    assert "not related to the storm" in doc.content
    assert "He posted the statement on Twitter." in doc.content
    assert doc.content.endswith("Shares of the company fell 3% on Monday.")


def test_title_is_the_heading_a_part_of_the_declared_title_confirms():
    head = "<title>What is Ownership? - The Rust Programming Language</title>"
    doc = run(page(f"<main><h1>What Is Ownership?</h1><p>{PARA}</p></main>", head))
    assert doc.title == "What Is Ownership?"
    assert "Ownership" not in doc.content


def test_data_table_of_links_is_kept():
    rows = "".join(f"<tr><td><a href='/t/{n}'>Team {n}</a></td><td>{n}</td><td>{n * 3}</td></tr>"
                   for n in range(1, 6))
    body = article(f"<p>{PARA}</p><table><tr><th>Team</th><th>W</th><th>Pts</th></tr>{rows}"
                   f"</table><p>{PARA}</p>")
    doc = run(page(body), "markdown")
    assert "| [Team 3](https://example.org/t/3) | 3 | 9 |" in doc.content


def test_article_split_in_chunks_is_read_whole():
    chunk = "<div class='body-chunk grid'><p>{}</p><p>{}</p></div>"
    filler = "<div class='ad-rail'><a href='/x'>Advertisement</a></div>"
    body = ("<main><div class='wrap'>" + chunk.format(PARA, PARA) + filler + "</div>"
            "<div class='wrap'>" + chunk.format("Second chunk, " + PARA, PARA) + "</div></main>")
    doc = run(page(body))
    assert doc.content.count("This paragraph") == 4
    assert "Second chunk" in doc.content


def test_custom_element_app_shell():
    shell = page("<app-root></app-root><script src='/main.js'></script>", "<title>Shop</title>")
    with pytest.raises(PipelineError) as info:
        run(shell)
    assert info.value.kind == "challenge"


def test_table_layout_page_reads_the_content_cell():
    nav = "".join(f"<a href='/s{n}'>Section {n}</a><br>" for n in range(12))
    text = "<br><br>".join([PARA] * 4)
    body = (f"<table><tr><td class='nav'>{nav}</td>"
            f"<td><font face='Arial'><b>Old page</b><br>{text}</font></td></tr>"
            "<tr><td colspan='2'>© 2003 Example</td></tr></table>")
    doc = run(page(body))
    assert doc.content.count("This paragraph") == 4
    assert "Section 3" not in doc.content


@pytest.mark.parametrize(
    ("block", "language"),
    [("<div class='highlight highlight-source-python'><pre>x = 1</pre></div>", "python"),
     ("<pre class='brush: ruby'>x = 1</pre>", "ruby"),
     ("<pre data-lang='Go'>x = 1</pre>", "go"),
     ("<pre><code>x = 1</code></pre>", "")],
)
def test_code_block_languages(block, language):
    doc = run(page(article(f"<p>{PARA}</p>{block}<p>{PARA}</p>")), "markdown")
    assert f"```{language}\nx = 1\n```" in doc.content


def test_short_news_about_access_denied_is_not_a_challenge():
    text = ("A federal court denied access to the records on Tuesday, ruling that the agency "
            "may withhold them, and the plaintiffs said they would appeal the decision. ") * 6
    doc = run(page(article(f"<p>{text}</p>"), "<title>Access denied: court rejects appeal</title>"))
    assert "federal court" in doc.content


def test_loading_placeholder_shell():
    shell = page("<div id='app'>Loading…</div><script src='/app.js'></script>",
                 "<title>App</title>")
    with pytest.raises(PipelineError) as info:
        run(shell)
    assert info.value.kind == "challenge"


@pytest.mark.parametrize("name", ["comments", "discussion"])
def test_comment_threads_are_left_out(name):
    thread = "".join(
        f"<article class='reply-item'><p>Reader {n} says: {PARA}{PARA}</p></article>"
        for n in range(6)
    )
    doc = run(page(article(f"<p>{PARA}</p><p>{PARA}</p>") + f"<section id='{name}'>{thread}"
                   "</section>"))
    assert "Reader" not in doc.content
    assert doc.content.count("This paragraph") == 2


def test_images_without_alt_text_are_left_out_of_markdown():
    body = article(f"<p>{PARA}</p><img src='/pixel.gif'><img src='data:image/gif;base64,R0'>"
                   f"<p>{PARA}</p>")
    doc = run(page(body), "markdown")
    assert "pixel" not in doc.content and "![" not in doc.content and "[image" not in doc.content


def test_figure_text_without_figcaption_is_a_caption_but_figure_quotes_stay():
    body = article(
        f"<p>{PARA}</p>"
        "<figure><img src='/a.jpg' alt='river'><span class='meta'>The river at dawn."
        " <cite>Jane Roe/Getty Images</cite></span></figure>"
        "<figure><blockquote>Words worth quoting, kept.</blockquote></figure>"
        "<figure><div class='highlight'><pre>total = price * count</pre></div></figure>"
        "<figure><div><table><tr><td>Oslo</td><td>12 mm</td></tr></table></div></figure>"
        f"<p>{PARA}</p>"
    )
    doc = run(page(body))
    assert "river at dawn" not in doc.content and "Getty" not in doc.content
    assert "Words worth quoting, kept." in doc.content
    assert "total = price * count" in doc.content and "12 mm" in doc.content


def test_comments_on_request_follow_the_article():
    thread = "<section id='comments'><p>Reader one says: well written, thanks.</p></section>"
    body = page(article(f"<p>{PARA}</p><p>{PARA}</p>") + thread)
    assert "Reader one" not in run(body).content
    doc = HTML_HANDLER.handle(body, HandlerContext(url="https://e.org/", format="markdown",
                                                   options={"include_comments": True}))
    article_part, _, comments = doc.content.partition("## Comments")
    assert "This paragraph" in article_part and "Reader one says" in comments
