"""What the first bytes of a body say it is.

:func:`classify` names the kind of a body from its head with a *strength*:

* ``signature`` — a magic number (PDF, PNG, ZIP, ELF…): outranks any Content-Type label.
* ``markup`` — explicit HTML/XML openings (doctype, ``<html``, ``<?xml``, a feed root).
* ``text`` — JSON-looking or plain text: a weak signal that never overrides a specific label.
* ``binary`` — not text (NULs, control bytes, undecodable) and no known signature.

The registry (:meth:`handlers.registry.HandlerRegistry.select`) turns that into a handler or an
``unsupported_type`` error; nothing binary is ever handed to a text handler.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Literal

Strength = Literal["signature", "markup", "text", "binary"]
SNIFF_BYTES = 1024


@dataclass(frozen=True)
class Sniffed:
    """The verdict on a body's head: a short kind, a readable description, a media type."""

    kind: str
    description: str
    media_type: str
    strength: Strength


@dataclass(frozen=True)
class _Magic:
    kind: str
    description: str
    media_type: str
    magic: bytes
    offset: int = 0
    also: tuple[int, bytes] | None = None  # a second (offset, bytes) that must match too
    needs_binary: bool = False  # short magics that plain text could start with


# Unsupported binaries. PDF, the one signature with a handler, is found by _pdf_after_junk.
_SIGNATURES: tuple[_Magic, ...] = (
    _Magic("png", "PNG image", "image/png", b"\x89PNG\r\n\x1a\n"),
    _Magic("jpeg", "JPEG image", "image/jpeg", b"\xff\xd8\xff"),
    _Magic("gif", "GIF image", "image/gif", b"GIF87a"),
    _Magic("gif", "GIF image", "image/gif", b"GIF89a"),
    _Magic("webp", "WebP image", "image/webp", b"RIFF", also=(8, b"WEBP")),
    _Magic("wav", "WAV audio", "audio/wav", b"RIFF", also=(8, b"WAVE")),
    _Magic("avi", "AVI video", "video/x-msvideo", b"RIFF", also=(8, b"AVI ")),
    _Magic("avif", "AVIF image", "image/avif", b"ftypavif", offset=4),
    _Magic("heic", "HEIC image", "image/heic", b"ftypheic", offset=4),
    _Magic("mp4", "MP4/QuickTime media", "video/mp4", b"ftyp", offset=4),
    _Magic("bmp", "BMP image", "image/bmp", b"BM", needs_binary=True),
    _Magic("ico", "ICO image", "image/x-icon", b"\x00\x00\x01\x00"),
    _Magic("tiff", "TIFF image", "image/tiff", b"II*\x00"),
    _Magic("tiff", "TIFF image", "image/tiff", b"MM\x00*"),
    _Magic("zip", "ZIP archive (or an Office/EPUB/JAR file)", "application/zip", b"PK\x03\x04"),
    _Magic("zip", "ZIP archive", "application/zip", b"PK\x05\x06"),
    _Magic("gzip", "gzip data", "application/gzip", b"\x1f\x8b"),
    _Magic("bzip2", "bzip2 data", "application/x-bzip2", b"BZh", also=(4, b"1AY&SY")),
    _Magic("xz", "xz data", "application/x-xz", b"\xfd7zXZ\x00"),
    _Magic("zstd", "Zstandard data", "application/zstd", b"\x28\xb5\x2f\xfd"),
    _Magic("7z", "7-Zip archive", "application/x-7z-compressed", b"7z\xbc\xaf\x27\x1c"),
    _Magic("rar", "RAR archive", "application/vnd.rar", b"Rar!\x1a\x07"),
    _Magic("tar", "tar archive", "application/x-tar", b"ustar", offset=257),
    _Magic("ole2", "OLE2 compound file (old Office document)", "application/x-ole-storage",
           b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"),
    _Magic("elf", "ELF executable", "application/x-executable", b"\x7fELF"),
    _Magic("pe", "Windows executable (MZ/PE)", "application/vnd.microsoft.portable-executable",
           b"MZ", needs_binary=True),
    _Magic("macho", "Mach-O executable", "application/x-mach-binary", b"\xfe\xed\xfa\xce"),
    _Magic("macho", "Mach-O executable", "application/x-mach-binary", b"\xfe\xed\xfa\xcf"),
    _Magic("macho", "Mach-O executable", "application/x-mach-binary", b"\xce\xfa\xed\xfe"),
    _Magic("macho", "Mach-O executable", "application/x-mach-binary", b"\xcf\xfa\xed\xfe"),
    _Magic("macho", "Mach-O universal binary or Java class", "application/x-mach-binary",
           b"\xca\xfe\xba\xbe"),
    _Magic("wasm", "WebAssembly module", "application/wasm", b"\x00asm"),
    _Magic("woff", "WOFF font", "font/woff", b"wOFF"),
    _Magic("woff2", "WOFF2 font", "font/woff2", b"wOF2"),
    _Magic("ttf", "TrueType font", "font/ttf", b"\x00\x01\x00\x00\x00"),
    _Magic("otf", "OpenType font", "font/otf", b"OTTO", needs_binary=True),
    _Magic("sqlite", "SQLite database", "application/vnd.sqlite3", b"SQLite format 3\x00"),
    _Magic("ogg", "Ogg media", "audio/ogg", b"OggS"),
    _Magic("flac", "FLAC audio", "audio/flac", b"fLaC"),
    _Magic("mp3", "MP3 audio", "audio/mpeg", b"ID3", needs_binary=True),
    _Magic("webm", "Matroska/WebM media", "video/webm", b"\x1a\x45\xdf\xa3"),
    _Magic("midi", "MIDI audio", "audio/midi", b"MThd", needs_binary=True),
    _Magic("flash", "Flash movie", "application/x-shockwave-flash", b"CWS", needs_binary=True),
)

# Control bytes that never occur in text (tab, LF, FF, CR and ESC are left out).
_CONTROL_BYTES = bytes(sorted(set(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D, 0x1B} | {0x7F}))
_MAX_CONTROL_SHARE = 0.01
_LABELLED_CONTROL_TRACE = 4
_LABELLED_CONTROL_SHARE = 0.03

_WIDE_BOMS = (  # UTF-8's BOM is simply skipped: its text is checked byte by byte
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# The tags that open an HTML document, after the WHATWG MIME sniffing standard's list.
_HTML_OPENING = re.compile(
    r"<(?:!doctype\s+html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p"
    r"|meta|link)[\s/>]|<!--[\s>]",
    re.IGNORECASE,
)
_XML_DECL = re.compile(r"<\?xml[\s?]", re.IGNORECASE)
_PROLOG_SKIP = re.compile(r"\s*(?:<\?[^>]*\?>|<!--.*?-->|<!doctype[^>\[]*(?:\[.*?\])?\s*>)",
                          re.IGNORECASE | re.DOTALL)
_XMLNS = re.compile(r"[^>]*?\sxmlns(?::[\w.-]+)?\s*=")
_ROOT = re.compile(r"<([A-Za-z_][\w.:-]*)")
_FEED_ROOTS = {"rss": "application/rss+xml", "feed": "application/atom+xml",
               "rdf:rdf": "application/rss+xml"}
_JSON_START = re.compile(r'(?:\{\s*(?:"|\})|\[\s*(?:[\[{"\]\-0-9]|true|false|null))')


# The signatures worth trying for a given first byte, in the same order: _signature runs for
# every body, and most bodies start with a byte no magic starts with.
_CANDIDATES: tuple[tuple[_Magic, ...], ...] = tuple(
    tuple(sig for sig in _SIGNATURES if sig.offset != 0 or sig.magic[0] == first)
    for first in range(256)
)


def _signature(head: bytes, binary: bool) -> _Magic | None:
    for sig in _CANDIDATES[head[0]] if head else ():
        if sig.needs_binary and not binary:
            continue
        if head[sig.offset:sig.offset + len(sig.magic)] != sig.magic:
            continue
        if sig.also and head[sig.also[0]:sig.also[0] + len(sig.also[1])] != sig.also[1]:
            continue
        return sig
    return None


def _pdf_after_junk(head: bytes) -> bool:
    """PDF readers accept ``%PDF-`` anywhere in the first KiB; only trust it after junk
    that is not text, so a page that merely mentions "%PDF-1.7" stays text."""
    at = head.find(b"%PDF-", 0, SNIFF_BYTES)
    return at == 0 or (at > 0 and _is_binary(head[:at]))


def _is_binary(head: bytes) -> bool:
    """NULs or more than a trace of control bytes. Undecodable bytes alone are not enough:
    legacy single-byte text (cp1252, KOI8-R…) is full of them."""
    if b"\x00" in head:
        return True
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return controls > max(1, len(head) * _MAX_CONTROL_SHARE)


def mostly_binary(head: bytes) -> bool:
    """More than a few stray NUL/control bytes: what a text label cannot excuse.

    Unlabelled bytes are judged strictly (any NUL is binary, as in the WHATWG sniffing
    rules); a body labelled as text only loses that label when control bytes are more than
    :data:`_LABELLED_CONTROL_SHARE` of its head, so a page with a stray NUL is still read
    (decoding strips the NULs)."""
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES + b"\x00"))
    return controls > max(_LABELLED_CONTROL_TRACE, len(head) * _LABELLED_CONTROL_SHARE)


