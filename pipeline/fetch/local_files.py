"""Local files as input, for the batch command only (``--allow-files DIR``).

An input line that is a path (no URL scheme) or a ``file:`` URL is read from disk when it
lies under the allowed directory once every symlink is resolved; anything outside is
``blocked``. A relative path is taken from the input list's own directory, as a playlist's
are. The bytes then go through the same handlers, truncation and record as a fetched page.
The library's tools and the MCP server never build one of these: there, a ``file:`` URL stays
``blocked`` by the URL check.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import re
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from pipeline.core.errors import PipelineError, UsageError

if TYPE_CHECKING:
    from pipeline.fetch.base import FetchResult

SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")  # a URL's scheme, as a line starts
_READ_CHUNK = 1 << 20
# An opened file's real path, to catch a directory swapped for a symlink after the check.
_PROC_FD = "/proc/self/fd"


class LocalSource(Protocol):
    """Responses read without a network, for the batch command: :meth:`claims` says which
    inputs it reads (the extractor asks before fetching), :meth:`fetch` reads one as a
    fetch result of at most ``max_bytes`` or raises ``PipelineError``. Implementations:
    :class:`LocalFiles` (``--allow-files``) and the WARC input's records
    (:class:`pipeline.batch.input.warc_in.WarcRecords`). Picklable: it travels to shard
    processes."""

    def claims(self, url: str) -> bool: ...

    async def fetch(self, url: str, max_bytes: int) -> FetchResult: ...


class LocalFiles:
    """Reads paths and ``file:`` URLs that lie under ``root``; ``base`` anchors relative
    paths. Picklable: it travels to shard processes."""

    def __init__(self, root: str | os.PathLike[str], base: str | os.PathLike[str]) -> None:
        real = Path(os.path.realpath(root))
        if not real.is_dir():
            raise UsageError(f"--allow-files {root}: not a directory")
        self.root = real
        self.base = Path(os.path.abspath(base))

    @staticmethod
    def claims(url: str) -> bool:
        """True for an input that names a local file: a ``file:`` URL or a path."""
        return url[:5].lower() == "file:" or SCHEME.match(url) is None

    def _path(self, url: str) -> Path:
        if url[:5].lower() == "file:":
            parts = urlsplit(url)
            if parts.netloc not in ("", "localhost"):
                raise PipelineError("blocked", "a file: URL naming another host is refused")
            path = Path(url2pathname(unquote(parts.path)))
        else:
            path = Path(url)
        return path if path.is_absolute() else self.base / path

    def resolve(self, url: str) -> Path:
        """The real path ``url`` names; ``blocked`` when it lies outside the root."""
        real = Path(os.path.realpath(self._path(url)))
        if not real.is_relative_to(self.root):
            raise PipelineError("blocked", f"{real} lies outside --allow-files {self.root}")
        return real

    async def fetch(self, url: str, max_bytes: int) -> FetchResult:
        """The file as a fetch result (status 200, media type from its name), or a
        ``PipelineError``: ``blocked``, ``invalid_url`` (missing, not a regular file),
        ``too_large`` (past ``max_bytes``)."""
        from pipeline.fetch.base import FetchResult  # the command line imports this module

        path = self.resolve(url)
        body = await asyncio.to_thread(self._read, path, max_bytes)
        media_type, _ = mimetypes.guess_type(path.name, strict=False)
        return FetchResult(url=url, final_url=path.as_uri(), status=200,
                           media_type=media_type, charset=None, body=body)

    def _read(self, path: Path, max_bytes: int) -> bytes:
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) \
            | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            raise PipelineError("invalid_url", f"no such file: {path}") from None
        except PermissionError:
            raise PipelineError("blocked", f"permission denied: {path}") from None
        except OSError as exc:
            raise PipelineError("invalid_url", f"cannot open {path}: {exc.strerror}") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a directory opens too; a FIFO would block
            os.close(fd)
            raise PipelineError("invalid_url", f"not a regular file: {path}")
        with os.fdopen(fd, "rb", buffering=0) as handle:
            if sys.platform.startswith("linux"):
                opened = Path(os.readlink(f"{_PROC_FD}/{fd}"))
                if not opened.is_relative_to(self.root):
                    raise PipelineError("blocked", f"{opened} lies outside --allow-files "
                                        f"{self.root}")
            if info.st_size > max_bytes:
                raise PipelineError("too_large", f"file of {info.st_size} bytes exceeds "
                                    f"max_bytes {max_bytes}")
            chunks: list[bytes] = []
            size = 0
            while chunk := handle.read(min(_READ_CHUNK, max_bytes + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > max_bytes:  # it grew while read
                    raise PipelineError("too_large", f"file exceeds max_bytes {max_bytes}")
        return b"".join(chunks)
