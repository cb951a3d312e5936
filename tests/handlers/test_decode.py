import codecs

from handlers.decode import decode_body, sniff_encoding


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
