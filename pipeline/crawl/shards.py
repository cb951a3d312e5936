"""A crawl of several sites, sharded by host: each shard a single-process :class:`Crawl`
over the hosts it owns, the shards joined by an exchange (:mod:`pipeline.crawl.exchange`).

Shard K of N owns the hosts ``shard_of(host:port, N) == K`` (the batch shards' rule,
:func:`pipeline.batch.shards.plan.shard_of`): it fetches their pages, obeys their robots.txt
and keeps their seen-set. A URL (a link, a sitemap's URL), an alias (where a redirect led)
or a nofollow link whose host another shard owns is handed to that shard, which judges it
as its own crawl would: scope, rules, traps, depth, duplicates, and the ledger line — so
each URL is judged, fetched and written once. A start page's redirect target is taken into
every shard's scope. The page budget is global: a shard reserves places before it hands
pages to its engine and gives back those it did not use when it goes idle; the crawl ends
when every shard is idle and every handoff was received and judged.

Each shard writes its part of the batch command's shard directory (``merge`` reads it) and
its own frontier log beside it, ``part-K-of-N.frontier`` (JSON lines): what it queued, and every
handoff it sent (``{"x": url, "k": kind, "to": shard, ...}``) before the record of the page
it came from is written. ``--resume`` rebuilds each shard from its part and log and sends
the logged handoffs again; the receivers' seen-sets make that idempotent.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from pipeline.batch.engine import Summary
from pipeline.batch.input.sources import say
from pipeline.batch.output.output_dir import (
    OutputDir,
    manifest,
    open_output_dir,
    part_stem,
    read_manifest,
)
from pipeline.batch.run import RunOutput, open_sink, scan_output
from pipeline.batch.shards.plan import shard_of
from pipeline.core.errors import UsageError
from pipeline.core.models import Record
from pipeline.core.settings import Settings
from pipeline.crawl.exchange import BROADCAST, Exchange, Handoff
from pipeline.crawl.frontier import Frontier, Via
from pipeline.crawl.ledger import Ledger
from pipeline.crawl.resume import FrontierLog, Resumed, _json_lines, read_resume
from pipeline.crawl.run import Crawl, CrawlOptions, CrawlResult, run_crawl

RESERVE = 16  # places of the page budget a shard asks for at a time (at most its queue)


class ShardFrontier(Frontier):
    """A shard's frontier: it hands out pages only on places reserved from the global
    budget (``granted``); ``spent`` once the budget had no place left for it
    (``exhausted``) and its own places are used."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.granted = 0
        self.exhausted = False

    @property
    def room(self) -> bool:
        return self.handed < self.granted

    @property
    def spent(self) -> bool:
        return self.exhausted and self.handed >= self.granted


