"""What a batch run reads: a list or table of URLs (or none), then the links of the
sitemaps and feeds it names, numbered as one input. Plain values, cheap to import (the
command line builds them) and picklable."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from pipeline.batch.input.items import InputItem, line_item, open_input
from pipeline.batch.input.tables import read_input
from pipeline.fetch.credentials import CredentialScope
from pipeline.fetch.local_files import LocalFiles, LocalSource

DEFAULT_DEPTH = 4


@dataclass(frozen=True)
class ExpandOptions:
    """The sitemap and feed roots of a run and the bounds of their expansion."""

    sitemaps: tuple[str, ...] = ()
    feeds: tuple[str, ...] = ()
    max_urls: int | None = None
    max_depth: int = DEFAULT_DEPTH
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    same_host: bool = False

    @property
    def roots(self) -> tuple[str, ...]:
        return self.sitemaps + self.feeds


@dataclass(frozen=True)
class RunInput:
    """A run's input: ``path`` (``-``: stdin; None: no list) in ``format``, then the roots
    of ``expand``; ``local_files`` when ``--allow-files`` allows them. With ``format``
    ``warc``, ``path`` and ``more`` are WARC files, directories or lists of them,
    ``local_files`` reads their records back and ``captures`` says which records of a URL
    captured several times are items."""

    path: str | None = None
    format: str = "lines"
    url_column: str | None = None
    expand: ExpandOptions = field(default_factory=ExpandOptions)
    local_files: LocalSource | None = None
    more: tuple[str, ...] = ()
    captures: str = "last"  # --warc-captures: a URL's last response record, or all of them
    # URLs given as arguments (``python -m pipeline URL…``): the list, one URL a line.
    given: tuple[str, ...] = field(default=(), kw_only=True)

    @contextlib.contextmanager
    def file_items(self) -> Iterator[Iterator[InputItem]]:
        """The list's items (none without a list); the file is closed after."""
        if self.given:
            yield (line_item(index, index + 1, url.strip())
                   for index, url in enumerate(self.given))
            return
        if self.path is None:
            yield iter(())
            return
        if self.format == "warc":
            from pipeline.batch.input.warc_in import warc_items

            yield warc_items((self.path, *self.more), captures=self.captures)
            return
        source = open_input(self.path)
        try:
            items = read_input(source, self.format, self.url_column)
            yield items if self.local_files is not None else _without_files(items)
        finally:
            if source is not sys.stdin.buffer:
                source.close()

    def identity(self) -> dict[str, Any] | None:
        """How the input's items are made, beyond the file's bytes (a sharded run's
        manifest keeps it): None for a plain list. A WARC input names its paths too (the
        first one's bytes are fingerprinted only when it is a file)."""
        if self.format == "lines" and not self.expand.roots and not self.given:
            return None
        found = {"format": self.format, "url_column": self.url_column,
                 **{name: list(value) if isinstance(value, tuple) else value
                    for name, value in asdict(self.expand).items()}}
        if self.format == "warc" and self.path is not None:
            found["warc_inputs"] = [os.path.abspath(path) for path in (self.path, *self.more)]
            found["warc_captures"] = self.captures
        if self.given:
            found["urls"] = list(self.given)
        return found

    def credential_scope(self, credential_hosts: Sequence[str] = ()) -> CredentialScope | None:
        """Where the run's credentials may go: None (every URL, on its own host) without
        sitemaps or feeds; else the roots' origins and ``credential_hosts``, to
        which :func:`naming` adds the list's origins as it is read."""
        if not self.expand.roots:
            return None
        return CredentialScope.of(credential_hosts, self.expand.roots)

    def count(self) -> int | None:
        """Items in a regular file or the URL arguments with nothing to expand (one streamed
        pass), else None."""
        if self.given and not self.expand.roots:
            return len(self.given)
        if self.expand.roots or self.path is None or self.path == "-" or self.format == "warc" \
                or not stat.S_ISREG(os.stat(self.path).st_mode):
            return None
        with self.file_items() as items:
            return sum(1 for _ in items)


def _without_files(items: Iterator[InputItem]) -> Iterator[InputItem]:
    """Items that name a local file, refused here with the flag that would read them."""
    for item in items:
        if item.problem is None and item.url and LocalFiles.claims(item.url):
            if item.url[:5].lower() == "file:":
                item = replace(item, problem="file: URLs are read only with --allow-files DIR",
                               problem_kind="blocked")
            else:
                item = replace(item, problem="not a URL (no http:// or https://); a local "
                               "file is read only with --allow-files DIR")
        yield item


def naming(items: Iterator[InputItem], scope: CredentialScope | None) -> Iterator[InputItem]:
    """The list's ``items``, each URL's origin added to ``scope`` as it is read (the list
    is read before any sitemap: its origins are all known before a found URL is fetched)."""
    for item in items:
        if scope is not None and item.problem is None:
            scope.name(item.url)
        yield item
