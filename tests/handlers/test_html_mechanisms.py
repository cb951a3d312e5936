"""Each main-content mechanism pinned by a small hand-written page (not a copy of any real
page): what the page holds, and what the extraction must keep and leave out."""

from __future__ import annotations

from handlers.html import HTML_HANDLER
from handlers.registry import HandlerContext

NAV = ("<nav><a href='/'>Home</a> <a href='/about'>About us</a> <a href='/shop'>Shop</a> "
       "<a href='/blog'>Blog</a> <a href='/contact'>Contact</a></nav>")
FOOTER = "<footer><p>Copyright 2025 Example Company. All rights reserved.</p></footer>"


def sentences(topic: str, count: int = 3) -> list[str]:
    """``count`` distinct paragraphs of plain prose about ``topic``."""
    return [
        f"The {topic} was studied for {n + 2} years, and the team found that small changes, "
        f"made early and checked often, mattered more than any single large decision about "
        f"the {topic} (finding {n + 1}, written up in the spring report)."
        for n in range(count)
    ]


def paragraphs(texts: list[str]) -> str:
    return "".join(f"<p>{t}</p>" for t in texts)


def extract(body: str, fmt: str = "text", head: str = "<title>A page</title>") -> str:
    html = f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"
    return HTML_HANDLER.handle(html.encode(), HandlerContext(url="https://example.test/p",
                                                             format=fmt)).content


def page_keeps(body: str, kept: list[str]) -> str:
    """The extracted text of ``body``: every kept paragraph in it, the page's navigation and
    footer out."""
    text = extract(body)
    assert all(part in text for part in kept)
    assert "About us" not in text and "Copyright" not in text
    return text


def test_boilerplate_names_match_whole_words_not_fragments():
    article = sentences("river delta")
    about = ("This site collects notes from volunteers who walk the same paths every week "
             "and write down what they see along the way in plain words for everyone. ") * 5
    # "pad-" holds "ad-", "canvas" holds "nav": neither is a boilerplate word.
    body = (f"{NAV}<div class='pad-y-4 canvas-wrap'>{paragraphs(article)}</div>"
            f"<div class='site-info'><p>{about}</p></div>{FOOTER}")
    page_keeps(body, article)


def test_a_named_container_holding_several_paragraphs_of_prose_stays():
    # A page builder names every section "widget": its sections are the page.
    sections = [sentences(topic) for topic in ("harbour", "lighthouse", "ferry")]
    body = NAV + "".join(
        f"<div class='builder-widget widget-type-module'><h2>Part {i}</h2>{paragraphs(s)}</div>"
        for i, s in enumerate(sections)) + FOOTER
    text = page_keeps(body, [p for s in sections for p in s])
    # ... while a real widget, short and linking elsewhere, still goes.
    widget = ("<div class='widget'><a href='/x'>Most read: the ten best walks</a> "
              "<a href='/y'>Most read: a guide to tides</a></div>")
    text = extract(f"<article>{paragraphs(sentences('harbour'))}{widget}</article>")
    assert "Most read" not in text


def test_a_landmark_wrapping_the_page_keeps_the_article_inside_it():
    article = sentences("mountain railway", 4)
    # An unclosed <header>: the parser puts the rest of the page inside it.
    body = (f"<header><div class='logo'>Example Company</div>{NAV}"
            f"<div class='main-area'><h1>The railway</h1>{paragraphs(article)}</div>{FOOTER}")
    page_keeps(body, article)


def test_a_hidden_class_shown_at_a_breakpoint_is_visible_content():
    wide = sentences("glacier")
    body = (f"{NAV}<div class='hidden lg:block'>{paragraphs(wide)}</div>"
            f"<div class='d-none d-md-block'><p>Shown from medium screens up, as a note about "
            f"the glacier survey and its maps.</p></div>"
            f"<div class='hidden'><p>Never shown: a dialog's text.</p></div>{FOOTER}")
    text = extract(body)
    assert all(p in text for p in wide) and "Shown from medium screens up" in text
    assert "Never shown" not in text


