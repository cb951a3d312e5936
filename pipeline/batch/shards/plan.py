"""Shards of a run: which items a shard takes (the directory a sharded run writes is
:mod:`pipeline.batch.output.output_dir`).

Shard K of N takes the items whose host hashes to K (``crc32(host:port) % N``), so every
URL of a host is in one shard: per-host politeness, robots.txt and de-duplication stay exact
inside it. A line without a host is hashed whole. Records keep their item's ``index`` in the
whole input, so the parts merge back in input order (:mod:`pipeline.batch.output.merge`).
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.batch.host_queue import host_key
from pipeline.batch.input.items import InputItem
from pipeline.core.errors import OutputError, UsageError


def shard_of(url: str, shards: int) -> int:
    """The shard (0 … ``shards`` - 1) that takes ``url``."""
    key = host_key(url) or url
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % shards


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` → (K, N), with 0 ≤ K < N; a ``UsageError`` otherwise."""
    number, _, total = text.partition("/")
    try:
        shard, shards = int(number), int(total)
    except ValueError:
        shard, shards = -1, 0
    if not 0 <= shard < shards:
        raise UsageError(f"--shard wants K/N with 0 <= K < N (e.g. 0/4), not {text!r}")
    return shard, shards


def shard_items(items: Iterable[InputItem], shard: int, shards: int) -> Iterator[InputItem]:
    """The items of one shard, in input order."""
    return (item for item in items if shard_of(item.url, shards) == shard)


def count_lines(path: Path) -> int:
    """Lines in a file, read in chunks."""
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


@dataclass(frozen=True)
class Spool:
    """A shard's items, split out of the input: their file and how many there are."""

    path: Path
    count: int


def split_items(items: Iterable[InputItem], shards: int, wanted: list[int],
                directory: Path) -> dict[int, Spool]:
    """Write each item of the ``wanted`` shards (of ``shards``) to its shard's spool file in
    ``directory``: one pass over the input, which is read once (stdin works too). A spool
    that cannot be written (a full disk) is an ``OutputError``, as a part would be: the
    run stops, and can be resumed."""
    paths = {shard: directory / f"items-{shard:05d}.jsonl" for shard in wanted}
    counts = dict.fromkeys(wanted, 0)
    with contextlib.ExitStack() as files:
        with _spooling(directory):
            handles = {shard: files.enter_context(open(path, "wb"))
                       for shard, path in paths.items()}
        for item in items:
            shard = shard_of(item.url, shards)
            handle = handles.get(shard)
            if handle is not None:
                with _spooling(directory):
                    handle.write(item.to_json())
                counts[shard] += 1
        with _spooling(directory):
            files.close()  # the last bytes reach the disk here
    return {shard: Spool(paths[shard], counts[shard]) for shard in wanted}


@contextlib.contextmanager
def _spooling(directory: Path) -> Iterator[None]:
    """An ``OSError`` of the spool files (not of the input, read between these blocks) as
    an ``OutputError`` naming the output directory."""
    try:
        yield
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(exc.errno, f"{exc.strerror or exc} (spooling the input)",
                          str(directory.parent)) from exc