class ShardCrawl(Crawl):
    """Shard ``shard`` of ``shards`` of a crawl: its :class:`Crawl`, with URLs of other
    shards' hosts handed to them through ``exchange`` and the budget reserved there."""

    frontier: ShardFrontier

    def __init__(self, starts: Sequence[str], options: CrawlOptions, exchange: Exchange,
                 shard: int, shards: int, ledger: Ledger | None = None, *,
                 log: FrontierLog | None = None, resumed: Resumed | None = None) -> None:
        self.exchange = exchange
        self.shard, self.shards = shard, shards
        self.sent = 0  # handoffs sent (a broadcast: one per shard it reaches)
        self.received = 0  # handoffs received and judged
        self._handed_off: set[int] = set()  # what was sent already, once each
        self._ready = False  # while the base class queues the start pages: only ours
        self._over = False
        self._reserving: asyncio.Future[None] | None = None
        super().__init__(starts, options, ledger, log=log, resumed=resumed)
        self._ready = True
        self._step = shards  # shard K's records are K, K + N, K + 2N, …: unique across parts
        last = resumed.last_index if resumed is not None else -1
        self._index = last + shards if last >= 0 else shard
        self.frontier.granted = self.frontier.handed  # a resumed part's pages: counted
        exchange.on_mail = self.receive

    def _new_frontier(self, options: CrawlOptions) -> Frontier:
        return ShardFrontier(max_pages=options.max_pages, max_depth=options.max_depth,
                             max_per_prefix=options.max_pages_per_prefix, ledger=self.ledger)

    def owner(self, url: str) -> int:
        return shard_of(url, self.shards)

    def owns(self, url: str) -> bool:
        return self.owner(url) == self.shard

    def unseeded(self, starts: Sequence[str], resumed: Resumed) -> list[str]:
        return [origin for origin in super().unseeded(starts, resumed) if self.owns(origin)]

    # -- handing URLs to their shards ------------------------------------------------

    def hand(self, shard: int, handoff: Handoff) -> None:
        """Send ``handoff`` to ``shard``, logged first (``--resume`` sends it again)."""
        if self.log is not None:
            self.log.event(x=handoff.url, k=handoff.kind, to=shard, d=handoff.depth,
                           p=handoff.parent, v=handoff.via)
        self.exchange.send(shard, handoff)
        self.sent += self.shards - 1 if shard == BROADCAST else 1

    def _hand_once(self, handoff: Handoff) -> bool:
        """Hand ``handoff`` to the owner of its host, once per kind, URL (and for a URL
        found, whether a sitemap named it: depth 0 there); False when this shard owns it."""
        owner = self.owner(handoff.url)
        if owner == self.shard:
            return False
        if self._ready:
            key = hash((handoff.kind, handoff.url, handoff.via == "sitemap"))
            if key not in self._handed_off:
                self._handed_off.add(key)
                self.hand(owner, handoff)
        return True

    def discover(self, url: str, *, depth: int, parent: str | None, via: Via) -> None:
        if not self._hand_once(Handoff("url", url, depth, parent, via)):
            super().discover(url, depth=depth, parent=parent, via=via)

    def known(self, alias: str, identity: str | None = None) -> bool:
        self._hand_once(Handoff("alias", alias))
        return super().known(alias, identity)  # and here, for this page's duplicates

    def nofollow(self, link: str, parent: str | None, depth: int) -> None:
        if not self._hand_once(Handoff("nofollow", link, depth, parent)):
            super().nofollow(link, parent, depth)

    def widen(self, url: str) -> None:
        super().widen(url)
        if self.shards > 1:
            self.hand(BROADCAST, Handoff("scope", url))

    def replay(self, handoffs: Iterable[tuple[int, Handoff]]) -> None:
        """Send again the handoffs a stopped run logged (``--resume``)."""
        for shard, handoff in handoffs:
            self._handed_off.add(hash((handoff.kind, handoff.url, handoff.via == "sitemap")))
            self.exchange.send(shard, handoff)
            self.sent += self.shards - 1 if shard == BROADCAST else 1

    def receive(self, handoffs: Sequence[Handoff]) -> None:
        """Handoffs from other shards, judged as this shard's own finds."""
        for handoff in handoffs:
            if handoff.kind == "url":
                via: Via = handoff.via if handoff.via in ("start", "sitemap", "link",
                                                          "redirect") else "link"  # type: ignore[assignment]
                super().discover(handoff.url, depth=handoff.depth, parent=handoff.parent,
                                 via=via)
            elif handoff.kind == "alias":
                super().known(handoff.url)
            elif handoff.kind == "scope":
                self.scope.add(handoff.url)
                if self.log is not None:
                    self.log.event(s=handoff.url)
            elif handoff.kind == "nofollow":
                super().nofollow(handoff.url, handoff.parent, handoff.depth)
            self.received += 1
        if self.log is not None:
            self.log.flush()
        self._changed.set()

    # -- the scheduler port ------------------------------------------------------------

    async def pending(self) -> bool:
        frontier = self.frontier
        while not self._over:
            if len(frontier) and frontier.room:
                return True
            if len(frontier) and not frontier.exhausted:
                if self._reserving is None:
                    self._reserving = asyncio.ensure_future(
                        self._reserve(min(len(frontier), RESERVE)))
                # shielded: a cancelled wait (the engine stopping it) loses no place
                await asyncio.shield(self._reserving)
                continue
            self._changed.clear()
            if self._background or frontier.in_flight:  # its end may bring more work
                await self._changed.wait()
                continue
            await self._idle()
        return False

    async def _reserve(self, wanted: int) -> None:
        try:
            granted = await self.exchange.reserve(wanted)
            self.frontier.granted += granted
            self.frontier.exhausted = granted < wanted  # none left there for now
        finally:
            self._reserving = None

    async def _idle(self) -> None:
        """Nothing to do here: unused places go back, and the shard waits for mail, for
        places given back (when URLs wait for them), or for the crawl's end."""
        frontier = self.frontier
        give_back = frontier.granted - frontier.handed
        frontier.granted -= give_back
        changed = asyncio.ensure_future(self._changed.wait())
        idle = asyncio.ensure_future(self.exchange.idle(self.sent, self.received, give_back,
                                                        blocked=bool(len(frontier))))
        try:
            await asyncio.wait((changed, idle), return_when=asyncio.FIRST_COMPLETED)
        finally:
            changed.cancel()
            idle.cancel()
        if idle.done() and not idle.cancelled():
            if idle.result():
                self._over = True
            else:
                frontier.exhausted = False  # places came back: ask again