def test_text_only_in_noscript_is_the_page_when_it_shows_nothing_else():
    posts = sentences("tide tables", 4)
    body = ("<div id='app'></div><script>start()</script>"
            "<noscript><div class='crawler-view'>"
            + "".join(f"<div class='post'><span class='author'>user{i}</span>"
                      f"<p>{p}</p></div>" for i, p in enumerate(posts))
            + "</div></noscript>")
    text = extract(body)
    assert all(p in text for p in posts)
    # A page with content of its own keeps ignoring its <noscript> fallback notes.
    text = extract(f"{paragraphs(posts)}<noscript><p>{'Please turn on scripts. ' * 40}</p>"
                   "</noscript>")
    assert "Please turn on scripts" not in text


def test_a_render_parked_in_a_hidden_container_is_the_page():
    article = sentences("orchard", 4)
    body = (f"<div id='root'><p>Loading…</p></div><div hidden id='S:0'>{paragraphs(article)}"
            "</div><script>moveIntoPlace()</script>")
    text = extract(body)
    assert all(p in text for p in article)


def test_streamed_parts_are_shown_where_their_placeholders_are():
    # A streaming render: the page shows a header, a short intro and a menu; each late part
    # arrives hidden at the end of the page, and a script swaps it into its placeholder.
    intro = "Plan a walking holiday along the coast with maps, tide tables and ferry times."
    first, second = sentences("coastal path", 2), sentences("ferry timetable", 2)
    menu = "".join(f"<li><a href='/{n}'>Section {n} of the guide</a></li>" for n in range(30))
    body = (f"{NAV}<main><h1>Coast guide</h1><p>{intro}</p><template id='B:0'></template>"
            f"<p>Loading…</p><ul>{menu}</ul><template id='B:1'></template></main>{FOOTER}"
            f"<div hidden id='S:1'>{paragraphs(second)}</div><script>swap('B:1','S:1')</script>"
            f"<div hidden id='S:0'>{paragraphs(first)}</div><script>swap('B:0','S:0')</script>"
            f"<div hidden id='S:7'><p>{'A part no placeholder asks for stays hidden. ' * 9}</p>"
            "</div>")
    text = page_keeps(body, first + second)
    # In their placeholders' order, not the order they arrived in.
    assert text.index(first[-1]) < text.index(second[0])
    assert "no placeholder asks" not in text


def test_a_captcha_setting_in_page_data_does_not_make_a_short_thread_a_challenge():
    post = ("Has anyone tried the new export option? It works for me on small files, but "
            "large ones stop halfway and the log says nothing useful.")
    data = ('<script type="application/json" id="data-settings">{"plugin_hcaptcha_enabled":'
            'false,"hcaptcha_site_key":""}</script>')
    text = extract(f"{data}<div class='topic'><h1>Export stops halfway</h1><p>{post}</p></div>")
    assert post in text


def test_a_page_holding_an_article_is_not_a_challenge_whatever_its_widgets_say():
    article = sentences("canal lock", 3)
    form = ("<form class='comment-form'><div class='g-recaptcha' data-sitekey='x'></div>"
            "<p>Please complete the captcha to post a comment.</p></form>")
    text = extract(f"<article>{paragraphs(article)}</article>{form}")
    assert all(p in text for p in article)


def forum_page(posts: list[tuple[str, str, str]], declared: bool) -> str:
    """A thread: each post an author, a date and its text, in comment-named containers."""
    ld = ('<script type="application/ld+json">{"@context": "https://schema.org", '
          '"@type": "DiscussionForumPosting", "headline": "Tide times at the old pier"}'
          "</script>") if declared else ""
    items = "".join(
        f"<article class='comment post'><div class='post-author'>{who}</div>"
        f"<div class='user-stats'>Joined: Jan 2020 · Posts: {40 + i}</div>"
        f"<time datetime='2024-03-0{i + 1}'>{when}</time><div class='post-body'><p>{text}</p>"
        f"</div><div class='signature'>Sailing since 1999 · Blue Heron II</div></article>"
        for i, (who, when, text) in enumerate(posts))
    suggested = ("<div class='suggested-topics'><h3>Suggested topics</h3><ul>"
                 "<li><a href='/t/1'>Best fishing spots near the pier</a></li>"
                 "<li><a href='/t/2'>Parking at the harbour</a></li></ul></div>")
    return (f"{ld}{NAV}<aside class='sidebar'><p>Welcome to the forum!</p></aside>"
            f"<main><h1>Tide times at the old pier</h1><div class='comments thread'>{items}"
            f"</div>{suggested}</main>{FOOTER}")


