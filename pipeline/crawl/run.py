"""A crawl: start pages in, their site's pages out, one record each, through the batch engine.

:class:`Crawl` is the engine's scheduler (:mod:`pipeline.batch.scheduler`): it hands out the
frontier's URLs, takes each record back before it is written (:meth:`Crawl.take`: aliases
from redirects and canonicals, robots and scope refusals moved to the ledger, the page's
links judged and queued) and guards every redirect hop (:meth:`Crawl.guard`). The engine,
fetcher, handlers and sinks are the batch command's: no second engine.

Library entry points (what ``crawl`` / ``map`` and the agent's ``web_crawl`` call):
:func:`crawl` and :func:`map_site`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from yarl import URL

from pipeline.batch.engine import Summary
from pipeline.batch.input.documents import Parse, in_thread
from pipeline.batch.input.items import InputItem
from pipeline.batch.input.sources import document_fetcher
from pipeline.batch.run import PLAIN_STEM, RunOutput, extract_items
from pipeline.core.errors import PipelineError, UsageError
from pipeline.core.models import Record
from pipeline.core.settings import Settings
from pipeline.crawl.frontier import Entry, Frontier, Via
from pipeline.crawl.identity import url_identity
from pipeline.crawl.ledger import Ledger
from pipeline.crawl.resume import FrontierLog, Resumed
from pipeline.crawl.rules import Rules
from pipeline.crawl.scope import Scope, ScopeMode
from pipeline.crawl.traps import TrapGuard
from pipeline.extract.native import load_registry
from pipeline.extract.runners import Runner
from pipeline.fetch.base import Fetcher

VIAS = ("start", "sitemap", "link", "redirect")
SITEMAP_DOCUMENTS = 50  # sitemap documents read per origin (an index's children included)
SITEMAP_FACTOR = 10  # sitemap URLs taken: at most this many times --max-pages


@dataclass(frozen=True)
class CrawlOptions:
    """What to crawl (docs/crawl.md names the flag of each)."""

    scope: ScopeMode = "origin"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_depth: int | None = None
    max_pages: int = 1000
    max_pages_per_prefix: int | None = None
    robots: bool = True
    follow_nofollow: bool = False
    sitemap: bool = True
    links: bool = False  # records keep their out-links


@dataclass
class CrawlResult:
    """How a crawl went: the engine's summary, skips by reason, whether the page budget
    ended it and how many in-scope URLs it left, and the records when no writer was given."""

    summary: Summary
    skipped: Counter[str]
    budget_ended: bool
    left: int
    crawl_delay_cap: float | None  # None: robots.txt ignored
    records: list[Record] = field(default_factory=list)

    def describe(self) -> str:
        parts = [self.summary.describe()]
        if self.budget_ended:
            parts.append(f"the page budget ended the crawl with {self.left} in-scope URLs "
                         "left")
        total = sum(self.skipped.values())
        if total:
            reasons = ", ".join(f"{reason} {count}"
                                for reason, count in self.skipped.most_common())
            parts.append(f"skipped {total} URLs ({reasons})")
        if self.crawl_delay_cap is not None:
            parts.append(f"robots.txt obeyed, Crawl-delay capped at {self.crawl_delay_cap:g} s")
        return "; ".join(parts)


def check_start_urls(urls: Iterable[str]) -> list[str]:
    """The start URLs, each an absolute http(s) URL; ``UsageError`` naming one that is not."""
    starts = []
    for url in urls:
        try:
            parsed = URL(url.strip())
        except (ValueError, TypeError):
            parsed = None
        if parsed is None or not parsed.absolute or parsed.scheme.lower() not in (
                "http", "https") or not parsed.raw_host:
            raise UsageError(f"a start URL must be an absolute http(s) URL: {url!r}")
        starts.append(str(parsed.with_fragment(None)))
    if not starts:
        raise UsageError("give at least one start URL")
    return starts


class Crawl:
    """One crawl's state: the engine's scheduler, the hook on its records, the redirect
    guard and the sitemap seeding."""

    def __init__(self, starts: Sequence[str], options: CrawlOptions,
                 ledger: Ledger | None = None, *, log: FrontierLog | None = None,
                 resumed: Resumed | None = None) -> None:
        self.options = options
        self.rules = Rules.compile(options.include, options.exclude)
        self.ledger = ledger or Ledger()
        self.scope = Scope(options.scope, starts)
        self.traps = TrapGuard()
        self.frontier = self._new_frontier(options)
        self._starts = {url_identity(url) for url in starts}
        self._handed: dict[int, Entry] = {}
        self._done: set[int] = set()  # identities of pages fetched (or being fetched)
        self._rejected: set[int] = set()  # identities already in the ledger
        self._too_deep: set[int] = set()
        self._escaped: dict[str, str] = {}  # URL identity -> the out-of-scope hop refused
        self._index = 0
        self._step = 1  # record indices: a sharded crawl's shards interleave theirs
        self._changed = asyncio.Event()
        self._background: set[asyncio.Task[None]] = set()
        self._seeded: set[str] = set()
        self.seeding: Callable[[str], None] | None = None  # set by run(): sitemaps of an origin
        self.log = log
        if resumed is not None:
            self._restore(resumed)
        for url in starts:
            self.discover(url, depth=0, parent=None, via="start")

    def _new_frontier(self, options: CrawlOptions) -> Frontier:
        return Frontier(max_pages=options.max_pages, max_depth=options.max_depth,
                        max_per_prefix=options.max_pages_per_prefix, ledger=self.ledger)

    def _restore(self, resumed: Resumed) -> None:
        """The state a stopped crawl left (:mod:`pipeline.crawl.resume`)."""
        for url in (*resumed.done, *resumed.aliases):
            self._done.add(hash(url_identity(url)))
            self.frontier.alias(url)
        for url in resumed.scope:
            self.scope.add(url)
        done = {hash(url_identity(url)) for url in resumed.done}
        for url, requested, digest in resumed.observed:
            # a page whose record was lost is fetched again, and observed again then
            if hash(url_identity(requested)) in done:
                self.traps.observe_digest(url, digest)
        self.frontier.handed = len(resumed.done)
        self._index = resumed.last_index + 1
        self._seeded.update(resumed.seeded)
        for url, depth, parent, via in resumed.queued:
            self.frontier.offer(url, depth=depth, parent=parent,
                                via=via if via in VIAS else "link")  # type: ignore[arg-type]

    def unseeded(self, starts: Sequence[str], resumed: Resumed) -> list[str]:
        """The origins (of the start pages and where they led) whose sitemaps a resumed
        crawl has still to read."""
        origins = {str(URL(url).origin()) for url in (*starts, *resumed.scope)}
        return sorted(origins - self._seeded)

    # -- the scheduler port ------------------------------------------------------------

    def enqueue(self, item: InputItem) -> None:
        """More start pages (the scheduler port's push)."""
        self.discover(item.url, depth=0, parent=None, via="start")

    def next(self) -> InputItem | None:
        while (entry := self.frontier.next()) is not None:
            key = hash(url_identity(entry.url))
            if key in self._done:  # fetched meanwhile under an alias
                self.frontier.finished(entry, counted=False)
                continue
            if (trap := self.traps.check(entry.url)) is not None:  # stopped while it waited
                self.frontier.finished(entry, counted=False)
                self.ledger.skip(entry.url, trap, entry.parent, entry.depth)
                continue
            self._done.add(key)
            index, self._index = self._index, self._index + self._step
            self._handed[index] = entry
            return InputItem(index, entry.url, extra={
                "depth": entry.depth, "parent": entry.parent, "via": entry.via})
        return None

    async def pending(self) -> bool:
        while True:
            if len(self.frontier) and not self.frontier.spent:
                return True
            if not self._background:
                return False
            self._changed.clear()
            waiter = asyncio.ensure_future(self._changed.wait())
            try:
                await asyncio.wait([waiter, *self._background],
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()

    # -- judging URLs ------------------------------------------------------------------

    def discover(self, url: str, *, depth: int, parent: str | None, via: Via) -> None:
        """Judge a found URL: queued, or the reason it is not in the ledger (each URL once)."""
        identity = url_identity(url)
        key = hash(identity)
        if key in self._rejected:
            return
        # too deep here need not be too deep from a sitemap (depth 0): logged once, not barred
        if key in self._too_deep and via != "sitemap":
            return
        reason: str | None = None
        if not self.scope.allows(url):
            reason = "out_of_scope"
        elif self.rules.excludes(url) and via != "start":
            reason = "excluded"
        else:
            reason = self.traps.check(url)
        if reason is None:
            reason = self.frontier.offer(url, depth=depth, parent=parent, via=via)
            if reason is None:
                if self.log is not None:
                    self.log.event(q=url, d=depth, p=parent, v=via)
                self._changed.set()
                return
            if reason == "duplicate":
                # an alias spelled otherwise than its identity: once per spelling
                spelling = hash(url)
                if url != identity and spelling not in self._rejected and key in self._done:
                    self._rejected.add(spelling)
                    self.ledger.skip(url, reason, parent, depth)
                return
        (self._too_deep if reason == "depth" else self._rejected).add(key)
        self.ledger.skip(url, reason, parent, depth)

    def guard(self, first: URL, hop: URL) -> str | None:
        """The fetcher's redirect guard: a start page's own redirects are followed (they set
        the scope), any other hop only inside the scope."""
        identity = url_identity(first)
        if identity in self._starts or self.scope.allows(hop):
            return None
        self._escaped[identity] = str(hop)
        return f"a redirect out of the crawl's scope ({self.options.scope}) is not followed"

    # -- records -----------------------------------------------------------------------

    def _drop(self, entry: Entry, url: str, reason: str) -> None:
        self.frontier.finished(entry, counted=False)
        self.ledger.skip(url, reason, entry.parent, entry.depth)
        if self.log is not None:  # judged: done for --resume too, though no record says so
            self.log.event(a=entry.url)
        self._changed.set()

    def take(self, record: Record) -> Record | None:
        """A finished page: the record to write (with depth, parent, via), or None when it
        is no page of this crawl (robots, a redirect out of scope, an alias of a page
        already written); its links are judged and queued — and logged, before the record
        is written (``--resume``)."""
        try:
            return self._take(record)
        finally:
            if self.log is not None:
                self.log.flush()

    def _take(self, record: Record) -> Record | None:
        assert record.index is not None
        entry = self._handed.pop(record.index)
        identity = url_identity(entry.url)
        if record.error is not None and record.error.kind == "robots":
            self._drop(entry, entry.url, "robots")
            return None
        if (hop := self._escaped.pop(identity, None)) is not None:
            self._drop(entry, hop, "out_of_scope")
            return None
        via: Via = entry.via
        aliases = []
        if record.final_url and url_identity(record.final_url) != identity:
            aliases.append(record.final_url)
            if entry.via == "start":
                self.widen(record.final_url)
            else:
                via = "redirect"
        canonical = record.metadata.get("canonical_url") if record.ok else None
        if isinstance(canonical, str) and self.scope.allows(canonical):
            aliases.append(canonical)
        duplicate = False
        for alias in aliases:
            duplicate |= self.known(alias, identity)
        self._follow(record, entry)
        if duplicate:  # one record per page: the page came under another URL first
            self._drop(entry, entry.url, "duplicate")
            return None
        self.frontier.finished(entry, counted=True)
        self._changed.set()
        if record.ok and record.content is not None:
            observed = record.final_url or entry.url
            digest = self.traps.observe(observed, record.content)
            if self.log is not None:  # the guard's memory, for --resume
                self.log.event(h=digest.hex(), t=observed,
                               **({"r": entry.url} if entry.url != observed else {}))
        if entry.via == "start" and self.seeding is not None:
            origin = str(URL(record.final_url or entry.url).origin())
            if origin not in self._seeded:
                self._seeded.add(origin)
                self.seeding(origin)
        update: dict[str, object] = {"via": via}
        if not self.options.links:
            update.update(links=None, nofollow_links=None)
        return record.model_copy(update=update)

    def widen(self, url: str) -> None:
        """Take ``url`` (where a start page led) into the scope."""
        self.scope.add(url)
        if self.log is not None:
            self.log.event(s=url)

    def known(self, alias: str, identity: str | None = None) -> bool:
        """Mark ``alias`` as a URL of a page fetched (the page ``identity``, when given);
        True when it is a page already fetched under another URL."""
        key = hash(url_identity(alias))
        duplicate = key in self._done and url_identity(alias) != identity
        self._done.add(key)
        if self.frontier.alias(alias) and self.log is not None:
            self.log.event(a=alias)
        return duplicate

    def _follow(self, record: Record, entry: Entry) -> None:
        depth = entry.depth + 1
        for link in record.links or ():
            self.discover(link, depth=depth, parent=entry.url, via="link")
        for link in record.nofollow_links or ():
            if self.options.follow_nofollow:
                self.discover(link, depth=depth, parent=entry.url, via="link")
            else:
                self.nofollow(link, entry.url, depth)

    def nofollow(self, link: str, parent: str | None, depth: int) -> None:
        """A ``rel=nofollow`` link not followed: in the ledger, once."""
        if (key := hash(url_identity(link))) not in self._rejected:
            self._rejected.add(key)
            self.ledger.skip(link, "nofollow", parent, depth)

    # -- sitemaps ----------------------------------------------------------------------

    def spawn(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run a coroutine function in the background; the crawl waits for it."""
        async def wrapped() -> None:
            try:
                await work()
            finally:
                self._changed.set()

        task = asyncio.ensure_future(wrapped())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def cancel_background(self) -> None:
        for task in list(self._background):
            task.cancel()

    async def seed_sitemaps(self, origin: str, documents: Fetcher, parse: Parse) -> None:
        """The pages the sitemaps of ``origin`` list (those robots.txt names, else
        ``/sitemap.xml``), as depth-0 URLs found ``via`` sitemap."""
        sitemaps: list[str] = []
        with contextlib.suppress(PipelineError):
            result = await documents.fetch(f"{origin}/robots.txt")
            parsed = await parse(result.body, result.final_url)
            sitemaps = [link for kind, link in parsed.links if kind == "sitemap"]
        queue = sitemaps or [f"{origin}/sitemap.xml"]
        read: set[str] = set()
        taken = 0
        limit = SITEMAP_FACTOR * self.options.max_pages
        while queue and len(read) < SITEMAP_DOCUMENTS and taken < limit:
            sitemap = queue.pop(0)
            if sitemap in read:
                continue
            read.add(sitemap)
            try:
                result = await documents.fetch(sitemap)
                parsed = await parse(result.body, result.final_url)
            except PipelineError:
                continue
            for kind, link in parsed.links:
                if kind == "sitemap":
                    queue.append(link)
                elif taken < limit and not self.frontier.spent:
                    taken += 1
                    self.discover(link, depth=0, parent=sitemap, via="sitemap")
            if self.log is not None:
                self.log.flush()
        if self.log is not None:
            self.log.event(m=origin)
            self.log.flush()

    # -- the end -----------------------------------------------------------------------

    def finish(self, summary: Summary, settings: Settings) -> CrawlResult:
        """The result, after the run; the URLs left when the budget ended it go to the
        ledger as ``budget``."""
        for entry in self.frontier.leftovers():
            self.ledger.skip(entry.url, "budget", entry.parent, entry.depth)
        left = self.ledger.counts["budget"]  # queued, and found after the budget was spent
        budget_ended = self.frontier.spent and left > 0
        return CrawlResult(summary, self.ledger.counts, budget_ended, left,
                           settings.crawl_delay_cap if self.options.robots else None)


def crawl_settings(settings: Settings, options: CrawlOptions) -> Settings:
    """The batch settings a crawl runs with: robots.txt as the crawl says, links on."""
    return settings.model_copy(update={"robots": options.robots, "links": True})


async def run_crawl(start_urls: Sequence[str], options: CrawlOptions, settings: Settings,
                    open_output: Callable[[], RunOutput], *,
                    ledger: Ledger | None = None, fetcher: Fetcher | None = None,
                    signals: Iterable[int] = (), log: FrontierLog | None = None,
                    resumed: Resumed | None = None, runner: Runner | None = None,
                    state: Crawl | None = None, warc_stem: str = PLAIN_STEM) -> CrawlResult:
    """Crawl into ``open_output``'s output (a sink's write and close); the CLI's way in.
    ``UsageError`` for a bad start URL or pattern, before anything is fetched. With
    ``log``, every URL queued is logged; with ``resumed``, the crawl goes on from where a
    stopped one left (:mod:`pipeline.crawl.resume`). ``runner`` replaces the batch
    command's handler pool (None: the pool). ``state``: a crawl made already (a shard's,
    :mod:`pipeline.crawl.shards`) instead of one over ``start_urls``; ``warc_stem``: the
    name of its ``--warc-out`` files."""
    starts = check_start_urls(start_urls)
    if state is None:
        state = Crawl(starts, options, ledger, log=log, resumed=resumed)
    settings = crawl_settings(settings, options)
    registry = load_registry(settings)

    async with contextlib.AsyncExitStack() as stack:
        if options.sitemap:
            documents: Fetcher = (fetcher if fetcher is not None else
                                  await stack.enter_async_context(document_fetcher(settings)))
            parse = in_thread(settings.max_bytes, settings.handler_timeout)

            def seeding(origin: str) -> None:
                state.spawn(lambda: state.seed_sitemaps(origin, documents, parse))

            state.seeding = seeding
            if resumed is not None:
                for origin in state.unseeded(starts, resumed):
                    seeding(origin)
        try:
            summary = await extract_items((), open_output, settings,
                                          registry=registry, fetcher=fetcher,
                                          signals=signals, scheduler=state,
                                          warc_stem=warc_stem,
                                          redirect_guard=state.guard, review=state.take,
                                          runner=runner)
        finally:
            state.cancel_background()
    return state.finish(summary, settings)


async def crawl(start_urls: Sequence[str], options: CrawlOptions | None = None,
                settings: Settings | None = None, *,
                on_record: Callable[[Record], None] | None = None,
                ledger: Ledger | None = None,
                fetcher: Fetcher | None = None,
                runner: Runner | None = None) -> CrawlResult:
    """Crawl from ``start_urls``: each page's record to ``on_record``, or, without one,
    into the result's ``records``. Raises ``UsageError`` for a bad start URL or pattern.
    Pages are extracted in the batch command's handler pool unless ``runner`` is given
    (an :class:`~pipeline.extract.runners.InlineRunner`: in this process, nothing started)."""
    options = options or CrawlOptions()
    records: list[Record] = []
    write = on_record or records.append

    def open_output() -> RunOutput:
        return RunOutput(write, lambda: None)

    result = await run_crawl(start_urls, options, settings or Settings(), open_output,
                             ledger=ledger, fetcher=fetcher, runner=runner)
    result.records = records
    return result


@dataclass(frozen=True)
class MappedUrl:
    """One URL a map found: where and how."""

    url: str
    depth: int
    parent: str | None
    title: str | None
    via: str


async def map_site(start_urls: Sequence[str], options: CrawlOptions | None = None,
                   settings: Settings | None = None, *,
                   on_url: Callable[[MappedUrl], None] | None = None,
                   ledger: Ledger | None = None,
                   fetcher: Fetcher | None = None,
                   runner: Runner | None = None) -> tuple[list[MappedUrl], CrawlResult]:
    """The same discovery as :func:`crawl` (sitemaps and links, scope, rules, budget), but
    the URLs of the pages it found rather than their records."""
    found: list[MappedUrl] = []
    emit = on_url or found.append

    def on_record(record: Record) -> None:
        if record.ok:  # a page that failed is no URL of the site's map
            emit(mapped(record))

    result = await crawl(start_urls, options, settings, on_record=on_record, ledger=ledger,
                         fetcher=fetcher, runner=runner)
    return found, result


def mapped(record: Record) -> MappedUrl:
    """A crawled page's record as a map's URL (its final URL, where it redirected)."""
    return MappedUrl(url=record.final_url or record.url, depth=record.depth or 0,
                     parent=record.parent, title=record.title, via=record.via or "start")

