"""Sniffing: which handler the registry picks from the label and the first bytes."""

from __future__ import annotations

import codecs
import gzip
import io
import zipfile
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers import BUILTIN_HANDLERS, builtin_handlers
from handlers.pdf import PDF_HANDLER
from handlers.registry import HandlerContext, HandlerRegistry
from handlers.sniff import classify
from handlers.xml import XML_HANDLER
from pipeline.core.errors import PipelineError
from pipeline.core.models import Document


@dataclass(frozen=True)
class Stub:
    """Stands in for the HTML/JSON/text handlers built on other branches. Its sniff is as
    lenient as can be, to prove built-in sniffs cannot pull binary bytes into text."""

    name: str
    media_types: tuple[str, ...]

    def sniff(self, head: bytes) -> bool:
        return True

    def handle(self, body: bytes, ctx: HandlerContext) -> Document:
        return Document(content=self.name)


TEXT_HANDLERS = {"html", "json", "xml", "text"}


def registry() -> HandlerRegistry:
    return HandlerRegistry([
        Stub("html", ("text/html", "application/xhtml+xml")),
        Stub("json", ("application/json", "*/*+json")),
        PDF_HANDLER,
        XML_HANDLER,
        Stub("text", ("text/*",)),
    ])


def chosen(label: str | None, body: bytes) -> str:
    try:
        return registry().select(label, body).name
    except PipelineError as exc:
        assert exc.kind == "unsupported_type"
        return "unsupported: " + exc.message


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01"
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8
PE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00"
WASM = b"\x00asm\x01\x00\x00\x00"
HTML = b"<!DOCTYPE html><html><head><title>t</title></head><body><p>hi</p></body></html>"
BARE_HTML = b"<div class='post'><p>A page with no doctype.</p></div>"
RSS = b'<?xml version="1.0"?><rss version="2.0"><channel><title>F</title></channel></rss>'
XML = b'<?xml version="1.0" encoding="utf-8"?><catalog><book>B</book></catalog>'
JSON = b'{"name": "value", "list": [1, 2]}'
TEXT = b"Just some plain words.\nAnd another line.\n"


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.txt", "hello")
    return buffer.getvalue()


# The sniffing table (copied into the report): label, first bytes ⇒ handler or refusal.
TABLE = [
    # generic or missing labels: the bytes decide
    ("application/octet-stream", HTML, "html"),
    (None, BARE_HTML, "html"),
    ("", PDF, "pdf"),
    ("application/octet-stream", RSS, "xml"),
    ("application/octet-stream", XML, "xml"),
    (None, b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url/></urlset>', "xml"),
    (None, b'<svg xmlns="http://www.w3.org/2000/svg"><title>t</title></svg>', "xml"),
    (None, b"<catalog><book>no namespace, no declaration</book></catalog>", "text"),
    (None, b'<div xmlns="http://www.w3.org/1999/xhtml"><p>x</p></div>', "html"),
    (None, JSON, "json"),
    ("application/octet-stream", TEXT, "text"),
    (None, codecs.BOM_UTF16_LE + "<html><p>wide</p></html>".encode("utf-16-le"), "html"),
    (None, b"\xef\xbb\xbf<!doctype html><p>bom</p>", "html"),
    # a magic signature outranks any label
    ("text/html", PDF, "pdf"),
    ("text/plain", PDF, "pdf"),
    ("text/html", PNG, "unsupported: PNG image"),
    ("application/json", JPEG, "unsupported: JPEG image"),
    ("text/plain", gzip.compress(b"hello"), "unsupported: gzip"),
    ("application/octet-stream", _zip(), "unsupported: ZIP archive"),
    (None, ELF, "unsupported: ELF executable"),
    ("text/html", PE, "unsupported: Windows executable"),
    ("application/xml", WASM, "unsupported: WebAssembly"),
    # a specific label wins over weak signals
    ("text/html", BARE_HTML, "html"),
    ("text/html", b"Hello, no tags at all", "html"),
    ("application/json", b"not json, but labelled so", "json"),
    ("text/plain", HTML, "text"),
    ("text/xml", RSS, "xml"),
    ("application/atom+xml", b"<feed xmlns='http://www.w3.org/2005/Atom'/>", "xml"),
    # binary bytes under a text label are refused, never decoded as text
    ("text/html", b"\x00\x01\x02\x03binary\x00junk", "unsupported: binary content served as"),
    ("text/plain", bytes(range(256)), "unsupported: binary content"),
    # a non-text label contradicted by markup: the markup wins (an HTML error page)
    ("application/pdf", HTML, "html"),
    ("application/pdf", b"\x00\x01garbage", "pdf"),  # the PDF handler reports it corrupt
    # an unclaimed label: the bytes decide
    ("application/x-php", HTML, "html"),
    ("image/png", b"<html><body>404 not found</body></html>", "html"),
    ("application/x-unknown-thing", b"\x00\x00\x00binary", "unsupported: binary content"),
]


@pytest.mark.parametrize(("label", "body", "expected"), TABLE)
def test_sniffing_table(label: str | None, body: bytes, expected: str) -> None:
    got = chosen(label, body)
    if expected.startswith("unsupported: "):
        assert got.startswith("unsupported: ")
        assert expected.removeprefix("unsupported: ") in got
    else:
        assert got == expected


def test_refusal_names_the_detected_kind_and_the_label() -> None:
    with pytest.raises(PipelineError) as info:
        registry().select("Text/HTML; charset=utf-8", PNG)
    assert info.value.kind == "unsupported_type"
    assert "PNG image" in info.value.message and "text/html" in info.value.message


def test_a_page_that_mentions_the_pdf_magic_stays_text() -> None:
    assert classify(b"The header line is %PDF-1.7 in every file.").kind == "text"
    assert classify(b"\x00\x01\x02junk before %PDF-1.4\n").kind == "pdf"


def test_utf16_text_with_a_bom_is_text_not_binary() -> None:
    body = codecs.BOM_UTF16_BE + "plain words".encode("utf-16-be")
    assert classify(body).kind == "text"


BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE)
TEXT_LABELS = st.sampled_from([None, "", "application/octet-stream", "text/html",
                               "text/plain", "application/json", "application/xml",
                               "text/xml", "application/rss+xml", "application/x-foo"])