POSTS = [
    ("harbourmaster", "March 1, 2024", "Does anyone know whether the tide tables posted at the "
     "old pier are still correct after the works last winter?"),
    ("gull_watcher", "March 1, 2024", "They were updated in February, but the low tide times "
     "are about ten minutes early compared with what I saw."),
    ("harbourmaster", "March 2, 2024", "Thanks, that matches what I noticed on Sunday, so I "
     "will add ten minutes for now."),
]


def test_a_forum_thread_is_its_posts_with_author_and_date_in_order():
    for declared in (True, False):  # by its structured data, or by its structure alone
        text = extract(forum_page(POSTS, declared))
        position = 0
        for part in (part for post in POSTS for part in post):  # all there, in page order
            position = text.index(part, position) + len(part)
        for gone in ("Suggested topics", "Best fishing spots", "Welcome to the forum",
                     "About us", "Copyright", "Joined", "Sailing since"):
            assert gone not in text


def test_comments_below_an_article_still_go():
    article = sentences("sea wall")
    comments = "".join(f"<div class='comment'><p>{t}</p></div>" for _, _, t in POSTS)
    text = extract(f"<article>{paragraphs(article)}</article>"
                   f"<section class='comments'>{comments}</section>")
    assert all(p in text for p in article)
    assert not any(t in text for _, _, t in POSTS)


def metadata(head: str, body: str = "<p>x</p>") -> dict:
    html = f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"
    return HTML_HANDLER.handle(html.encode(), HandlerContext(url="https://example.test/p",
                                                             format="text")).metadata


def test_page_type_comes_from_what_the_page_declares():
    def ld(kind: str) -> str:
        return f'<script type="application/ld+json">{{"@type": "{kind}"}}</script>'

    assert metadata(ld("QAPage"))["page_type"] == "forum"
    assert metadata(ld("Product") + ld("BreadcrumbList"))["page_type"] == "product"
    assert metadata(ld("NewsArticle"))["page_type"] == "article"
    assert metadata(ld("CollectionPage"))["page_type"] == "listing"
    assert metadata("<meta property='og:type' content='product'>")["page_type"] == "product"
    assert metadata("<meta name='generator' content='Sphinx 7.2'>")["page_type"] == "docs"
    micro = "<div itemscope itemtype='https://schema.org/DiscussionForumPosting'><p>x</p></div>"
    assert metadata("", micro)["page_type"] == "forum"
    assert "page_type" not in metadata("<title>Nothing declared</title>")


def test_consent_dialogs_are_boilerplate_however_long():
    notice = ("We and our partners store and access personal data, like browsing data or "
              "unique identifiers, on your device, and process it to measure and improve our "
              "services, as described in the notice you can change at any time. ") * 2
    dialog = (f"<div id='privacy-sdk' role='dialog'><p>{notice}</p><p>{notice}</p>"
              f"<p>{notice}</p></div>")
    named = f"<div class='consent-manager'><p>{notice}</p><p>{notice}</p><p>{notice}</p></div>"
    post = ("The ferry timetable changes on Monday; the first boat now leaves at seven, and "
            "the last one an hour earlier than before, so plan the return trip with care and "
            "check the board at the pier.")
    for banner in (dialog, named):
        text = extract(f"{banner}<div class='topic'><h1>Ferry times</h1><p>{post}</p></div>")
        assert post in text and "personal data" not in text