# -- a shard's run --------------------------------------------------------------------


@dataclass(frozen=True)
class CrawlShardJob:
    """What one shard's run needs (picklable: it crosses into processes and Ray tasks)."""

    output: OutputDir
    shard: int
    settings: Settings
    options: CrawlOptions
    starts: tuple[str, ...]
    skipped: str | None = None  # the ledger file, shared by the shards (whole lines)
    resume: bool = False

    @property
    def name(self) -> str:
        return f"shard {self.shard} of {self.output.shards}"


def frontier_log(output: OutputDir, shard: int) -> Path:
    """Shard ``shard``'s frontier log, beside its part."""
    return output.path / f"{part_stem(shard, output.shards)}.frontier"  # not a part-*.jsonl


def logged_handoffs(path: Path) -> list[tuple[int, Handoff]]:
    """The handoffs a shard's frontier log holds, in order."""
    found = []
    for event in _json_lines(str(path)):
        if isinstance(url := event.get("x"), str) and event.get("k") in (
                "url", "alias", "scope", "nofollow"):
            found.append((int(event.get("to", 0)),
                          Handoff(event["k"], url, int(event.get("d") or 0), event.get("p"),
                                  str(event.get("v") or "link"))))
    return found


def records_done(output: OutputDir) -> int:
    """The pages the parts hold (a torn last line cut off first): the budget they took."""
    done = 0
    for shard in range(output.shards):
        for path in (output.partial(shard), output.part(shard)):
            if path.exists():
                done += len(scan_output(str(path))[0])
    return done


def open_ledger(path: str | None) -> Ledger:
    """The ledger of a shard: lines appended whole (line-buffered, one write each), so the
    shards can share the file."""
    if path is None:
        return Ledger()
    return Ledger(open(path, "a", encoding="utf-8", buffering=1))


async def run_crawl_shard(job: CrawlShardJob, exchange: Exchange, *,
                          on_record: Callable[[Record], None] | None = None,
                          signals: Iterable[int] = ()) -> CrawlResult:
    """Shard ``job.shard``'s crawl into its part, then its marker (unless stopped)."""
    output, shard = job.output, job.shard
    with output.writing(shard):
        part = output.resumable_part(shard)
        log_file = frontier_log(output, shard)
        resumed = None
        if job.resume:
            scan_output(str(part))  # a torn last line (kill -9) is cut off first
            resumed = read_resume(str(part), str(log_file))
        held = len(resumed.done) if resumed is not None else 0
        ledger = open_ledger(job.skipped)
        log = FrontierLog(str(log_file), append=job.resume)
        try:
            state = ShardCrawl(job.starts, job.options, exchange, shard, output.shards,
                               ledger, log=log, resumed=resumed)
            if job.resume:
                state.replay(logged_handoffs(log_file))

            def open_output() -> RunOutput:
                sink = open_sink(part, append=True)
                if on_record is None:
                    return RunOutput(sink.write, sink.close)

                def write(record: Record) -> None:
                    sink.write(record)
                    on_record(record)

                return RunOutput(write, sink.close)

            result = await run_crawl(job.starts, job.options, job.settings, open_output,
                                     ledger=ledger, signals=signals, log=log,
                                     resumed=resumed, state=state,
                                     warc_stem=part_stem(shard, output.shards))
        finally:
            exchange.close()
            ledger.close()
            log.close()
        if not result.summary.interrupted:
            output.complete(shard, {"shard": shard, "shards": output.shards,
                                    "records": held + result.summary.records})
    return result