UNLABELLED = st.sampled_from([None, "", "application/octet-stream", "application/x-foo"])


@settings(max_examples=300, deadline=None)
@given(label=UNLABELLED, data=st.binary(max_size=2048))
def test_unlabelled_bytes_with_nul_never_reach_a_text_handler(label: str | None,
                                                              data: bytes) -> None:
    body = data + b"\x00" if b"\x00" not in data[:1024] else data
    if body.startswith(BOMS):
        body = b"\x01" + body
    got = chosen(label, body)
    assert got not in TEXT_HANDLERS


@settings(max_examples=300, deadline=None)
@given(label=TEXT_LABELS, data=st.binary(min_size=1, max_size=1024))
def test_nul_heavy_bytes_never_reach_a_text_handler(label: str | None, data: bytes) -> None:
    body = (b"\x00" * 40 + data)[:1024]  # well past a stray NUL or two
    if body.startswith(BOMS):
        body = b"\x01" + body
    assert chosen(label, body) not in TEXT_HANDLERS


def test_a_stray_nul_in_a_labelled_page_is_read_not_refused() -> None:
    page = b"<!doctype html><html><body><p>Hello\x00 world</p>" + b"<p>text</p>" * 50
    assert chosen("text/html", page) == "html"
    assert chosen(None, page).startswith("unsupp")  # unlabelled: strict, as browsers sniff


@settings(max_examples=300, deadline=None)
@given(label=TEXT_LABELS, data=st.binary(min_size=64, max_size=1024))
def test_random_bytes_never_reach_a_text_handler(label: str | None, data: bytes) -> None:
    # Random bytes are full of control bytes; those that happen not to be are short-lived
    # in hypothesis' search, so require at least a few, as any real binary has.
    controls = sum(1 for b in data if b < 9 or 13 < b < 27)
    if controls <= max(4, len(data) * 0.03) or data.startswith(BOMS):
        return
    assert chosen(label, data) not in TEXT_HANDLERS


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=400))
def test_any_clean_text_under_a_generic_label_is_handled(text: str) -> None:
    assert not chosen("application/octet-stream", text.encode("utf-8")).startswith("unsupp")
    assert classify(text.encode("utf-8")).strength != "binary"


@pytest.mark.parametrize(
    ("media_type", "rejected"),
    [
        ("image/png", True),
        ("video/mp4", True),
        ("audio/mpeg", True),
        ("font/woff2", True),
        ("application/zip", True),
        ("application/gzip", True),
        ("application/x-7z-compressed", True),
        ("application/x-msdownload", True),
        ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", True),
        ("application/msword", True),
        ("IMAGE/JPEG; charset=binary", True),
        ("application/octet-stream", False),
        ("", False),
        (None, False),
        ("text/html", False),
        ("application/pdf", False),
        ("image/svg+xml", False),  # claimed by the XML handler through */*+xml
        ("application/x-whatever", False),
    ],
)
def test_rejects_early(media_type: str | None, rejected: bool) -> None:
    assert registry().rejects_early(media_type) is rejected


def test_a_plugin_claiming_an_image_type_is_not_rejected_early() -> None:
    reg = registry()
    reg.register(Stub("png-ocr", ("image/png",)))
    assert not reg.rejects_early("image/png")
    assert reg.select("text/html", PNG).name == "png-ocr"


def test_builtins_are_registered_in_order() -> None:
    names = [handler.name for handler in builtin_handlers()]
    assert names.index("pdf") < names.index("xml")
    assert "handlers.pdf:PDF_HANDLER" in BUILTIN_HANDLERS