def test_one_block_of_many_climbs_to_the_container_holding_them_all():
    # A page of reviews, each in its own block (builder-made class names, no shared kind),
    # one long and full of commas: that one must not stand for the page.
    reviews = [f"The {topic} class was the best part of my week and I left feeling calm."
               for topic in ("morning", "evening", "weekend", "beginners", "breathing")]
    reviews.insert(2, "Warm, patient, precise, funny, and always prepared, she makes every "
                   "session, from the first stretch to the last rest, feel personal, careful, "
                   "and calm, even for people, like me, who had never tried it before.")
    body = NAV + "<div class='reviews'>" + "".join(
        f"<div class='blk-{n}a{n}'><div class='block-content'><p>{r}</p><p>- Reader {n}</p>"
        f"</div></div>" for n, r in enumerate(reviews)) + "</div>" + FOOTER
    page_keeps(body, reviews)


def test_when_names_remove_everything_the_retry_scores_without_them():
    # Every block of this small page sits in a "widget": name-based removal leaves nothing.
    # The retry keeps the page's own text and still drops its navigation and footer.
    blocks = ["We repair bicycles of every make, usually on the same day, in our workshop.",
              "Bring the bike in before noon, and it is ready to collect by five o'clock.",
              "Wheels, brakes and gears are checked with every repair, free of charge."]
    body = NAV + "".join(f"<div class='text-widget'><h2>Part {n}</h2><p>{b}</p></div>"
                         for n, b in enumerate(blocks)) + FOOTER
    page_keeps(body, blocks)


def test_a_short_article_on_a_page_of_menus_is_kept_as_it_is():
    article = paragraphs(sentences("bus depot", 2))
    links = [f"<li><a href='/{i}/{j}'>Section {i}.{j}</a></li>" for i in range(12)
             for j in range(12)]
    menus = "".join(f"<div class='menu-col'><ul>{''.join(links[i:i + 12])}</ul></div>"
                    for i in range(0, len(links), 12))
    text = extract(f"<div class='links'>{menus}</div><div class='story'>{article}</div>")
    assert "Section 3.4" not in text and "bus depot" in text


def test_a_reference_list_does_not_outscore_the_article():
    article = sentences("salt marsh", 3)
    references = "".join(
        f"<li>Author{n}, A., Writer, B., and Editor, C. ({2000 + n}). Marsh studies, volume "
        f"{n}, pages {n * 10}-{n * 10 + 9}, Coastal Press, Harbour Town, second edition.</li>"
        for n in range(14))
    body = (f"{NAV}<div class='page'><div class='text'>{paragraphs(article)}</div>"
            f"<div class='refs'><h2>References</h2><ol>{references}</ol></div></div>{FOOTER}")
    text = extract(body)
    assert all(p in text for p in article)


def test_a_winning_option_list_climbs_to_the_manual_holding_it():
    options = "".join(
        f"<dt>--flag-{n}</dt><dd><p>Turn on behaviour number {n}, which changes how the tool "
        f"reads, writes, and reports files, with defaults taken from the config, if any.</p>"
        f"</dd>" for n in range(12))
    description = [f"The tool copies files between two folders and keeps their dates as they "
                   f"were in part {n} of the run." for n in range(6)]
    examples = [f"Run it every night from a scheduled job to keep a spare copy of folder {n} "
                f"somewhere safe." for n in range(5)]
    body = (f"{NAV}<div class='manual'><div class='section'><h2>Description</h2>"
            f"{paragraphs(description)}</div><div class='section'><h2>Options</h2>"
            f"<div class='option-list'><dl>{options}</dl></div></div><div class='section'>"
            f"<h2>Examples</h2>{paragraphs(examples)}</div></div>{FOOTER}")
    text = extract(body)
    assert all(p in text for p in description + examples) and "--flag-11" in text


