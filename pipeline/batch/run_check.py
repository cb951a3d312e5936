"""The one place a batch run is checked before anything is opened: its options, settings,
handlers, network policy, providers, compressor, input and output.

The command line calls :func:`check_run` and only then a runner, which opens its output last
of all: after the fetcher, the providers and the compressor (:func:`pipeline.batch.run.
extract_items`), so even a problem found only while those open costs the output nothing.
"""

from __future__ import annotations

import os
import sys

from pipeline.batch.output.output_check import OutputTarget, check_output
from pipeline.batch.output.parquet_sink import is_parquet
from pipeline.batch.run_plan import RunMode, RunPlan
from pipeline.core.errors import PROG, UsageError
from pipeline.core.slices import CorpusSettings, ReadSettings


def check_mode(plan: RunPlan) -> None:
    """A sharded run writes a directory of JSONL parts: its output says so."""
    if not plan.sharded:
        return
    check_sharded_output(plan.output, "--shard" if plan.mode == "shard" else f"--{plan.mode}")


def check_sharded_output(output: str | None, flag: str) -> None:
    """The output of a run sharded by ``flag``: a directory, for JSONL parts."""
    if is_parquet(output):
        raise UsageError("a sharded run writes JSONL parts; to get Parquet, merge them: "
                         f"{PROG} merge OUT_DIR -o OUT.parquet")
    if not output:
        raise UsageError(f"a sharded run ({flag}) writes a directory: give -o OUT_DIR")
    if looks_like_a_file(output):
        raise UsageError(f"a sharded run writes a directory of parts, and {output} names "
                         f"a file: give -o OUT_DIR, then {PROG} merge OUT_DIR -o {output}")


# Names a sharded run's directory should not have: they promise one file of records.
FILE_SUFFIXES = (".jsonl", ".json", ".ndjson", ".txt", ".csv", ".tsv", ".gz")


def looks_like_a_file(path: str) -> bool:
    """A new output named like a file (``out.jsonl``); what exists is judged as it is."""
    return path.lower().endswith(FILE_SUFFIXES) and not os.path.exists(path)


def output_target(plan: RunPlan) -> OutputTarget:
    return OutputTarget(plan.output, directory=plan.sharded, shard=plan.shard)


def check_input(path: str | None) -> None:
    if path is None or path == "-":  # None: only sitemaps and feeds
        return
    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc


def check_config(settings: ReadSettings) -> list[str]:
    """What the settings ask for that is judged only when it is used: the handlers, the
    networks and proxies, the cookie file, the providers, the compressor and the browser
    (``PipelineError('config')``); returns the extract providers' chain. Nothing is opened or
    contacted."""
    from pipeline.batch.extract_stage import compressor_config
    from pipeline.extract.native import load_registry
    from pipeline.fetch.policy import NetworkPolicy
    from pipeline.fetch.proxy import proxy_policy
    from pipeline.providers.registry import default_registry

    load_registry(settings)
    NetworkPolicy.from_settings(settings)
    proxy_policy(settings)
    if settings.cookie_file:
        from pipeline.fetch.cookies import CookieFile

        CookieFile.load(settings.cookie_file)
    resolution = default_registry().resolve("extract", settings)
    for warning in resolution.warnings:
        if not settings.quiet:
            print(f"{PROG}: warning: {warning}", file=sys.stderr)
    compressor_config(settings)
    if settings.render != "never":
        from pipeline.browser.locate import check_rendering

        check_rendering(settings)
    return resolution.chain


def check_corpus(mode: RunMode, settings: CorpusSettings) -> None:
    """``--dedup``, ``--drop-duplicates``, ``--lang`` and language detection: what they
    need (``UsageError``, ``PipelineError('config')``)."""
    if settings.languages and not settings.detect_lang:
        raise UsageError("--lang keeps languages it detects: drop --no-detect-lang")
    if settings.drop_duplicates and settings.dedup == "off":
        raise UsageError("--drop-duplicates goes with --dedup exact|near")
    if settings.drop_duplicates and mode != "plain":
        raise UsageError("a sharded run marks duplicates within each shard; drop them when "
                         f"merging: {PROG} merge OUT_DIR --dedup {settings.dedup} "
                         "--drop-duplicates")
    if settings.dedup == "near":
        from pipeline.batch.dedup import require_rensa

        require_rensa()
    if settings.detect_lang:
        from pipeline.extract.language import check_installed

        check_installed()


def check_run(plan: RunPlan, *, injected_fetcher: bool = False) -> None:
    """Every check of a batch run. Raises ``UsageError`` or ``PipelineError('config')`` —
    before anything is opened."""
    settings, run_input = plan.settings, plan.input
    check_mode(plan)
    if injected_fetcher and plan.mode in ("processes", "ray"):
        raise UsageError("an injected fetcher works in this process only (no --processes, "
                         "no --engine ray)")
    if run_input.format != "warc":  # its paths (directories too) were checked
        check_input(run_input.path)
    check_output(output_target(plan), input_path=run_input.path, resume=plan.resume,
                 overwrite=plan.overwrite)
    if settings.warc_out is not None:
        check_warc(plan, injected_fetcher=injected_fetcher)
    if run_input.format == "warc" and settings.render != "never":
        raise UsageError("--input-format warc makes no request, and a rendered page loads "
                         f"its scripts from the network: drop --render {settings.render}")
    chain = check_config(settings)
    if run_input.format == "warc" and chain != ["native"]:
        raise UsageError("--input-format warc extracts with our own pipeline: drop "
                         f"--extract-backend/--backend ({', '.join(chain)})")
    check_corpus(plan.mode, settings)


def check_warc(plan: RunPlan, *, injected_fetcher: bool = False) -> None:
    """``--warc-out``: fastwarc installed, something to archive, and the directory's earlier
    files neither lost nor mixed in unasked."""
    from pipeline.batch.output.output_dir import part_stem
    from pipeline.batch.output.warc_out import check_warc_out, require_fastwarc

    settings = plan.settings
    assert settings.warc_out is not None
    require_fastwarc("--warc-out")
    if plan.input.format == "warc":
        raise UsageError("--warc-out archives the responses a run fetches; a run over WARC "
                         "input fetches none")
    if injected_fetcher:
        raise UsageError("--warc-out archives what our fetcher receives: not with an "
                         "injected fetcher")
    stem: str | None = None
    if plan.mode == "plain":
        stem = part_stem(0, 1)
    elif plan.shard is not None:
        stem = part_stem(*plan.shard)
    check_warc_out(settings.warc_out, stem, resume=plan.resume, overwrite=plan.overwrite)
