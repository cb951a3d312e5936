"""The markdown keeps the structure a page states: each test is one mechanism, on a
hand-written page, judged by a CommonMark + GFM-tables parser where the structure matters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from handlers.html import HTML_HANDLER
from handlers.html_dom import parse
from handlers.html_render import render
from handlers.registry import HandlerContext
from pipeline.core.truncate import truncate
from tests.core.test_truncate import assert_valid_cut

PARA = ("This paragraph is the body of the article, long enough to be scored as real content, "
        "with commas, clauses, and a few more words to make it count. ")


def extract(inner: str, fmt: str = "markdown") -> str:
    """The handler's content for an article holding ``inner`` between two paragraphs."""
    html = ("<!doctype html><html><head><title>Notes from the field</title></head><body>"
            "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
            f"<article><p>{PARA}</p>{inner}<p>{PARA}</p></article>"
            "<footer>Copyright Example.</footer></body></html>")
    context = HandlerContext(url="https://example.org/notes/", format=fmt)
    return HTML_HANDLER.handle(html.encode(), context).content


def tokens(markdown: str) -> list:
    return MarkdownIt("commonmark").enable("table").parse(markdown)


def _inline_text(token) -> str:
    return "".join(c.content for c in token.children or [] if c.type in ("text", "code_inline"))


def headings(markdown: str) -> list[str]:
    found = tokens(markdown)
    return [_inline_text(found[i + 1]) for i, t in enumerate(found) if t.type == "heading_open"]


def list_items(markdown: str) -> list[str]:
    """The first paragraph of each list item."""
    found = tokens(markdown)
    return [_inline_text(found[i + 2]) for i, t in enumerate(found)
            if t.type == "list_item_open" and found[i + 1].type == "paragraph_open"]


def table_rows(markdown: str) -> list[list[str]]:
    rows: list[list[str]] = []
    for token in tokens(markdown):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows and token.level == 4:
            rows[-1].append(_inline_text(token))
    return rows


def code_blocks(markdown: str) -> list[str]:
    return [t.content for t in tokens(markdown) if t.type in ("fence", "code_block")]


# --------------------------------------------------------------------------- tables
@pytest.mark.parametrize("cell", [
    "<div class='cell'><a href='/people/{0}'>{1}</a></div>",
    "<p><a href='/people/{0}'>{1}</a></p>",
    "<a class='author-link' href='/people/{0}'>{1}</a>",
])
def test_a_data_table_cell_that_is_a_link_keeps_its_link(cell):
    people = [("okafor", "Ngozi Okafor", "Timetable"), ("lund", "Erik Lund", "Works notice")]
    rows = "".join(f"<tr><td>{cell.format(slug, name)}</td><td>{doc}</td></tr>"
                   for slug, name, doc in people)
    markdown = extract(f"<table><tr><th>Author</th><th>Document</th></tr>{rows}</table>")
    assert table_rows(markdown) == [["Author", "Document"], ["Ngozi Okafor", "Timetable"],
                                    ["Erik Lund", "Works notice"]]
    assert "[Erik Lund](https://example.org/people/lund)" in markdown


def test_a_table_of_links_closing_the_article_is_not_cut_as_a_link_list():
    rows = "".join(f"<tr><td><p><a href='/d/{n}'>Document {n}</a></p></td>"
                   f"<td><p><a href='/p/{n}'>Person {n}</a></p></td></tr>" for n in range(3))
    html = ("<!doctype html><html><head><title>Sources</title></head><body><article>"
            f"<p>{PARA}</p><p>{PARA}</p><table><thead><tr><th>Document</th><th>Author</th>"
            f"</tr></thead>{rows}</table></article></body></html>")
    content = HTML_HANDLER.handle(html.encode(), HandlerContext(
        url="https://example.org/", format="markdown")).content
    assert table_rows(content)[-1] == ["Document 2", "Person 2"]


def test_row_and_column_spans_keep_every_cell_in_its_column():
    table = ("<table><tr><th rowspan='2'>Ticket</th><th colspan='2'>Adult</th></tr>"
             "<tr><th>Peak</th><th>Off-peak</th></tr>"
             "<tr><td>Single</td><td>4.20</td><td>3.10</td></tr>"
             "<tr><td rowspan='2'>Rover</td><td colspan='2'>12.00 a day</td></tr>"
             "<tr><td>30.00</td><td>15.00</td></tr></table>")
    assert table_rows(extract(table)) == [
        ["Ticket", "Adult", ""], ["", "Peak", "Off-peak"], ["Single", "4.20", "3.10"],
        ["Rover", "12.00 a day", ""], ["", "30.00", "15.00"]]
    # plain text: still one line per row, the empty slots left out
    assert "Rover | 12.00 a day\n30.00 | 15.00" in extract(table, "text")


def test_spans_cannot_blow_up_the_grid():
    cells = "<td rowspan='100' colspan='100'>x</td>" * 200
    rows = "<tr><td>a</td><td>b</td></tr>" * 99
    content = render(parse(f"<table><tr>{cells}</tr>{rows}</table>").find("body"),
                     markdown=True)
    assert len(content) < 400_000  # the span budget bounds the grid, not 200 × 10,000 slots