def test_a_product_page_is_its_name_price_description_and_specifications():
    ld = ('<script type="application/ld+json">{"@type": "Product", "name": "Trail Lantern 300",'
          ' "offers": {"price": "49.00"}}</script>')
    description = [f"The Trail Lantern gives a warm even light for {n + 3} hours on one charge "
                   f"and folds flat to fit in a side pocket of any pack." for n in range(10)]
    specs = ("<table><tr><th>Weight</th><td>210 g</td></tr><tr><th>Light</th><td>300 lumen</td>"
             "</tr><tr><th>Battery</th><td>USB-C, 4400 mAh</td></tr></table>")
    product = (f"<div class='product'><div class='gallery'><img src='/l.jpg' alt='lantern'></div>"
               f"<div class='info'><h1>Trail Lantern 300</h1><p class='price'>$49.00</p>"
               f"{paragraphs(description)}{specs}</div></div>")
    # A long FAQ full of commas: by the scorer's points it outweighs the description.
    faq = "<div class='faq-list'>" + "".join(
        f"<div class='faq-item'><h3>Question {n}?</h3><p>{a} Yes, no, maybe, often, rarely, "
        f"in rain, in snow, at night, and, of course, on long trips.</p></div>"
        for n, a in enumerate(sentences("lantern battery", 10))) + "</div>"
    reviews = "".join(f"<div class='review'><p>{r}</p></div>" for r in sentences("camp", 4))
    html = (f"<!doctype html><html><head><title>Trail Lantern 300 | Example Outdoors</title>"
            f"{ld}</head><body>{NAV}{product}<section class='faq'><h2>FAQ</h2>{faq}</section>"
            f"<section class='reviews'><h2>Reviews</h2>{reviews}</section>{FOOTER}</body></html>")
    doc = HTML_HANDLER.handle(html.encode(), HandlerContext(url="https://example.test/p",
                                                            format="text"))
    assert doc.metadata["page_type"] == "product" and doc.title == "Trail Lantern 300"
    assert "$49.00" in doc.content and all(p in doc.content for p in description)
    assert "Weight | 210 g" in doc.content
    assert "Question 1?" not in doc.content and "About us" not in doc.content


def test_a_main_landmark_hiding_its_content_until_a_script_runs_keeps_it():
    # The shop's whole product sits in a wrapper a script shows; the page around it (menus,
    # promotions, footer) is visible and long, so the page as a whole does not "show little".
    story = sentences("roast coffee", 6)
    menus = "".join(f"<li><a href='/c/{n}'>Collection number {n} of the shop</a></li>"
                    for n in range(40))
    body = (f"<header><ul>{menus}</ul></header><main><div class='lock-notice'>Access denied"
            f"</div><div class='lock-content' style='display:none'><h1>Dark Roast</h1>"
            f"{paragraphs(story)}</div></main>{FOOTER}")
    text = extract(body)
    assert all(s in text for s in story)
    # A main that shows its content still drops what it hides (a size chart, a popup).
    shown = (f"<main><h1>Dark Roast</h1>{paragraphs(story)}<div style='display:none'>"
             f"<p>Size chart: small, medium, large, and extra large cups.</p></div></main>")
    assert "Size chart" not in extract(shown)


def test_a_product_panel_rendered_twice_appears_once_and_an_article_keeps_its_repeats():
    ld = '<script type="application/ld+json">{"@type": "Product", "name": "Speckle Mug"}</script>'
    description = sentences("stoneware mug", 3)
    panel = f"<div class='description'>{paragraphs(description)}</div>"
    body = (f"<div class='product'><h1>Speckle Mug</h1><p class='price'>$60.00</p>"
            f"<div class='desktop'>{panel}</div><div class='mobile'>{panel}</div></div>")
    text = extract(body, head=f"<title>Speckle Mug</title>{ld}")
    assert all(text.count(d) == 1 for d in description) and "$60.00" in text
    # An interview asks each guest the same question: an article's repeats are its own.
    question = "What did you cook first, and who taught you to cook it at home?"
    interview = "".join(f"<p>{question}</p><p>{answer}</p>"
                        for answer in sentences("kitchen", 3))
    assert extract(f"<article>{interview}</article>").count(question) == 3
