"""The XML handler: feeds as readable items, other XML as an outline, entities inert."""

from __future__ import annotations

import pickle
import socket
from pathlib import Path

import pytest

import handlers
from handlers.registry import HandlerContext, HandlerRegistry
from handlers.xml import XML_HANDLER
from pipeline.core.errors import PipelineError
from pipeline.core.models import Document

RSS = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel>
  <title>Example Blog</title>
  <link>https://blog.example.com/</link>
  <description>Notes &amp; essays</description>
  <language>en</language>
  <item>
    <title>First post</title>
    <link>https://blog.example.com/1</link>
    <pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
    <description>&lt;p&gt;Hello &lt;b&gt;world&lt;/b&gt;&lt;/p&gt;
      &lt;script&gt;track()&lt;/script&gt;&lt;p&gt;Second paragraph&lt;/p&gt;</description>
  </item>
  <item>
    <title>Second post</title>
    <link>https://blog.example.com/2</link>
    <content:encoded><![CDATA[<div>Only <i>full</i> content here</div>]]></content:encoded>
  </item>
</channel>
</rss>"""

ATOM = b"""<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="fr">
  <title>Atom Journal</title>
  <subtitle>Daily</subtitle>
  <link rel="self" href="https://a.example/feed.xml"/>
  <link href="https://a.example/"/>
  <entry>
    <title>Entry one</title>
    <link rel="alternate" href="https://a.example/1"/>
    <updated>2024-02-03T04:05:06Z</updated>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Body <b>one</b></p>
      <p>Body two</p></div></content>
  </entry>
</feed>"""

RDF = b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
  xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://r.example/"><title>RDF Site</title>
    <link>https://r.example/</link><description>Old school</description></channel>
  <item rdf:about="https://r.example/a"><title>Item A</title><link>https://r.example/a</link>
    <dc:date>2023-05-06</dc:date><description>Plain summary</description></item>
</rdf:RDF>"""

CATALOG = b"""<?xml version="1.0" encoding="iso-8859-1"?>
<catalog xmlns="urn:books">
  <title>Library</title>
  <book id="bk101" lang="en">
    <author>Gambard\xe9lla, Matthew</author>
    <title>XML Developer's Guide</title>
    <description>An <em>in-depth</em> look at XML.</description>
  </book>
</catalog>"""


def handle(body: bytes, fmt: str = "markdown", charset: str | None = None) -> Document:
    return XML_HANDLER.handle(body, HandlerContext(url="https://x.example/f", format=fmt,
                                                   charset=charset))


def test_rss_feed_as_markdown() -> None:
    document = handle(RSS)
    assert document.title == "Example Blog"
    assert document.content == (
        "# Example Blog\n\nNotes & essays\n\n"
        "## [First post](https://blog.example.com/1)\nMon, 01 Jan 2024 10:00:00 GMT\n\n"
        "Hello world\nSecond paragraph\n\n"
        "## [Second post](https://blog.example.com/2)\n\nOnly full content here"
    )
    assert document.metadata == {"feed": "rss", "items": 2, "description": "Notes & essays",
                                 "site_url": "https://blog.example.com/", "lang": "en"}


def test_rss_feed_as_text_has_no_markdown() -> None:
    content = handle(RSS, fmt="text").content
    assert content.startswith("Example Blog\n\nNotes & essays\n\nFirst post\n")
    assert "https://blog.example.com/1\nMon, 01 Jan 2024" in content
    assert "#" not in content and "](" not in content
    assert "track()" not in content


def test_atom_feed() -> None:
    document = handle(ATOM)
    assert document.title == "Atom Journal"
    assert "## [Entry one](https://a.example/1)\n2024-02-03T04:05:06Z" in document.content
    assert "Body one\nBody two" in document.content
    assert document.metadata["site_url"] == "https://a.example/"
    assert document.metadata["lang"] == "fr"
    assert document.metadata["feed"] == "atom"


def test_rss1_rdf_feed() -> None:
    document = handle(RDF, fmt="text")
    assert document.title == "RDF Site"
    assert "Item A\nhttps://r.example/a\n2023-05-06\n\nPlain summary" in document.content


def test_other_xml_is_an_indented_outline() -> None:
    document = handle(CATALOG, fmt="text")
    assert document.title == "Library"
    assert document.content == (
        "catalog\n"
        "  title: Library\n"
        "  book [id=bk101 lang=en]\n"
        "    author: Gambardélla, Matthew\n"
        "    title: XML Developer's Guide\n"
        "    description: An in-depth look at XML."
    )
    assert handle(CATALOG).content.startswith("```text\ncatalog\n")


def test_header_charset_rescues_undeclared_legacy_bytes() -> None:
    assert handle(b"<a><b>caf\xe9</b></a>", fmt="text", charset="latin-1").content == (
        "a\n  b: café")


