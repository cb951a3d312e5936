"""A batch run in this process: input items (and the URLs of its sitemaps and feeds) through
the engine into a JSONL or Parquet sink.

:func:`extract_items` is the engine with its handler pool, providers and stop signals; it
serves the plain command (:func:`run_batch`: one input, one output file or stdout) and each
shard of a sharded run (:mod:`pipeline.batch.shards.shard_run`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from handlers import HandlerRegistry
from pipeline.batch.dedup import Deduplicator
from pipeline.batch.engine import BatchEngine, EngineSettings, Summary, calm_collector
from pipeline.batch.extract_stage import batch_extract
from pipeline.batch.input.documents import in_thread, in_worker
from pipeline.batch.input.expand import Expander
from pipeline.batch.input.items import InputItem
from pipeline.batch.input.run_input import ExpandOptions, naming
from pipeline.batch.input.sources import document_fetcher, run_batches, say
from pipeline.batch.output.markdown_dir import MarkdownDir
from pipeline.batch.output.output_dir import part_stem
from pipeline.batch.output.parquet_sink import is_parquet
from pipeline.batch.output.sinks import DoneSet, JsonlSink, StoredText, scan_done
from pipeline.batch.output.sinks import stored_texts as stored_texts_jsonl
from pipeline.batch.pool import ProcessRunner
from pipeline.batch.progress import ProgressBar
from pipeline.batch.run_plan import RunPlan
from pipeline.batch.scheduler import Scheduler, StreamScheduler
from pipeline.core.errors import PROG, PipelineError, UsageError
from pipeline.core.models import Record
from pipeline.core.settings import Settings
from pipeline.extract.language import load_model
from pipeline.extract.native import NativeExtractor, load_registry
from pipeline.extract.runners import Runner
from pipeline.fetch.base import Fetcher
from pipeline.fetch.client import HttpFetcher, RedirectGuard
from pipeline.fetch.credentials import CredentialScope
from pipeline.fetch.local_files import LocalSource

if TYPE_CHECKING:
    from pipeline.batch.output.parquet_sink import ParquetSink
    from pipeline.batch.output.warc_out import WarcWriter

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
OnRecord = Callable[[Record, Summary], None]


def scan_output(path: str) -> tuple[DoneSet, int]:
    """What an earlier run wrote to ``path`` (see :func:`pipeline.batch.output.sinks.scan_done`)."""
    if is_parquet(path):
        from pipeline.batch.output.parquet_sink import scan_parquet

        return scan_parquet(path)
    try:
        return scan_done(path)
    except OSError as exc:
        raise UsageError(f"cannot resume from {path}: {exc.strerror}") from exc


def stored_texts(path: str | os.PathLike[str]) -> Iterator[StoredText]:
    """What the records of an earlier run's output say for ``--dedup``, in their order."""
    if is_parquet(path):
        from pipeline.batch.output.parquet_sink import stored_texts_parquet

        return stored_texts_parquet(path)
    return stored_texts_jsonl(path)


def resuming(path: str | os.PathLike[str], done: DoneSet, dropped: int) -> str:
    """What a resumed run found in its output, for stderr."""
    return (f"resuming: {len(done)} records already in {path}"
            + (f" (dropped a torn last line of {dropped} bytes)" if dropped else "")
            + (f"; {done.invalid} lines are not whole records: their URLs are done again "
               "(the lines stay)" if done.invalid else ""))


def open_sink(path: str | os.PathLike[str] | None, *,
              append: bool) -> JsonlSink | ParquetSink:
    """A sink writing to ``path`` (stdout when None), chosen by its suffix: JSONL, or Parquet
    for ``.parquet``; a ``UsageError`` if it cannot open."""
    if path is None:
        return JsonlSink(sys.stdout.buffer, background=True)
    if is_parquet(path):
        from pipeline.batch.output.parquet_sink import ParquetSink

        return ParquetSink(path, append=append)
    try:
        return JsonlSink.open(path, append=append, background=True)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from exc


def _install_stop(stop: asyncio.Event, signals: Iterable[int]) -> Callable[[], None]:
    """The signals set ``stop``; a second one ends at once. Returns the undo."""
    loop = asyncio.get_running_loop()
    signals = tuple(signals)

    def on_signal() -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    for number in signals:
        loop.add_signal_handler(number, on_signal)

    def undo() -> None:
        for number in signals:
            loop.remove_signal_handler(number)

    return undo


