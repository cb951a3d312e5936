"""``crawl --resume`` and ``map --resume``: an append-only frontier log beside the output,
and the crawl rebuilt from it and the records (JSON lines, or a Parquet directory's parts and
journals) after a stop — ``kill -9`` included.

The log (``OUT.frontier.jsonl``) has one JSON line per event: a URL queued
(``{"q": url, "d": depth, "p": parent, "v": via}``); an alias marked, or a URL handed out
that became no record (``{"a": url}``); a start page's final URL taken into the scope
(``{"s": url}``); an origin whose sitemaps were all read (``{"m": origin}``); a page's text
digest for the trap guard (``{"h": hex, "t": url observed, "r": url requested when
another}``); and, for ``map`` (whose output holds URLs, not records), a page done
(``{"f": url, "i": index}``, logged once its URL line, if any, is in the output). A page's
links are logged (and the bytes handed to the operating system) before its record is handed
to the sink, so no page that has a record can have unlogged links. On resume, the pages the
output holds (a map: those the log says are done) are done; every URL queued and not done is
queued again in its order: only pages in flight at the stop (or whose records had not
reached the file) are fetched again.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.errors import UsageError

SUFFIX = ".frontier.jsonl"


def log_path(output: str) -> str:
    return output + SUFFIX


class FrontierLog:
    """Appends events; :meth:`flush` hands the buffered lines to the operating system."""

    def __init__(self, path: str, *, append: bool) -> None:
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT
                               | (os.O_APPEND if append else os.O_TRUNC), 0o644)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror}") from exc
        self._lines: list[bytes] = []

    def event(self, **fields: Any) -> None:
        self._lines.append(json.dumps(fields, ensure_ascii=False,
                                      separators=(",", ":")).encode() + b"\n")

    def flush(self) -> None:
        if self._lines:
            data = b"".join(self._lines)
            self._lines.clear()
            while data:
                data = data[os.write(self._fd, data):]

    def close(self) -> None:
        self.flush()
        os.close(self._fd)


@dataclass
class Resumed:
    """What a stopped crawl left: pages done (their URLs), the highest record index, URLs
    queued in order, aliases, scope additions, origins whose sitemaps were read and the
    pages' text digests the trap guard saw."""

    done: list[str] = field(default_factory=list)
    last_index: int = -1
    queued: list[tuple[str, int, str | None, str]] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    seeded: set[str] = field(default_factory=set)
    # (URL observed, URL requested, text digest): the trap guard's memory, in order
    observed: list[tuple[str, str, bytes]] = field(default_factory=list)


def _json_lines(path: str) -> Iterator[dict[str, Any]]:
    """The whole JSON objects of a file, a torn or broken line left out."""
    if not os.path.exists(path):
        return
    with open(path, "rb") as handle:
        for line in handle:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                yield value


def _recorded(output: str) -> Iterator[tuple[int, str]]:
    """The (index, url) of each record ``output`` holds: JSON lines, or a Parquet
    directory's parts and journals (the records of the group not written as a part yet)."""
    from pipeline.batch.output.parquet_sink import is_parquet, recorded

    if is_parquet(output):
        yield from recorded(output)
        return
    for record in _json_lines(output):
        if isinstance(url := record.get("url"), str) and isinstance(
                index := record.get("index"), int):
            yield index, url


def read_resume(output: str, log: str | None = None, *, mapping: bool = False) -> Resumed:
    """The state a crawl into ``output`` (JSON lines or Parquet) left, with its frontier
    log (``log``; by default the one beside ``output``); for a map (``mapping``), the pages
    done are those its log says."""
    resumed = Resumed()

    def done(index: int, page: str) -> None:
        resumed.done.append(page)
        resumed.last_index = max(resumed.last_index, index)

    if not mapping:
        for index, page in _recorded(output):
            done(index, page)
    for event in _json_lines(log or log_path(output)):
        if isinstance(url := event.get("q"), str):
            resumed.queued.append((url, int(event.get("d") or 0), event.get("p"),
                                   str(event.get("v") or "link")))
        elif isinstance(url := event.get("a"), str):
            resumed.aliases.append(url)
        elif isinstance(url := event.get("s"), str):
            resumed.scope.append(url)
        elif isinstance(url := event.get("m"), str):
            resumed.seeded.add(url)
        elif isinstance(url := event.get("t"), str) and isinstance(digest := event.get("h"),
                                                                       str):
            with contextlib.suppress(ValueError):
                requested = event.get("r")
                resumed.observed.append((url, requested if isinstance(requested, str) else url,
                                         bytes.fromhex(digest)))
        elif mapping and isinstance(url := event.get("f"), str) and isinstance(
                number := event.get("i"), int):
            done(number, url)
    return resumed