def test_malformed_xml_is_recovered_or_refused() -> None:
    assert "b: text" in handle(b"<a><b>text</b><c>", fmt="text").content
    with pytest.raises(PipelineError) as info:
        handle(b"not xml at all")
    assert info.value.kind == "extract"


def test_xml_without_text_is_empty() -> None:
    with pytest.raises(PipelineError) as info:
        handle(b"<root><a/><b></b></root>")
    assert info.value.kind == "empty"


def test_external_entity_to_a_local_file_is_not_expanded(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    body = (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY xxe SYSTEM "{secret.as_uri()}">]>'
        "<r><a>before &xxe; after</a></r>"
    ).encode()
    content = handle(body, fmt="text").content
    assert "TOP-SECRET-VALUE" not in content
    assert content == "r\n  a: before after"


def test_parameter_entities_and_external_dtds_are_not_loaded(tmp_path: Path) -> None:
    dtd = tmp_path / "evil.dtd"
    dtd.write_text('<!ENTITY leak "LEAKED-FROM-DTD">')
    parameter = (f'<!DOCTYPE r [<!ENTITY % p SYSTEM "{dtd.as_uri()}"> %p;]>'
                 "<r>x &leak;</r>").encode()
    external = f'<!DOCTYPE r SYSTEM "{dtd.as_uri()}"><r>y &leak;</r>'.encode()
    for body in (parameter, external):
        assert "LEAKED" not in handle(body, fmt="text").content


def test_no_network_access_for_external_entities() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.setblocking(False)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/x"
        body = (f'<!DOCTYPE r SYSTEM "{url}" [<!ENTITY e SYSTEM "{url}">]>'
                "<r>z &e;</r>").encode()
        assert handle(body, fmt="text").content == "r: z"
        with pytest.raises(BlockingIOError):  # nobody ever connected
            listener.accept()


def _billion_laughs(levels: int = 10) -> bytes:
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, levels)
    ]
    return (f'<?xml version="1.0"?><!DOCTYPE lolz [{"".join(entities)}]>'
            f"<lolz><t>laughs</t><v>&lol{levels - 1};</v></lolz>").encode()


def test_billion_laughs_is_inert() -> None:
    document = handle(_billion_laughs(), fmt="text")
    # Expanded, the entity would be 3·10⁹ characters; unexpanded it is nothing at all.
    assert document.content == "lolz\n  t: laughs\n  v"


def test_quadratic_blowup_is_inert() -> None:
    big = "x" * 50_000
    body = (f'<!DOCTYPE r [<!ENTITY a "{big}">]><r><t>ok</t><v>{"&a;" * 2000}</v></r>').encode()
    assert len(handle(body, fmt="text").content) < 100


def test_handler_is_picklable_and_claims_xml_types() -> None:
    assert pickle.loads(pickle.dumps(XML_HANDLER)) == XML_HANDLER
    assert XML_HANDLER.sniff(b'<?xml version="1.0"?><x/>')
    assert XML_HANDLER.sniff(b"<rss version='2.0'><channel/></rss>")
    assert not XML_HANDLER.sniff(b"<!doctype html><html></html>")


class FakeHtml:
    name = "html"
    media_types = ("text/html",)

    def sniff(self, head: bytes) -> bool:
        return False

    def handle(self, body: bytes, ctx: HandlerContext) -> Document:
        return Document(content="handled as HTML", format=ctx.format)


def test_xhtml_goes_to_the_html_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    body = b'<html xmlns="http://www.w3.org/1999/xhtml"><body><p>x</p></body></html>'
    # Without an HTML handler the outline is the fallback; with one, it takes the page.
    monkeypatch.setattr(handlers, "default_registry", lambda: HandlerRegistry([XML_HANDLER]))
    assert handle(body, fmt="text").content.startswith("html\n  body")
    monkeypatch.setattr(handlers, "default_registry",
                        lambda: HandlerRegistry([FakeHtml(), XML_HANDLER]))
    assert handle(body).content == "handled as HTML"


def test_escaped_markup_in_titles_and_rdf_about_links() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom">
      <title type="html">A &lt;b&gt;bold&lt;/b&gt; feed</title>
      <updated>2024-05-01T00:00:00Z</updated><entry><title>E</title></entry></feed>"""
    document = handle(body)
    assert document.title == "A bold feed"
    assert document.metadata["published"] == "2024-05-01T00:00:00Z"
    rdf = RDF.replace(b"<link>https://r.example/a</link>", b"")
    assert "https://r.example/a" in handle(rdf, fmt="text").content


def test_inline_markup_keeps_words_whole_and_values_apart() -> None:
    body = b"<r><p>un<b>believ</b>able, <i>really</i></p><q><a>1</a><b>2</b></q></r>"
    assert handle(body, fmt="text").content == (
        "r\n  p: unbelievable, really\n  q\n    a: 1\n    b: 2")
