from handlers.html_dom import parse
from handlers.html_metadata import clean_byline, extract_metadata


def meta_of(html: str, url: str = "https://news.example/a/1"):
    return extract_metadata(parse(html), url)


def test_json_ld_graph_author_dates_and_publisher():
    html = """<html><head><script type="application/ld+json">
    {"@context": "https://schema.org", "@graph": [
      {"@type": "WebSite", "name": "Example News"},
      {"@type": "NewsArticle", "headline": "Rivers rise after storm",
       "author": [{"@type": "Person", "name": "Ana Lima"}],
       "datePublished": "2024-03-01T08:00:00Z", "dateModified": "2024-03-02T09:00:00Z",
       "publisher": {"@type": "Organization", "name": "Example News"}}]}
    </script><title>Rivers rise after storm | Example News</title></head>
    <body><h1>Rivers rise after storm</h1></body></html>"""
    title, meta = meta_of(html)
    assert title == "Rivers rise after storm"
    assert meta["byline"] == "Ana Lima"
    assert meta["published"] == "2024-03-01T08:00:00+00:00"
    assert meta["modified"] == "2024-03-02T09:00:00+00:00"
    assert meta["site_name"] == "Example News"


def test_visible_byline_and_time_element_when_no_declared_author():
    html = """<html lang="pt-BR"><head><title>Chuva forte - Jornal</title>
    <meta property="og:image" content="/img/a.jpg"></head><body>
    <h1>Chuva forte</h1><div class="article-byline">Por Maria Souza | Publicado 3 mar 2024</div>
    <time datetime="2024-03-03">3 mar</time></body></html>"""
    title, meta = meta_of(html)
    assert title == "Chuva forte"
    assert meta["byline"] == "Maria Souza"
    assert meta["published"] == "2024-03-03"
    assert meta["lang"] == "pt-BR"
    assert meta["image"] == "https://news.example/img/a.jpg"
    assert "description" not in meta  # absent keys are omitted


def test_site_heading_is_not_the_title():
    html = """<html><head><title>The Daily Site</title>
    <meta property="og:title" content="Council approves new budget">
    <meta property="og:site_name" content="The Daily Site"></head>
    <body><h1>The Daily Site</h1><h2>Council approves new budget</h2></body></html>"""
    title, _ = meta_of(html)
    assert title == "Council approves new budget"


def test_clean_byline():
    assert clean_byline("By JANE DOE, AP Writer") == "JANE DOE, AP Writer"
    assert clean_byline("by Jeff FoustMonday, November 18, 2019") == "Jeff Foust"
    assert clean_byline("Jose AltoverosView More Articles") == "Jose Altoveros"


def test_title_prefers_the_heading_repeating_the_titles_first_part():
    # The menu's <h1> repeats the book's name (the title's last part); the chapter heading,
    # later on the page, repeats its first part: that is the page's title.
    html = ("<html><head><title>Data Types - The Rust Programming Language</title></head><body>"
            "<div class='menu'><h1 class='menu-title'>The Rust Programming Language</h1></div>"
            "<main><h2>Data Types</h2><p>Every value has a type.</p></main></body></html>")
    assert extract_metadata(parse(html), "https://example.org/")[0] == "Data Types"


def test_the_one_h1_restating_the_declared_title_is_the_headline():
    html = """<html><head><title>Route Planner | Plan trips for free - Example Maps</title>
    </head><body><h1>Free Route Planner</h1><p>Plan a trip.</p></body></html>"""
    assert meta_of(html)[0] == "Free Route Planner"
    # ... not one that says something else (a section's or a campaign's heading).
    html = """<html><head><title>Tide tables for the east coast - Example Maps</title>
    </head><body><h1>Join our summer festival</h1><p>Plan a trip.</p></body></html>"""
    assert meta_of(html)[0] == "Tide tables for the east coast"


