"""Reading the input: URL lines in, :class:`InputItem` values out.

An item is what travels from where the input is read to whoever extracts it — the engine in
this process, a shard process (``--processes``) or a Ray task — so it carries its position in
the whole input (``index``) and leaves room for more than a URL (``extra``).
"""

from __future__ import annotations

import asyncio
import codecs
import concurrent.futures
import json
import sys
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from pipeline.core.errors import UsageError
from pipeline.core.models import ErrorKind
from pipeline.fetch.local_files import SCHEME

MAX_LINE_BYTES = 64 * 1024  # a longer line is not a URL; it is read past, never held whole
SHOWN_URL_CHARS = 200  # how much of an over-long line its record keeps as ``url``
READ_BATCH = 256  # items per hand-over from the reader thread
HAND_OVER_WAIT = 0.1  # seconds between checks, while the queue is full, that it is still read
# A URL line's ``input``: its line number and what follows its URL (:func:`line_item`).
LINE, REST = "line", "rest"


@dataclass(frozen=True, slots=True)
class InputItem:
    """One unit of input: its position among the input's URLs, its URL, why it cannot be
    fetched (``problem``, an error of kind ``problem_kind``) when that is clear before any
    fetch, record fields that travel with it (``extra``: ``input``, ``source``), and where
    its response is read from instead of fetching the URL (``locator``: a WARC record's
    ``PATH@OFFSET``, :mod:`pipeline.batch.input.warc_in`)."""

    index: int
    url: str
    problem: str | None = None
    extra: dict[str, Any] | None = None
    problem_kind: ErrorKind = "invalid_url"
    locator: str | None = None

    def to_json(self) -> bytes:
        """One line of a spool file (see :func:`load_items`)."""
        fields: dict[str, Any] = {"index": self.index, "url": self.url}
        if self.problem is not None:
            fields["problem"] = self.problem
            if self.problem_kind != "invalid_url":
                fields["kind"] = self.problem_kind
        if self.extra:
            fields["extra"] = self.extra
        if self.locator is not None:
            fields["locator"] = self.locator
        return json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def load_items(stream: BinaryIO) -> Iterator[InputItem]:
    """The items of a spool file written with :meth:`InputItem.to_json`."""
    for line in stream:
        fields = json.loads(line)
        yield InputItem(fields["index"], fields["url"], fields.get("problem"),
                        fields.get("extra"), fields.get("kind", "invalid_url"),
                        fields.get("locator"))


def read_lines(stream: BinaryIO) -> Iterator[tuple[int, str, str | None]]:
    """The non-blank, non-comment lines of a byte stream, stripped, each with its line
    number (from 1) and why it cannot be a URL (or None): BOM, CRLF, NULs, bad UTF-8 and
    huge lines tolerated (a huge line is read past, never held whole, and keeps its first
    characters)."""
    first = True
    number = 0
    while raw := stream.readline(MAX_LINE_BYTES):
        number += 1
        overlong = len(raw) == MAX_LINE_BYTES and not raw.endswith(b"\n")
        while overlong and (rest := stream.readline(MAX_LINE_BYTES)):
            if rest.endswith(b"\n"):
                break
        if first:
            raw = raw.removeprefix(codecs.BOM_UTF8)
            first = False
        text = raw.decode("utf-8", errors="replace").strip()
        if not text or text.startswith("#"):
            continue
        problem = None
        if overlong:
            text = text[:SHOWN_URL_CHARS] + "…"
            problem = f"line longer than {MAX_LINE_BYTES} bytes"
        elif "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
            problem = "line is not valid UTF-8"
        yield number, text, problem


def _continues_url(url: str, word: str) -> bool:
    """Whether ``word``, after a space, reads as the rest of ``url`` rather than a label:
    it holds a path or query character, or a dot where ``url`` ends at its host."""
    if any(mark in word for mark in "/?=&"):
        return True
    after_scheme = url.partition("://")[2]
    return "." in word and bool(after_scheme) and "/" not in after_scheme


def _names_a_place(word: str) -> bool:
    """Whether a line's first field reads as a URL or a path (``https://…``, ``file:…``,
    ``example.test``, ``page.html``, ``docs/a``) rather than a word of prose (``not``,
    ``Notes:``): a scheme with something after it, a slash or a dot."""
    scheme = SCHEME.match(word)
    return (scheme is not None and scheme.end() < len(word)) or any(
        mark in word for mark in "/.\\")


