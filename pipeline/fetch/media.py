"""Content-Type parsing and the default "no handler will want this" predicate."""

from __future__ import annotations

import re

_TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_MEDIA_TYPE = re.compile(rf"\s*({_TOKEN}/{_TOKEN})\s*(?:;|$)")
_CHARSET = re.compile(r";\s*charset\s*=\s*[\"']?([A-Za-z0-9._:+-]{1,40})", re.IGNORECASE)

BINARY_PREFIXES = ("image/", "video/", "audio/", "font/", "model/")
BINARY_TYPES = frozenset({
    "application/zip", "application/gzip", "application/x-gzip", "application/x-tar",
    "application/x-bzip2", "application/x-xz", "application/zstd", "application/x-7z-compressed",
    "application/x-rar-compressed", "application/vnd.rar", "application/java-archive",
    "application/x-msdownload", "application/x-executable", "application/x-sharedlib",
    "application/x-mach-binary", "application/vnd.microsoft.portable-executable",
    "application/vnd.android.package-archive", "application/x-apple-diskimage",
    "application/x-iso9660-image", "application/vnd.debian.binary-package",
    "application/x-rpm", "application/wasm", "application/font-woff", "application/x-font-ttf",
    "application/x-font-otf", "application/vnd.ms-fontobject", "application/x-shockwave-flash",
    "application/ogg", "application/mp4",
})


def parse_content_type(value: str | None) -> tuple[str | None, str | None]:
    """``(media_type, charset)`` from a Content-Type header: lower-case, parameters dropped.

    Anything malformed gives None rather than raw server text.
    """
    if not value or len(value) > 1024:
        return None, None
    match = _MEDIA_TYPE.match(value)
    media_type = match.group(1).lower() if match else None
    charset_match = _CHARSET.search(value)
    charset = charset_match.group(1).lower() if charset_match else None
    return media_type, charset


def is_binary_media_type(media_type: str) -> bool:
    """True for media types no text handler takes: images, audio, video, fonts, archives..."""
    media_type = media_type.lower()
    return media_type.startswith(BINARY_PREFIXES) or media_type in BINARY_TYPES