PLAIN_STEM = part_stem(0, 1)  # a plain run's WARC files are those of part 0 of 1


def warc_writer(settings: Settings, stem: str) -> WarcWriter | None:
    """The WARC writer of ``--warc-out`` for the files named ``stem`` (None without it);
    not opened yet."""
    if settings.warc_out is None:
        return None
    from pipeline.batch.output.warc_out import WarcWriter

    robots = "obey" if settings.robots else "ignore"
    return WarcWriter(settings.warc_out, stem, max_bytes=settings.warc_max_bytes,
                      info={"robots": robots, "http-header-user-agent": settings.user_agent})


@dataclass
class RunOutput:
    """An opened output: ``write`` takes each record, ``close`` ends the output, ``done``
    names the records it held already (``--resume``; None: start afresh) and ``path`` is
    where they are (read back by ``--dedup``)."""

    write: Callable[[Record], None]
    close: Callable[[], None]
    done: DoneSet | None = None
    path: str | os.PathLike[str] | None = None


def marker(settings: Settings, output: RunOutput) -> Callable[[Record], Record] | None:
    """``--dedup``'s marking of each record before it is written, knowing the records the
    output holds already; None without ``--dedup``."""
    if settings.dedup == "off":
        return None
    deduplicator = Deduplicator(settings.dedup, drop=settings.drop_duplicates)
    if output.done and output.path is not None:
        for index, content, original in stored_texts(output.path):
            deduplicator.remember(index, content, original)
    return deduplicator.mark


Review = Callable[[Record], Record | None]


def with_markdown_dir(settings: Settings, write: Callable[[Record], None]
                      ) -> Callable[[Record], None]:
    """``write``, and with ``--markdown-dir`` each page's markdown file after its record."""
    if settings.markdown_dir is None:
        return write
    pages = MarkdownDir(settings.markdown_dir)

    def both(record: Record) -> None:
        write(record)
        pages.write(record)

    return both


def reviewed(review: Review | None, mark: Callable[[Record], Record] | None) -> Review | None:
    """``review`` (a crawl's), then ``--dedup``'s ``mark`` on what it lets through."""
    if review is None or mark is None:
        return review or mark

    def both(record: Record) -> Record | None:
        kept = review(record)
        return None if kept is None else mark(kept)

    return both


def engine_settings(settings: Settings) -> EngineSettings:
    """The engine's slice: with ``--dedup``, records are written (and so marked) in input
    order, so the earliest line of two copies is the original whichever finishes first, and
    a stopped run leaves an input-order prefix for ``--resume``."""
    return EngineSettings(concurrency=settings.concurrency, per_host=settings.per_host,
                          ordered=settings.ordered or settings.dedup != "off",
                          caching=settings.cache_dir is not None)