def line_item(index: int, number: int, text: str) -> InputItem:
    """The item of URL line ``number`` (``text``, stripped): its first whitespace-separated
    field is the URL, and the rest of the line travels as the record's
    ``input`` (``{"line": number, "rest": …}``). A line whose first field reads as neither
    a URL nor a path (``not a url``) is its own ``url``, as written (its record then says
    why it is not one). A space that seems to cut the URL itself
    (``http://exa mple.test/?q``) makes the whole line an ``invalid_url`` item, never a
    fetch of its first part; a tab always ends the URL."""
    url, *tail = text.split(None, 1)
    if not tail:
        return InputItem(index, url)
    if not _names_a_place(url):
        return InputItem(index, text[:SHOWN_URL_CHARS])
    rest = tail[0]
    if text[len(url)] != "\t" and _continues_url(url, rest.split(None, 1)[0]):
        return InputItem(index, text[:SHOWN_URL_CHARS],
                         f"a space cuts the URL on line {number} (write a space in a URL as "
                         "%20; a tab after the URL starts a label)")
    return InputItem(index, url, extra={"input": {LINE: number, REST: rest}})


def read_items(stream: BinaryIO) -> Iterator[InputItem]:
    """The URL lines of a byte stream as items (see :func:`read_lines`, :func:`line_item`)."""
    for index, (number, text, problem) in enumerate(read_lines(stream)):
        yield InputItem(index, text, problem) if problem else line_item(index, number, text)


def open_input(path: str) -> BinaryIO:
    """The input named on the command line (``-``: stdin); a ``UsageError`` if unreadable."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc


async def feed(items: Iterable[InputItem]) -> AsyncGenerator[list[InputItem], None]:
    """Iterate ``items`` in a daemon thread (a blocked read never holds up the loop nor the
    interpreter's exit), yielding batches, a few batches ahead at most. Closing the iterator
    (or ending the loop) stops the thread."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[list[InputItem] | BaseException | None] = asyncio.Queue(maxsize=4)
    closed = threading.Event()

    def hand_over(item: list[InputItem] | BaseException | None) -> bool:
        try:
            waiting = asyncio.run_coroutine_threadsafe(queue.put(item), loop)
        except RuntimeError:  # the loop is closed: stop reading
            return False
        while True:
            try:
                waiting.result(timeout=HAND_OVER_WAIT)
                return True
            except concurrent.futures.TimeoutError:
                if closed.is_set():  # nobody will take it: the loop may not even run
                    waiting.cancel()
                    return False
            except concurrent.futures.CancelledError:  # the loop is ending
                return False

    def reader() -> None:
        batch: list[InputItem] = []
        try:
            for item in items:
                batch.append(item)
                if len(batch) >= READ_BATCH:
                    if not hand_over(batch):
                        return
                    batch = []
        except Exception as exc:
            hand_over(exc)
            return
        if batch and not hand_over(batch):
            return
        hand_over(None)

    threading.Thread(target=reader, name="pipeline-input", daemon=True).start()
    try:
        async for batch in _batches(queue):
            yield batch
    finally:
        closed.set()


async def _batches(queue: asyncio.Queue[list[InputItem] | BaseException | None]
                   ) -> AsyncIterator[list[InputItem]]:
    """The batches a producer puts in ``queue``, until None; a producer's error is raised."""
    while (got := await queue.get()) is not None:
        if isinstance(got, BaseException):
            raise got
        yield got


async def feed_async(items: AsyncIterator[InputItem]
                     ) -> AsyncGenerator[list[InputItem], None]:
    """Batches of ``items``, produced by a task of their own a few batches ahead (so the
    producer's awaits — a sitemap's fetch — overlap the consumer's work). A batch is handed
    over when full, or at once when the consumer is waiting for one."""
    queue: asyncio.Queue[list[InputItem] | BaseException | None] = asyncio.Queue(maxsize=4)

    async def produce() -> None:
        batch: list[InputItem] = []
        try:
            async for item in items:
                batch.append(item)
                if len(batch) >= READ_BATCH or queue.empty():
                    await queue.put(batch)
                    batch = []
            if batch:
                await queue.put(batch)
            await queue.put(None)
        except Exception as exc:
            await queue.put(exc)

    producer = asyncio.ensure_future(produce())
    try:
        async for batch in _batches(queue):
            yield batch
    finally:
        producer.cancel()
        await asyncio.gather(producer, return_exceptions=True)