def _decode_head(head: bytes) -> str | None:
    """The head as text, or None when it is binary. A UTF-16/32 BOM makes NULs legitimate."""
    head = head.removeprefix(codecs.BOM_UTF8)
    for bom, codec in _WIDE_BOMS:
        if head.startswith(bom):
            body = head[len(bom):]
            if len(head) == SNIFF_BYTES:  # the head may end inside a character
                body = body[: len(body) - 4]
            try:
                text = body.decode(codec)  # strict: random bytes rarely decode as UTF-16/32
            except UnicodeDecodeError:
                return None
            return None if _is_binary(text.encode("utf-8", "surrogatepass")) else text
    if _is_binary(head):
        return None
    return head.decode("utf-8", errors="replace")


def _markup(text: str) -> Sniffed | None:
    start = text.lstrip()
    if _XML_DECL.match(start) or start.startswith("<"):
        position = 0
        while match := _PROLOG_SKIP.match(start, position):
            if match.end() == position:
                break
            position = match.end()
        root = _ROOT.match(start, position)
        name = root.group(1).lower() if root else ""
        if name == "html" or start[:14].lower() == "<!doctype html":
            return Sniffed("html", "HTML document", "text/html", "markup")
        if name in _FEED_ROOTS:
            return Sniffed("feed", f"{name} feed", _FEED_ROOTS[name], "markup")
        namespaced = root is not None and (":" in name or _XMLNS.match(start, root.end()))
        if _XML_DECL.match(start) or (namespaced and not _HTML_OPENING.match(start, position)):
            return Sniffed("xml", "XML document", "application/xml", "markup")
    if _HTML_OPENING.match(start):
        return Sniffed("html", "HTML document", "text/html", "markup")
    return None