async def extract_items(items: Iterable[InputItem], open_output: Callable[[], RunOutput],
                        settings: Settings, *, registry: HandlerRegistry,
                        fetcher: Fetcher | None = None, on_record: OnRecord | None = None,
                        signals: Iterable[int] = STOP_SIGNALS,
                        expand: ExpandOptions | None = None,
                        local_files: LocalSource | None = None,
                        credential_scope: CredentialScope | None = None,
                        warc_stem: str = PLAIN_STEM,
                        scheduler: Scheduler | None = None,
                        redirect_guard: RedirectGuard | None = None,
                        review: Review | None = None,
                        runner: Runner | None = None) -> Summary:
    """One record per item to the output (items it holds already are skipped), then one per
    URL the sitemaps and feeds of ``expand`` name, until the items end or one of ``signals``
    stops the run. ``open_output`` is called last, once the fetcher, providers and
    compressor are open: what they find wrong costs the output nothing; with
    ``--warc-out`` the WARC files named ``warc_stem`` open (and are repaired) right after
    it. Credentials go only to what ``credential_scope`` allows (None: every URL). Raises
    ``PipelineError('config')`` when the handler workers cannot start, and the WARC
    writer's ``OutputError`` before the first record after a failed WARC write.

    A crawl passes its frontier as ``scheduler`` (then ``items`` is empty: the scheduler
    is the input), a ``redirect_guard`` that keeps each redirect hop in its scope, and
    ``review``, which sees each record first and may withhold it (None: not written, not
    counted). ``runner`` replaces the handler pool (an agent's crawl extracts in-process:
    :class:`~pipeline.extract.runners.InlineRunner`)."""
    stop = asyncio.Event()
    start_failures: list[PipelineError] = []

    def stop_on_start_failure(error: PipelineError) -> None:
        start_failures.append(error)  # workers that cannot start: config, exit 2
        stop.set()

    if runner is None:
        runner = ProcessRunner(settings.workers, settings.handler_timeout,
                               tuple(settings.handlers), on_start_failure=stop_on_start_failure,
                               warm_up=load_model if settings.detect_lang else None)
    archive = warc_writer(settings, warc_stem) if fetcher is None else None
    async with contextlib.AsyncExitStack() as fetchers:
        expanding = expand is not None and bool(expand.roots)
        documents = fetcher  # an injected fetcher serves the documents too
        if fetcher is None and (expanding or credential_scope is not None
                                or archive is not None or redirect_guard is not None):
            fetcher = await fetchers.enter_async_context(HttpFetcher(
                settings, early_reject=registry.rejects_early,
                credential_scope=credential_scope, archive=archive,
                redirect_guard=redirect_guard))
            if expanding:  # two fetchers, one per-host budget
                documents = await fetchers.enter_async_context(
                    document_fetcher(settings, fetcher.gate, credential_scope, archive))
        elif redirect_guard is not None and isinstance(fetcher, HttpFetcher):
            fetcher = fetcher.guarding_redirects(redirect_guard)  # a handed fetcher keeps scope
        expander = None
        if expanding:
            assert expand is not None and documents is not None
            expander = Expander(expand, documents, settings.max_bytes,
                                parse=in_worker(runner, settings.max_bytes)
                                if isinstance(runner, ProcessRunner)
                                else in_thread(settings.max_bytes, settings.handler_timeout))
        native = NativeExtractor(settings, fetcher=fetcher, runner=runner, registry=registry,
                                 local_files=local_files)
        async with batch_extract(settings, native) as extract:
            output = open_output()
            write = with_markdown_dir(settings, output.write)
            if archive is not None:
                fetchers.callback(archive.close)
                try:
                    archive.open()
                except BaseException:
                    output.close()
                    raise

                def write(record: Record, archive: WarcWriter = archive,
                          inner: Callable[[Record], None] = write) -> None:
                    archive.raise_failure()  # no record after a response the WARC lacks
                    inner(record)
            try:
                engine = BatchEngine(engine_settings(settings), extract, write,
                                     done=output.done or None, on_record=on_record,
                                     mark=reviewed(review, marker(settings, output)))
                undo = _install_stop(stop, signals)
                try:
                    with calm_collector():
                        async with (StreamScheduler(run_batches(items, expander))
                                    if scheduler is None
                                    else contextlib.nullcontext(scheduler)) as work:
                            summary = await engine.run(work, stop)
                finally:
                    undo()
                if archive is not None:
                    archive.raise_failure()
            finally:
                output.close()
    if start_failures:
        raise start_failures[0]
    if expander is not None:
        say(settings.quiet, expander.stats.describe(expander.options))
    return summary


async def run_batch(plan: RunPlan, *, fetcher: Fetcher | None = None) -> Summary:
    """The plain batch command: ``plan.input`` to ``plan.output`` (stdout when None),
    checked beforehand by :func:`pipeline.batch.run_check.check_run`."""
    settings, run_input, path = plan.settings, plan.input, plan.output
    registry = load_registry(settings)
    scope = run_input.credential_scope(settings.credential_hosts)
    with contextlib.ExitStack() as cleanup:
        items = cleanup.enter_context(run_input.file_items())
        show = not settings.quiet and sys.stderr.isatty()
        progress = ProgressBar(run_input.count() if show else None, enabled=show)
        cleanup.callback(progress.close)

        if settings.warc_out is not None and plan.overwrite:
            from pipeline.batch.output.warc_out import clear_warc_files

            clear_warc_files(settings.warc_out, PLAIN_STEM)

        def open_output() -> RunOutput:
            resumed = path if plan.resume else None  # checked: --resume has an output
            done, dropped = scan_output(resumed) if resumed else (None, 0)
            sink = open_sink(path, append=plan.resume)
            if done is not None and resumed:
                progress.shrink(len(done))  # what this run has left to do
                if not settings.quiet:
                    print(f"{PROG}: {resuming(resumed, done, dropped)}", file=sys.stderr)
            return RunOutput(sink.write, sink.close, done, path)

        return await extract_items(naming(items, scope), open_output, settings,
                                   registry=registry, fetcher=fetcher,
                                   on_record=progress.update, expand=run_input.expand,
                                   local_files=run_input.local_files, credential_scope=scope)
