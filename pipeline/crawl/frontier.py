"""The crawl frontier: which URL is fetched next, and which never.

A URL is known by its identity (:func:`pipeline.crawl.identity.url_identity`), and the
seen-set keeps only a 64-bit hash of it: with the queue's tuples, about 200 bytes per URL
(``benchmarks/crawl_frontier.py``). Redirect targets and in-scope canonicals are marked as
aliases, so a page reached through any of its URLs is fetched once. Order is breadth first
(start pages and sitemap URLs at depth 0, then one link hop at a time).

The page budget is reserved when a URL is handed out (:meth:`Frontier.next`), so however
many pages are in flight, at most ``max_pages`` are ever handed out; a page that ends as no
record (robots, a redirect out of scope or onto a known page) gives its place back
(:meth:`Frontier.release`).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from yarl import URL

from pipeline.crawl.identity import url_identity
from pipeline.crawl.ledger import Ledger

Via = Literal["start", "sitemap", "link", "redirect"]


@dataclass(frozen=True, slots=True)
class Entry:
    """A URL handed out to fetch: its depth in link hops, the page that linked to it and
    how it was found."""

    url: str
    depth: int
    parent: str | None
    via: Via


def prefix_of(url: str) -> str:
    """A URL's branch for ``--max-pages-per-prefix``: its host and first path segment."""
    parsed = URL(url)
    first = parsed.raw_path.lstrip("/").split("/", 1)[0]
    return f"{parsed.raw_host}/{first}"


class Frontier:
    """The queue and seen-set of one crawl, with its budgets."""

    def __init__(self, *, max_pages: int, max_depth: int | None = None,
                 max_per_prefix: int | None = None, ledger: Ledger | None = None) -> None:
        self.max_pages = max_pages
        self.max_depth = max_depth
        self.max_per_prefix = max_per_prefix
        self.ledger = ledger or Ledger()
        self._seen: set[int] = set()
        # (url, depth, parent, via): tuples, not Entry objects, to keep the queue small
        self._queue: deque[tuple[str, int, str | None, Via]] = deque()
        self._per_prefix: Counter[str] = Counter()
        self.handed = 0  # pages handed out and not given back: the budget spent
        self.in_flight = 0

    def __len__(self) -> int:
        """URLs waiting."""
        return len(self._queue)

    @property
    def spent(self) -> bool:
        """The page budget is used up: nothing more is handed out."""
        return self.handed >= self.max_pages

    @property
    def room(self) -> bool:
        """A page may be handed out now (a shard's frontier: one of its reserved places
        is free, :mod:`pipeline.crawl.shards`)."""
        return not self.spent

    def seen(self, url: str) -> bool:
        return hash(url_identity(url)) in self._seen

    def alias(self, url: str) -> bool:
        """Mark ``url`` as known (a redirect's target, a canonical). True if it was new."""
        key = hash(url_identity(url))
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def offer(self, url: str, *, depth: int, parent: str | None, via: Via) -> str | None:
        """Queue ``url`` unless it is known, too deep or past the budget: then the reason
        (``duplicate``, ``depth``, ``budget``), for the caller's ledger."""
        reason: str | None = None
        if self.max_depth is not None and depth > self.max_depth:
            reason = "depth"
        elif not self.alias(url):
            reason = "duplicate"
        elif self.spent:
            reason = "budget"
        if reason is None:
            self._queue.append((url, depth, parent, via))
        return reason

    def next(self) -> Entry | None:
        """The next URL to fetch (its page counted against the budget), or None when the
        queue is empty or the budget spent."""
        while self._queue and self.room:
            url, depth, parent, via = self._queue.popleft()
            if self.max_per_prefix is not None:
                branch = prefix_of(url)
                if self._per_prefix[branch] >= self.max_per_prefix:
                    self.ledger.skip(url, "budget", parent, depth)
                    continue
                self._per_prefix[branch] += 1
            self.handed += 1
            self.in_flight += 1
            return Entry(url, depth, parent, via)
        return None

    def finished(self, entry: Entry, *, counted: bool) -> None:
        """A handed-out URL is done: ``counted`` when it became a record, otherwise its
        place in the budget (and its branch's) is given back."""
        self.in_flight -= 1
        if not counted:
            self.handed -= 1
            if self.max_per_prefix is not None:
                self._per_prefix[prefix_of(entry.url)] -= 1

    @property
    def idle(self) -> bool:
        """Nothing in flight and nothing more to hand out: the crawl is over."""
        return self.in_flight == 0 and (not self._queue or self.spent)

    def leftovers(self) -> Iterator[Entry]:
        """Drain the URLs still waiting (the budget ended the crawl)."""
        while self._queue:
            yield Entry(*self._queue.popleft())