def test_lists_in_table_cells_stay_lists():
    table = ("<table><tr><th>Heat pump</th><th>Gas boiler</th></tr><tr>"
             "<td><ul><li>Lower running costs</li><li>No gas supply needed</li></ul></td>"
             "<td><ul><li>Cheaper to install</li><li>Fits in a cupboard</li></ul></td>"
             "</tr></table>")
    markdown = extract(table)
    assert list_items(markdown) == ["Lower running costs", "No gas supply needed",
                                    "Cheaper to install", "Fits in a cupboard"]
    assert "Heat pump" in markdown and "|" not in markdown


def test_code_beside_a_line_number_gutter_is_one_code_block():
    gutter = "<pre>1\n2\n3</pre>"
    code = "<pre><code class='language-c'>int a = 1;\nint b = 2;\nreturn a + b;</code></pre>"
    markdown = extract(f"<table class='lntable'><tr><td>{gutter}</td><td>{code}</td></tr>"
                       "</table>")
    assert code_blocks(markdown) == ["int a = 1;\nint b = 2;\nreturn a + b;\n"]


# --------------------------------------------------------------------------- code
@pytest.mark.parametrize("block", [
    "<pre>int a = 1;<br>int b = 2;<br/>return a + b;</pre>",
    "<pre><code>int a = 1;<br>int b = 2;<br>return a + b;</code></pre>",
    "<pre><code><div class='line'>int a = 1;</div><div class='line'>int b = 2;</div>"
    "<div class='line'>return a + b;</div></code></pre>",
    "<pre><code><span class='line'>int a = 1;</span>\n<span class='line'>int b = 2;</span>\n"
    "<span class='line'>return a + b;</span></code></pre>",
])
def test_a_code_block_keeps_its_line_breaks(block):
    assert code_blocks(extract(block)) == ["int a = 1;\nint b = 2;\nreturn a + b;\n"]
    assert "int a = 1;\nint b = 2;\nreturn a + b;" in extract(block, "text")


def test_line_breaks_made_by_blocks_inside_code_are_not_doubled():
    block = "<pre><div>one</div>\n<div>two</div>\n\n<div>four</div></pre>"
    assert code_blocks(extract(block)) == ["one\ntwo\n\nfour\n"]


def test_a_fence_is_longer_than_the_backticks_inside_the_code():
    source = "Before.\n\n```python\nprint('hi')\n```\n\nAfter."
    markdown = extract(f"<pre><code class='language-markdown'>{source}</code></pre>")
    assert code_blocks(markdown) == [source + "\n"]
    assert "````markdown\n" in markdown


def test_inline_code_holding_backticks_is_one_code_span():
    markdown = extract("<p>Run <code>echo `date`</code> to see the time in the shell.</p>")
    spans = [c.content for t in tokens(markdown) if t.type == "inline"
             for c in t.children or [] if c.type == "code_inline"]
    assert spans == ["echo `date`"]


# --------------------------------------------------------------------------- headings
@pytest.mark.parametrize("heading", [
    "<h2>Results<br>and what they mean</h2>",
    "<h2>Results <div class='anchor-parent'><div class='anchor'></div></div>and what they "
    "mean</h2>",
])
def test_a_heading_broken_inside_stays_one_heading(heading):
    markdown = extract(f"{heading}<p>{PARA}</p>")
    assert headings(markdown) == ["Results and what they mean"]


def test_a_section_heading_in_the_sections_header_is_kept():
    section = ("<section class='article-section'><header><h2>How we counted</h2></header>"
               f"<div class='article-body'><p>{PARA}</p></div></section>")
    assert headings(extract(section + section.replace("How we counted", "What comes next"))) == [
        "How we counted", "What comes next"]


def test_the_page_header_is_still_boilerplate():
    html = ("<!doctype html><html><head><title>Notes</title></head><body>"
            "<header><a href='/'>Example Site</a> <a href='/shop'>Shop</a></header>"
            f"<article><p>{PARA}</p><p>{PARA}</p></article></body></html>")
    content = HTML_HANDLER.handle(html.encode(), HandlerContext(
        url="https://example.org/", format="markdown")).content
    assert "Example Site" not in content


def test_a_card_whose_link_holds_its_heading_links_the_heading():
    card = ("<a href='/story/brain-implant'><h3>Five years with a brain implant</h3>"
            "<p>No one has had the device longer.</p></a>")
    markdown = extract(card)
    assert "### [Five years with a brain implant](https://example.org/story/brain-implant)" in (
        markdown)
    assert headings(markdown) == ["Five years with a brain implant"]


# --------------------------------------------------------------------------- lists
@pytest.mark.parametrize("wrapper", ["em", "strong", "span style='font-size: 16px'"])
def test_a_list_inside_inline_markup_stays_a_list(wrapper):
    tag = wrapper.split()[0]
    markdown = extract(f"<div><{wrapper}><ul><li>A notebook in the shed.</li>"
                       f"<li>A photograph each month.</li></ul></{tag}></div>")
    assert list_items(markdown) == ["A notebook in the shed.", "A photograph each month."]


