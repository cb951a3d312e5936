"""Bytes to text: header charset → BOM → ``<meta charset>`` / http-equiv → detection → UTF-8.

The result never holds NULs or other C0/C1 control characters except tab and newline.
"""

from __future__ import annotations

import codecs
import re

from charset_normalizer import from_bytes

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it shares the first two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]{1,40})""", re.IGNORECASE
)
_LABELS = {"windows-874": "cp874", "x-sjis": "cp932", "x-gbk": "gb18030",
           "x-mac-roman": "mac_roman", "x-euc-jp": "euc_jp"}  # WHATWG labels Python lacks
_SUPERSETS = {
    "latin-1": "cp1252", "iso8859-1": "cp1252", "ascii": "cp1252",
    "iso8859-9": "cp1254", "tis-620": "cp874", "iso8859-11": "cp874",
    "gb2312": "gb18030", "gbk": "gb18030", "euc_kr": "cp949", "shift_jis": "cp932",
    "big5": "big5hkscs",
}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")
_C0_AND_DEL = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_DETECT_BYTES = 64 * 1024


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    label = name.strip().strip("\"'").lower()
    try:
        codec = codecs.lookup(_LABELS.get(label, label)).name
    except LookupError:
        return None
    # Browsers decode some declared legacy charsets as their superset (WHATWG encoding spec):
    # pages labelled Latin-1 or GB2312 routinely hold windows-1252 or GBK characters.
    return _SUPERSETS.get(codec, codec)


def _utf8_has_controls(raw: bytes) -> bool:
    """Whether UTF-8 bytes hold a character :data:`_CONTROL` drops: C0 and DEL are single
    bytes, C1 is ``\xc2\x80``-``\xc2\x9f``. Runs at C speed (translate, and a regex that
    starts with a literal byte, so it scans like ``find``), which the regex scan over a whole
    page does not (it took a large share of the HTML handler's time: benchmarks/README.md,
    figures behind the code)."""
    return len(raw.translate(None, _C0_AND_DEL)) != len(raw) or _C1_UTF8.search(raw) is not None


def _normalise_lines(text: str) -> str:
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def clean_text(text: str) -> str:
    """Drop control characters (keeping tab/newline) and normalise line ends."""
    text = _normalise_lines(text)
    if text.isascii() and not _utf8_has_controls(text.encode("ascii")):
        return text  # the common case, proved without the regex scan
    return _CONTROL.sub("", text)


def sniff_encoding(body: bytes, header_charset: str | None = None, *, html: bool = False) -> str:
    """The codec to decode ``body`` with, by the order in the module docstring."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            # A BOM outranks the header only when they disagree about the UTF family.
            return name if name.startswith("utf-16") or name.startswith("utf-32") else "utf-8"
    declared = _codec(header_charset)
    if declared:
        return declared
    if html:
        match = _META_CHARSET.search(body[:4096])
        if match:
            meta = _codec(match.group(1).decode("ascii", "ignore"))
            if meta and not meta.startswith("utf-16"):  # a byte-oriented page can't be UTF-16
                return meta
    try:
        body[:_DETECT_BYTES].decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        if exc.start >= _DETECT_BYTES - 4:  # cut inside a multi-byte sequence at the edge
            return "utf-8"
    best = from_bytes(body[:_DETECT_BYTES]).best()
    return best.encoding if best is not None else "utf-8"


def decode_body(body: bytes, header_charset: str | None = None, *, html: bool = False) -> str:
    """Decode with the sniffed codec, replacing what does not decode, then clean."""
    return _decode(body, header_charset, html)[0]


def decode_html(body: bytes, header_charset: str | None = None) -> tuple[str, bytes]:
    """:func:`decode_body` of an HTML page, and the same text as UTF-8 bytes for the parser:
    the body itself (without its BOM) when it is that already, so it is not encoded again."""
    text, as_is = _decode(body, header_charset, True)
    if as_is:
        return text, body.removeprefix(codecs.BOM_UTF8)
    return text, text.encode("utf-8", "replace")


def _decode(body: bytes, header_charset: str | None, html: bool) -> tuple[str, bool]:
    """The clean text, and whether it is exactly the body (without a BOM) read as UTF-8."""
    encoding = sniff_encoding(body, header_charset, html=html)
    text = body.decode(encoding, errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if encoding == "utf-8" and not _utf8_has_controls(body):
        # Decoding UTF-8 (even with replacement) yields a control character only from its
        # own bytes, and there are none: the text is clean already.
        if "\r" in text:
            return _normalise_lines(text), False
        return text, "\ufffd" not in text  # nothing replaced: the bytes are valid UTF-8
    return clean_text(text), False
