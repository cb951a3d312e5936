"""Page shapes from outside the news-article development set: manuals, FAQs, galleries."""

from handlers.html import HTML_HANDLER
from handlers.registry import HandlerContext


def run(body: str, fmt: str = "text"):
    html = f"<!doctype html><html><head><title>Manual</title></head><body>{body}</body></html>"
    return HTML_HANDLER.handle(html.encode(), HandlerContext(url="https://example.org/m.html",
                                                             format=fmt))


def sentence(topic: str) -> str:
    return (f"The {topic} section explains, in plain words, what the tool does, why it does it, "
            "and which choices the reader has when it runs. ")


def test_manual_with_an_option_list_keeps_every_section():
    # Each option's description is a <dd> made of <p>s: counted once, the option list must
    # not outscore the chapter that holds it and the prose sections around it.
    options = "".join(f"<dt>--opt-{i}</dt><dd><p>{sentence(f'option {i}')}</p>"
                      f"<p>{sentence(f'default {i}')}</p></dd>" for i in range(8))
    sections = "".join(f"<div class='sect'><h2>Part {i}</h2><p>{sentence(f'part {i}')}</p>"
                       f"<p>{sentence(f'detail {i}')}</p><p>{sentence(f'note {i}')}</p></div>"
                       for i in range(6))
    body = (f"<div class='chapter'>{sections}<div class='sect'><h2>Options</h2>"
            f"<div class='options'><dl>{options}</dl></div></div></div>")
    content = run(body).content
    for i in range(6):
        assert f"The part {i} section" in content
    assert "The option 7 section" in content


def test_faq_table_keeps_every_answer():
    # Answers of unequal length in unclassed cells of rows that share a class: one article.
    rows = []
    for i in range(5):
        answer = "".join(f"<p>{sentence(f'answer {i}.{j}')}</p>" for j in range(3 if i else 6))
        rows.append(f"<tr class='question'><td>Q{i}. Why does it fail?</td></tr>"
                    f"<tr class='answer'><td>{answer}</td></tr>")
    content = run(f"<div class='qandaset'><table>{''.join(rows)}</table></div>").content
    for i in range(5):
        assert f"The answer {i}.0 section" in content


def test_slideshow_titles_repeated_per_slide_appear_once():
    slides = "".join("<div class='slide-title'>Storm threatens holiday plans</div>"
                     for _ in range(6))
    body = (f"<div class='story'><div class='gallery'>{slides}</div>"
            + "".join(f"<p>{sentence(f'story {i}')}</p>" for i in range(4)) + "</div>")
    content = run(body, fmt="markdown").content
    assert content.count("Storm threatens holiday plans") == 1
    assert "The story 3 section" in content


def test_markdown_emphasis_is_clean_in_headings_and_split_runs():
    body = ("<article><h2><b>Five tips for game d</b><b>ay parties</b></h2>"
            + "".join(f"<p>{sentence(f'tip {i}')}</p>" for i in range(3))
            + "<p>Stay <b>on tr</b><b>ack</b> and <i>enjoy</i> it, with friends and family, "
              "whatever the score is at the end of the game.</p></article>")
    content = run(body, fmt="markdown").content
    assert "## Five tips for game day parties" in content
    assert "**on track**" in content and "****" not in content


def test_heading_permalink_anchors_are_left_out():
    body = ("<main><h2 id='usage'>Usage<a class='headerlink' href='#usage'>¶</a></h2>"
            "<h3><a href='#ex' class='doc-anchor'>§</a>Examples</h3>"
            + "<p>See <a href='#ex'>the examples</a> below, which run as they are.</p>"
            + "".join(f"<p>{sentence(f'usage {i}')}</p>" for i in range(3)) + "</main>")
    content = run(body, fmt="markdown").content
    assert "## Usage\n" in content and "### Examples\n" in content
    assert "the examples" in content


def test_highlighted_code_keeps_its_comments_and_meta_lines():
    # Highlighters name their spans after the syntax: "comment", "hljs-meta", "token tag".
    code = ("<pre class='language-c'><code><span class='hljs-meta'>#include &lt;stdio.h&gt;"
            "</span>\n<span class='comment'>// print a greeting</span>\nint main(void) "
            "{ <span class='token tag'>puts</span>(\"hi\"); }\n"
            "<span class='doccomment'>/// shared with the caller</span></code></pre>")
    body = ("<article>" + "".join(f"<p>{sentence(f'code {i}')}</p>" for i in range(3))
            + code + "<pre>join(parts)</pre></article>")
    content = run(body, fmt="markdown").content
    for kept in ("#include <stdio.h>", "// print a greeting", "puts(", "/// shared with",
                 "join(parts)"):
        assert kept in content


def test_bare_language_class_names_the_code_fence():
    body = ("<article>" + "".join(f"<p>{sentence(f'fence {i}')}</p>" for i in range(3))
            + "<pre class='rust rust-example-rendered'><code>let x = 1;</code></pre>"
              "<pre class='example wide'><code>plain text</code></pre></article>")
    content = run(body, fmt="markdown").content
    assert "```rust\nlet x = 1;\n```" in content
    assert "```\nplain text\n```" in content


def test_lede_paragraph_named_lead_is_kept():
    # "lead-paragraph" holds "ad-", a common ad-slot marker: the lede must not go with it.
    body = ("<div class='story'><p class='lead-paragraph'>The council voted on Monday night "
            "to close the old bridge for good, ending a decade of repairs.</p>"
            + "".join(f"<p>{sentence(f'vote {i}')}</p>" for i in range(4))
            + "<div class='ad-slot'>Advertisement: buy now</div></div>")
    content = run(body).content
    assert "The council voted on Monday night" in content
    assert "buy now" not in content
