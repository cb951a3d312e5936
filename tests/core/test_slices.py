"""Settings slices: every field a slice names is a field of the settings, a part takes any
object with its slice's fields, not only the whole settings, and only the composition roots
name the whole settings."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import pytest

import pipeline
from pipeline.batch.output.output_dir import OUTPUT_SETTINGS, differences, manifest
from pipeline.batch.run_check import check_corpus
from pipeline.core import slices
from pipeline.core.errors import UsageError
from pipeline.core.settings import Settings
from pipeline.store.cache import open_cache
from pipeline.store.paging import text_identity

SLICES = [cls for _, cls in inspect.getmembers(slices, inspect.isclass)
          if cls.__module__ == slices.__name__]

# The modules that name the whole settings: the model itself, the package's exports, the
# composition roots (the command lines, the run plan and a batch run, a shard's run, the
# library's entry points and tools, the long-lived runtime and the MCP server) and the crawl,
# which copies the settings to change them. Every other part takes a slice
# (docs/architecture.md, "Settings slices").
ROOTS = {
    "pipeline/core/settings.py", "pipeline/__init__.py",
    "pipeline/cli/command.py", "pipeline/cli/search.py", "pipeline/cli/crawl.py",
    "pipeline/batch/run_plan.py", "pipeline/batch/run.py",
    "pipeline/batch/shards/shard_run.py",
    "pipeline/agent/kernel.py", "pipeline/agent/tools.py", "pipeline/agent/runtime.py",
    "pipeline/agent/mcp_server.py", "pipeline/agent/crawl.py",
    "pipeline/crawl/run.py", "pipeline/crawl/provider.py",
    "pipeline/crawl/shards.py",  # a sharded crawl's shard job, as the batch's shard_run
}


def only(protocol: type, settings: Settings) -> object:
    """An object with ``protocol``'s fields alone, valued as in ``settings``."""
    names = slices.fields_of(protocol)
    cls = dataclasses.make_dataclass(f"{protocol.__name__}Only", sorted(names), frozen=True)
    return cls(**{name: getattr(settings, name) for name in names})


@pytest.mark.parametrize("protocol", SLICES, ids=lambda cls: cls.__name__)
def test_a_slice_names_fields_of_the_settings(protocol):
    named = set(slices.fields_of(protocol))
    assert named and named <= set(Settings.model_fields)


def test_a_part_takes_its_slice_alone():
    settings = Settings(pdf_max_pages=7, render="auto")
    assert text_identity(only(slices.TextSettings, settings), ["native"]) \
        == text_identity(settings, ["native"])


def test_the_cache_takes_its_slice_alone(tmp_path):
    settings = Settings(cache_dir=str(tmp_path), cache_ttl=5, cache_max_mb=1)
    cache = open_cache(only(slices.CacheSettings, settings), batch=True)
    try:
        assert cache.enabled and cache.ttl == 5
    finally:
        cache.close()


def test_the_corpus_check_takes_its_slice_alone():
    settings = Settings(drop_duplicates=True)
    with pytest.raises(UsageError, match="--drop-duplicates goes with --dedup"):
        check_corpus("plain", only(slices.CorpusSettings, settings))


def test_a_manifest_keeps_the_record_settings_as_the_model_dumps_them():
    settings = Settings(max_chars=5000, handlers=["a:b"], languages=["en"], dedup="exact",
                        instruction="short")
    kept = manifest(1, None, only(slices.RecordSettings, settings))["settings"]
    assert kept == settings.model_dump(mode="json", include=set(OUTPUT_SETTINGS))
    wanted = manifest(1, None, settings)
    older = {**wanted, "settings": {"max_chars": 100_000}}  # the rest: their defaults
    assert differences(older, wanted) == [
        "--max-chars 100000 there, 5000 here", '--handler [] there, ["a:b"] here',
        '--instruction null there, "short" here', '--lang [] there, ["en"] here',
        '--dedup "off" there, "exact" here']


def test_only_the_composition_roots_name_the_whole_settings():
    top = Path(pipeline.__file__).resolve().parent.parent
    naming = {path.relative_to(top).as_posix()
              for package in ("pipeline", "handlers") for path in (top / package).rglob("*.py")
              if re.search(r"\bSettings\b", path.read_text(encoding="utf-8"))}
    assert naming <= ROOTS, sorted(naming - ROOTS)
    # issue 35: at most 15 modules take the whole settings; the sharded crawl (issue 32)
    # added a 16th root, its shard job
    assert len(ROOTS) <= 16