def test_list_items_with_inline_styles_are_list_items():
    items = "".join(f"<li style='font-weight: 400;' aria-level='1'><span style='font-weight: "
                    f"400;'>Step {n} of the plan.</span></li>" for n in range(1, 4))
    assert list_items(extract(f"<ul>{items}</ul>")) == [f"Step {n} of the plan."
                                                       for n in range(1, 4)]


def test_an_ordered_list_keeps_its_numbers():
    markdown = extract("<ol start='4'><li>Four</li><li>Five</li><li value='9'>Nine</li></ol>")
    assert "4. Four\n5. Five\n9. Nine" in markdown


def test_a_rule_inside_a_list_item_does_not_make_its_text_a_heading():
    markdown = extract("<ol><li><p>This book comes first; it teaches the basics well.</p><hr>"
                       "</li><li><p>The second book follows on.</p></li></ol>")
    assert headings(markdown) == []
    assert list_items(markdown) == ["This book comes first; it teaches the basics well.",
                                    "The second book follows on."]


# --------------------------------------------------------------------------- escaping
@pytest.mark.parametrize("text", [
    "1984. That year the line was extended.", "# of riders rose by a third.",
    "- Sent from the platform.", "+ 5 more stations.", "> a quotation mark, shown.",
    "<div> is the tag the page used.", "---", "~~~ marks a break.",
])
def test_a_paragraph_starting_like_another_block_stays_a_paragraph(text):
    escaped = text.replace("<", "&lt;").replace(">", "&gt;")
    markdown = extract(f"<p>{escaped}</p>")
    kinds = {t.type for t in tokens(markdown)}
    assert kinds <= {"paragraph_open", "paragraph_close", "inline"}, markdown
    assert text in [_inline_text(t) for t in tokens(markdown) if t.type == "inline"]


_TEXT = st.text(alphabet="ab 1.#-+*>|~`_[]<\\!()=", min_size=1, max_size=30)


@settings(deadline=None, max_examples=200)
@given(st.lists(_TEXT, min_size=1, max_size=4, unique_by=lambda t: " ".join(t.split())))
def test_paragraph_text_reads_back_as_the_same_paragraphs(texts):
    # (distinct texts: a short block repeating the one before is dropped on purpose)
    html = "".join(f"<p>{t.replace('&', '&amp;').replace('<', '&lt;')}</p>" for t in texts)
    markdown = render(parse(f"<body>{html}</body>"), markdown=True)
    found = tokens(markdown)
    assert {t.type for t in found} <= {"paragraph_open", "paragraph_close", "inline"}, markdown
    shown = [" ".join(t.split()) for t in texts if t.strip()]
    read = [" ".join(_inline_text(t).split()) for t in found if t.type == "inline"]
    assert "".join(read).replace(" ", "") == "".join(shown).replace(" ", "")


def test_a_link_whose_address_has_spaces_stays_a_link():
    markdown = extract("<p>See <a href='/files/annual report (2024).pdf'>the report</a>.</p>")
    links = [c.attrs["href"] for t in tokens(markdown) if t.type == "inline"
             for c in t.children or [] if c.type == "link_open"]
    assert links == ["https://example.org/files/annual%20report%20%282024%29.pdf"]


# --------------------------------------------------------------------------- truncation
_WORDS = st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1, max_size=6).map(
    " ".join)
_CODE_LINE = st.one_of(st.from_regex(r"[a-z=(){}|;`\[\] ]{0,20}", fullmatch=True),
                       st.just("```"), st.just("| a | b |"))
_BLOCKS = st.one_of(
    _WORDS.map(lambda w: f"<p>{w}, <a href='/p/{w[:3]}'>{w}</a>.</p>"),
    st.lists(_CODE_LINE, min_size=1, max_size=5).map(lambda ls: f"<pre>{'<br>'.join(ls)}</pre>"),
    st.lists(_WORDS, min_size=2, max_size=4).map(
        lambda ws: "<table><tr><th rowspan='2'>n</th><th colspan='2'>w</th></tr>"
        + "".join(f"<tr><td><div><a href='/t'>{w}</a></div></td><td>{w} | x</td></tr>"
                  for w in ws) + "</table>"),
    st.lists(_WORDS, min_size=1, max_size=4).map(
        lambda ws: "<ul>" + "".join(f"<li>{w}<ol><li>{w}</li></ol></li>" for w in ws) + "</ul>"),
    _WORDS.map(lambda w: f"<h2>{w}<br>{w}</h2>"),
)


@settings(deadline=None, max_examples=150)
@given(_WORDS, st.lists(_BLOCKS, min_size=1, max_size=6), st.integers(min_value=20,
                                                                    max_value=400))
def test_rendered_structure_cut_anywhere_stays_valid_markdown(first, blocks, max_chars):
    html = f"<body><p>{first}.</p>{''.join(blocks)}</body>"
    markdown = render(parse(html), markdown=True, base_url="https://e.test/")
    result = truncate(markdown, max_chars, markdown=True)
    assert len(result.text) <= max_chars
    if result.truncated:
        assert_valid_cut(markdown, result.text)