def classify(head: bytes) -> Sniffed:
    """The kind of a body judged from its first bytes (only the first KiB is read)."""
    head = head[:SNIFF_BYTES]
    binary = _is_binary(head)
    if _pdf_after_junk(head.lstrip()):
        return Sniffed("pdf", "PDF document", "application/pdf", "signature")
    sig = _signature(head, binary)
    if sig is not None:
        return Sniffed(sig.kind, sig.description, sig.media_type, "signature")
    text = _decode_head(head)
    if text is None:
        return Sniffed("binary", "binary data", "application/octet-stream", "binary")
    found = _markup(text)
    if found is not None:
        return found
    if _JSON_START.match(text.lstrip()):
        return Sniffed("json", "JSON", "application/json", "text")
    return Sniffed("text", "plain text", "text/plain", "text")


_TEXTUAL_APPLICATION = frozenset({
    "application/json", "application/xml", "application/javascript", "application/ecmascript",
    "application/x-javascript", "application/xhtml+xml", "application/x-ndjson",
    "application/ld+json", "application/rss+xml", "application/atom+xml",
})


def is_textual(media_type: str) -> bool:
    """True for labels that promise text (a binary body under them is a contradiction)."""
    return (media_type.startswith("text/") or media_type in _TEXTUAL_APPLICATION
            or media_type.endswith(("+json", "+xml")))


_REJECTED_FAMILIES = (
    "image/", "video/", "audio/", "font/", "model/",
    # office documents are ZIP or OLE2 containers: no text without a dedicated handler
    "application/vnd.openxmlformats-officedocument.", "application/vnd.oasis.opendocument.",
    "application/vnd.ms-",
)
_REJECTED_TYPES = frozenset(
    {sig.media_type for sig in _SIGNATURES}
    | {"application/x-gzip", "application/x-zip-compressed", "application/x-rar-compressed",
       "application/java-archive", "application/x-msdownload", "application/x-dosexec",
       "application/vnd.android.package-archive", "application/x-iso9660-image",
       "application/x-apple-diskimage", "application/x-font-ttf", "application/font-woff",
       "application/vnd.ms-fontobject", "application/x-bzip", "application/x-compress",
       "application/x-lzip", "application/x-lzma", "application/x-debian-package",
       "application/x-rpm", "application/x-sqlite3", "application/msword",
       "application/epub+zip"}
)


def obviously_unsupported(media_type: str) -> bool:
    """True for media types whose bodies are never readable text (images, archives…)."""
    return media_type.startswith(_REJECTED_FAMILIES) or media_type in _REJECTED_TYPES