def test_a_heading_title_is_its_text_as_shown():
    # A line break parts two words; a permalink anchor is navigation, not part of the title.
    html = """<html><head><title>Garden Tools Guide | Example Shop</title></head><body>
    <h1>Garden Tools<br>Guide<a class="headerlink" href="#garden-tools">¶</a></h1>
    <p>Rakes and spades.</p></body></html>"""
    assert meta_of(html)[0] == "Garden Tools Guide"


def test_the_headline_shown_as_the_title_is_not_repeated_in_the_content():
    from handlers.html import HTML_HANDLER
    from handlers.registry import HandlerContext

    prose = "".join(f"<p>Spades, rakes and hoes were sorted by size, weight and age in batch "
                    f"{n}, then cleaned, oiled and hung on the shed wall for spring.</p>"
                    for n in range(4))
    html = (f"<html><head><title>Garden Tools Guide | Example Shop</title></head><body>"
            f"<article><h1>Garden Tools<br>Guide<a href='#top'>¶</a></h1>{prose}</article>"
            f"</body></html>")
    doc = HTML_HANDLER.handle(html.encode(), HandlerContext(url="https://shop.example/g",
                                                            format="text"))
    assert doc.title == "Garden Tools Guide"
    assert "Garden Tools" not in doc.content and "batch 3" in doc.content


def test_declared_author_reference_is_resolved():
    # Yoast-style @graph: the article names its author by @id only.
    html = """<html><head><script type="application/ld+json">{"@graph": [
      {"@type": "Article", "headline": "Stadia frame rates", "author": {"@id": "#/person/1"},
       "publisher": {"@id": "#org"}},
      {"@type": "Organization", "@id": "#org", "name": "Power Users"},
      {"@type": ["Person"], "@id": "#/person/1", "name": "Lewis White"}]}</script></head>
    <body><aside><p class="widgetsmallauthor">by Anmol</p></aside><h1>Stadia frame rates</h1>
    </body></html>"""
    _, meta = meta_of(html)
    assert (meta["byline"], meta["site_name"]) == ("Lewis White", "Power Users")


def test_article_inside_a_web_page_and_in_microdata():
    nested = """<html><head><script type="application/ld+json">{"@type": "WebPage",
      "mainEntity": {"@type": "DiscussionForumPosting", "headline": "Bike won't start",
      "author": {"@type": "Person", "name": "felixen"}}}</script></head><body>
      <h1>Bike won't start</h1><div class="message-author">spikeymike</div></body></html>"""
    assert meta_of(nested)[1]["byline"] == "felixen"
    microdata = """<html><head><title>Spring notes</title></head><body>
      <article itemscope itemtype="https://schema.org/BlogPosting">
      <h1 itemprop="headline">Spring notes</h1><span itemprop="author">Kim Lee</span>
      </article><div class="author-box">Guest</div></body></html>"""
    assert meta_of(microdata)[1]["byline"] == "Kim Lee"


def test_declared_co_authors_are_listed():
    html = """<html><head><script type="application/ld+json">{"@type": "NewsArticle",
      "headline": "Best appliances", "author": [{"@type": "Person", "name": "Ann Roe"},
      {"@type": "Person", "name": "Bo Li"}, {"@type": "Organization", "name": "The Desk"}]}
      </script></head><body><h1>Best appliances</h1></body></html>"""
    assert meta_of(html)[1]["byline"] == "Ann Roe, Bo Li"


def test_a_declared_utc_time_takes_the_zone_the_page_shows():
    html = """<html><head><script type="application/ld+json">{"@type": "BlogPosting",
      "headline": "Late post", "datePublished": "2025-12-19T03:05:00+00:00"}</script></head>
      <body><h1>Late post</h1><time datetime="2025-12-18T19:05:00-08:00">Dec 18</time>
      </body></html>"""
    assert meta_of(html)[1]["published"] == "2025-12-18T19:05:00-08:00"
    # A different instant on the page (a comment's time) changes nothing.
    other = html.replace("2025-12-18T19:05:00-08:00", "2025-12-20T10:00:00-08:00")
    assert meta_of(other)[1]["published"] == "2025-12-19T03:05:00+00:00"
