"""``--markdown-dir DIR``: besides the records, one markdown file per page that has content.

The file's path mirrors the URL — ``DIR/host[_port]/path…`` with ``.md`` added, a URL ending
in ``/`` as ``…/index.md``, a query as a short hash after the name — and the file opens with
a short front matter (``url``, ``title``, and a crawl's ``depth``), the form most RAG
ingestion takes. Written after the record; a failed write is an :class:`OutputError` (the
run stops, resumable).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from yarl import URL

from pipeline.core.errors import OutputError
from pipeline.core.models import Record

MAX_NAME = 120  # characters of one path segment kept in a file name (then a hash)


def _safe(segment: str) -> str:
    """A path segment as a file name: no separators, no dot names, bounded length."""
    name = segment.replace("\\", "_").replace("\x00", "_")
    if name in ("", ".", ".."):
        name = "_" + name
    if len(name) > MAX_NAME:
        name = name[:MAX_NAME] + "-" + hashlib.blake2b(name.encode(), digest_size=4).hexdigest()
    return name


def markdown_path(url: str) -> Path:
    """Where the page of ``url`` goes under the directory (a relative path)."""
    parsed = URL(url)
    host = (parsed.raw_host or "local").lower()
    if parsed.explicit_port is not None and not parsed.is_default_port():
        host += f"_{parsed.explicit_port}"
    segments = parsed.raw_path.split("/")[1:] or [""]
    if segments[-1] == "":
        segments[-1] = "index"
    stem = segments[-1]
    if parsed.raw_query_string:
        stem += "_" + hashlib.blake2b(parsed.raw_query_string.encode(),
                                      digest_size=4).hexdigest()
    parts = [_safe(host), *map(_safe, segments[:-1]), _safe(stem) + ".md"]
    return Path(*parts)


def front_matter(record: Record) -> str:
    lines = ["---", f"url: {json.dumps(record.final_url or record.url, ensure_ascii=False)}",
             f"title: {json.dumps(record.title or '', ensure_ascii=False)}"]
    if record.depth is not None:
        lines.append(f"depth: {record.depth}")
    return "\n".join([*lines, "---", ""]) + "\n"


class MarkdownDir:
    """Writes each record with content to its file under ``directory``."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def write(self, record: Record) -> None:
        if not record.ok or not record.content:
            return
        url = record.final_url or record.url
        if not url.lower().startswith(("http://", "https://")):
            return  # a local file or a WARC record: no web path to mirror
        path = self.directory / markdown_path(url)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(front_matter(record) + record.content + "\n", encoding="utf-8")
        except OSError as exc:
            raise OutputError(exc.errno, exc.strerror or str(exc), str(path)) from exc
