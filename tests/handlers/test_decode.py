import codecs

from hypothesis import given
from hypothesis import strategies as st

from handlers.decode import decode_body, decode_html, sniff_encoding


def test_header_charset_wins_over_meta():
    body = '<meta charset="utf-8"><p>café</p>'.encode("cp1252")
    assert "café" in decode_body(body, "windows-1252", html=True)


def test_bom_and_utf16():
    body = codecs.BOM_UTF16_LE + "<p>héllo</p>".encode("utf-16-le")
    assert decode_body(body, None, html=True) == "<p>héllo</p>"


def test_meta_charset_used_without_header():
    body = b'<html><head><meta charset="koi8-r"></head><body>' + "привет".encode("koi8-r")
    assert "привет" in decode_body(body, None, html=True)


def test_detection_falls_back_for_legacy_bytes():
    text = "Ceci est un texte français assez long pour être détecté correctement. " * 20
    assert sniff_encoding(text.encode("cp1252")) != "utf-8"
    assert "français" in decode_body(text.encode("cp1252"))


def test_control_characters_never_survive():
    assert decode_body(b"a\x00b\x07c\r\nd\te") == "abc\nd\te"


_PIECES = st.sampled_from([
    b"<p>caf\xc3\xa9</p>", b"\r\n", b"\r", b"\n", b"\xef\xbb\xbf", b"\xff", b"\xc3",
    b"\x00", b"\x07", b"\xc2\x85", b"\xed\xa0\x80", b"\xef\xbf\xbd", b"\xe6\x97\xa5",
    b"<meta charset='windows-1252'>", b"<meta charset='utf-8'>", b"plain text ",
])


@given(st.lists(_PIECES, max_size=12).map(b"".join),
       st.sampled_from([None, "utf-8", "windows-1252"]))
def test_decode_html_gives_the_parser_the_text_as_utf8(body, charset):
    text, source = decode_html(body, charset)
    assert text == decode_body(body, charset, html=True)
    assert source.decode("utf-8") == text


def test_decode_html_passes_a_clean_utf8_body_without_its_bom():
    body = "<p>café 日本</p>".encode()
    assert decode_html(body) == ("<p>café 日本</p>", body)
    assert decode_html(codecs.BOM_UTF8 + body) == ("<p>café 日本</p>", body)
    # What the text changes is re-encoded: line ends, replaced bytes, control characters.
    assert decode_html(b"a\r\nb\xffc\x00") == ("a\nb\ufffdc", "a\nb\ufffdc".encode())