def combine_results(results: Iterable[CrawlResult], summary: Summary,
                    settings: Settings, options: CrawlOptions) -> CrawlResult:
    """The shards' results as one: ``summary`` (theirs, summed), skips by reason summed,
    whether the budget ended the crawl and how many in-scope URLs it left."""
    skipped: Counter[str] = Counter()
    budget_ended, left = False, 0
    for result in results:
        skipped.update(result.skipped)
        budget_ended |= result.budget_ended
        left += result.left
    return CrawlResult(summary, skipped, budget_ended, left,
                       settings.crawl_delay_cap if options.robots else None)


def clear_ledger(path: str | None, *, resume: bool) -> None:
    """A new crawl starts the shared ledger file empty (a resumed one appends to it)."""
    if path is not None and not resume:
        try:
            open(path, "w").close()
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror}") from exc


@dataclass(frozen=True)
class ShardedCrawl:
    """A sharded crawl as the command line asks for it: ``shards`` shards writing the
    directory ``output`` (``--processes N``, or ``engine`` ray), from ``starts``."""

    starts: tuple[str, ...]
    options: CrawlOptions
    settings: Settings
    output: str
    shards: int | None  # None: a resumed run's count (its manifest), or Ray's default
    engine: str = "processes"  # or "ray"
    resume: bool = False
    overwrite: bool = False
    skipped: str | None = None
    address: str | None = None  # engine ray: the cluster (None: a local Ray)

    def prepare(self, shards: int | None) -> OutputDir:
        """The output directory, checked (``--resume``: the same run) or cleared, with its
        manifest: the start URLs and crawl options are the run's items."""
        if shards is None:
            found = read_manifest(Path(self.output)) if self.resume else None
            if found is None:
                raise UsageError("the number of shards is not known: give --shards N")
            shards = int(found["shards"])
        items = {"urls": list(self.starts), "crawl": asdict(self.options)}
        wanted = manifest(shards, None, self.settings, json.loads(json.dumps(items)))
        output = open_output_dir(self.output, wanted, resume=self.resume,
                                 replacing=self.overwrite)
        if not self.resume:
            for shard in range(shards):
                output.clear(shard)
                frontier_log(output, shard).unlink(missing_ok=True)
        output.check_idle(range(shards))  # an earlier run's writer still running: refused
        clear_ledger(self.skipped, resume=self.resume)
        return output

    def begin(self, shards: int | None) -> tuple[OutputDir, int]:
        """The output directory (:meth:`prepare`) and the pages its parts hold already
        (``--resume``: they took their places in the budget)."""
        output = self.prepare(shards)
        owners = {shard_of(url, output.shards) for url in self.starts}
        if output.shards > 1 and len(owners) == 1 and self.options.scope in ("origin",
                                                                              "prefix"):
            say(self.settings.quiet, f"every start page's host is shard {owners.pop()}'s, and "
                f"--scope {self.options.scope} keeps the crawl there (unless a start page "
                "redirects): one shard does the work (a sharded crawl pays on many hosts)")
        used = records_done(output) if self.resume else 0
        if used:
            say(self.settings.quiet,
                f"resuming: {used} pages already in the parts of {output.path}")
        return output, used

    def result(self, results: Iterable[CrawlResult], summary: Summary,
               used: int) -> CrawlResult:
        """The shards' results as one (``used``: the pages done before this run)."""
        summary.skipped += used
        return combine_results(results, summary, self.settings, self.options)

    def jobs(self, output: OutputDir, settings: Settings) -> list[CrawlShardJob]:
        return [CrawlShardJob(output, shard, settings, self.options, self.starts,
                              self.skipped, self.resume) for shard in range(output.shards)]

