import asyncio
import json
import logging
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pipeline.core.models import ErrorInfo, Record
from pipeline.core.settings import Settings
from pipeline.fetch.base import Validators
from pipeline.store.cache import DB_NAME, TextCache, cache_key, open_cache


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def page(url: str, content: str = "full text") -> Record:
    return Record(url=url, ok=True, content=content, chars=len(content), format="markdown")


def test_roundtrip_keeps_full_record(tmp_path):
    cache = TextCache(tmp_path)
    record = page("https://a.test/", "x" * 10_000).model_copy(update={"title": "T"})
    cache.put_sync("k", record)
    assert cache.get_sync("k") == record


def test_ttl_expiry(tmp_path):
    clock = Clock()
    cache = TextCache(tmp_path, ttl=60, clock=clock)
    cache.put_sync("k", page("https://a.test/"))
    clock.now += 59
    assert cache.get_sync("k") is not None
    clock.now += 1
    assert cache.get_sync("k") is None
    assert cache.stats() == (0, 0)  # the expired row is gone, not just hidden


def test_size_cap_evicts_oldest(tmp_path):
    clock = Clock()
    one = len(page("https://a.test/0", "y" * 1000).model_dump_json().encode())
    cache = TextCache(tmp_path, max_bytes=3 * one, clock=clock)
    for i in range(5):
        clock.now += 1
        cache.put_sync(f"k{i}", page(f"https://a.test/{i}", "y" * 1000))
    entries, size = cache.stats()
    assert size <= 3 * one
    assert entries == 3
    kept = [cache.get_sync(f"k{i}") is not None for i in range(5)]
    assert kept == [False, False, True, True, True]


def test_entry_bigger_than_cap_is_not_stored(tmp_path):
    cache = TextCache(tmp_path, max_bytes=100)
    cache.put_sync("k", page("https://a.test/", "z" * 500))
    assert cache.get_sync("k") is None


def test_key_includes_options_but_not_window():
    base = cache_key("https://a.test/", format="markdown")
    assert base != cache_key("https://a.test/", format="text")
    assert base != cache_key("https://b.test/", format="markdown")
    assert base != cache_key("https://a.test/", format="markdown", handler_options={"x": 1})
    assert base == cache_key("https://a.test/", format="markdown", max_chars=500, offset=9)


async def test_single_flight_loads_once(tmp_path):
    cache = TextCache(tmp_path)
    calls = 0
    gate = asyncio.Event()

    async def loader() -> Record:
        nonlocal calls
        calls += 1
        await gate.wait()
        return page("https://a.test/")

    waiters = [asyncio.create_task(cache.get_or_load("k", loader)) for _ in range(10)]
    await asyncio.sleep(0)
    gate.set()
    results = await asyncio.gather(*waiters)
    assert calls == 1
    assert all(r.content == "full text" for r in results)
    # a later call is served from disk
    again = await cache.get_or_load("k", loader)
    assert calls == 1 and again.content == "full text"


async def test_single_flight_without_storage_and_failures_not_stored():
    cache = TextCache(None)
    calls = 0

    async def loader() -> Record:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        return Record.failure("https://a.test/", ErrorInfo(kind="timeout", message="slow"))

    results = await asyncio.gather(*(cache.get_or_load("k", loader) for _ in range(5)))
    assert calls == 1 and all(not r.ok for r in results)
    await cache.get_or_load("k", loader)
    assert calls == 2  # failures are not cached


async def test_one_waiter_cancelling_does_not_cancel_the_load(tmp_path):
    cache = TextCache(tmp_path)
    gate = asyncio.Event()

    async def loader() -> Record:
        await gate.wait()
        return page("https://a.test/")

    first = asyncio.create_task(cache.get_or_load("k", loader))
    second = asyncio.create_task(cache.get_or_load("k", loader))
    await asyncio.sleep(0)
    first.cancel()
    gate.set()
    assert (await second).ok
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_loader_exception_reaches_every_waiter():
    cache = TextCache(None)

    async def loader() -> Record:
        await asyncio.sleep(0)
        raise RuntimeError("boom")

    results = await asyncio.gather(
        *(cache.get_or_load("k", loader) for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(r, RuntimeError) for r in results)


def test_corrupt_file_is_replaced(tmp_path, caplog):
    (tmp_path / DB_NAME).write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING):
        cache = TextCache(tmp_path)
    assert cache.enabled
    assert "failed its integrity check" in caplog.text
    cache.put_sync("k", page("https://a.test/"))
    assert cache.get_sync("k") is not None
    assert (tmp_path / f"{DB_NAME}.corrupt").exists()


def test_unwritable_location_degrades_to_no_cache(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("a file where a directory should be")
    with caplog.at_level(logging.WARNING):
        cache = TextCache(blocker / "sub")
    assert not cache.enabled
    assert "cache disabled" in caplog.text
    cache.put_sync("k", page("https://a.test/"))
    assert cache.get_sync("k") is None


async def test_damage_while_open_degrades(tmp_path, caplog):
    cache = TextCache(tmp_path)
    cache.put_sync("k", page("https://a.test/"))
    with sqlite3.connect(tmp_path / DB_NAME) as other:
        other.execute("DROP TABLE entries")
    with caplog.at_level(logging.WARNING):
        assert await cache.get("k") is None

    async def loader() -> Record:
        return page("https://a.test/", "fresh")

    assert (await cache.get_or_load("k", loader)).content == "fresh"
    assert not cache.enabled


def test_two_instances_share_one_directory(tmp_path):
    writer, reader = TextCache(tmp_path), TextCache(tmp_path)
    writer.put_sync("k", page("https://a.test/"))
    assert reader.get_sync("k") is not None


def test_open_cache_for_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    library = open_cache(Settings())
    assert library.path.resolve() == (tmp_path / "xdg" / "extract-pipeline" / DB_NAME).resolve()
    again = open_cache(Settings())
    assert again is not library  # no process-wide instance: its caller owns and closes it
    assert not open_cache(Settings(), batch=True).enabled  # batch: only with --cache DIR
    chosen = open_cache(Settings(cache_dir=str(tmp_path / "c")), batch=True)
    assert chosen.path.resolve() == (tmp_path / "c" / DB_NAME).resolve()
    assert not open_cache(Settings(cache=False)).enabled
    assert open_cache(Settings(cache_ttl=0)).enabled  # a TTL of 0 revalidates, it stores
    for cache in (library, again, chosen):
        cache.close()


async def test_many_loads_misses_in_one_call_and_shares_in_flight_keys(tmp_path):
    cache = TextCache(tmp_path)
    cache.put_sync("a", page("https://a.test/a", "cached"))
    batches: list[list[str]] = []
    gate = asyncio.Event()

    async def loader(urls: list[str]) -> list[Record]:
        batches.append(urls)
        await gate.wait()
        return [page(url, f"loaded {url}") for url in urls]

    first = asyncio.create_task(cache.get_or_load_many({"a": "A", "b": "B", "c": "C"}, loader))
    await asyncio.sleep(0)
    second = asyncio.create_task(cache.get_or_load_many({"c": "C", "d": "D"}, loader))
    await asyncio.sleep(0.05)
    gate.set()
    one, two = await first, await second
    assert sorted(batches) == [["B", "C"], ["D"]]  # c was in flight: loaded once, shared
    assert one["a"].content == "cached" and one["c"] is two["c"]
    assert two["d"].content == "loaded D"
    assert cache.get_sync("d") is not None


async def test_many_rejects_a_loader_that_miscounts():
    cache = TextCache(None)

    async def loader(items):
        return []

    with pytest.raises(RuntimeError, match="0 records for 2"):
        await cache.get_or_load_many({"x": 1, "y": 2}, loader)
    assert not cache._flights.pending  # nothing left dangling


def test_byte_total_tracks_replaces_expiry_and_eviction(tmp_path):
    clock = Clock()
    cache = TextCache(tmp_path, ttl=100, max_bytes=10_000, clock=clock)
    for i in range(30):
        clock.now += 5
        cache.put_sync(f"k{i % 7}", page(f"https://a.test/{i}", "z" * (200 + 37 * i)))
    cache.get_sync("k0")  # may drop an expired row
    with sqlite3.connect(tmp_path / DB_NAME) as raw:
        count, actual = raw.execute("SELECT COUNT(*), SUM(size) FROM entries").fetchone()
    assert cache.stats() == (count, actual)
    assert actual <= 10_000


def test_stale_pages_with_validators_are_kept_for_revalidation(tmp_path):
    clock = Clock()
    cache = TextCache(tmp_path, ttl=60, clock=clock)
    checks = Validators("https://a.test/", '"e1"', "Wed, 01 Jan 2025 00:00:00 GMT")
    cache.put_many_sync([("with", page("https://a.test/")), ("without", page("https://b.test/"))],
                        {"with": checks})
    fresh = cache.lookup_many_sync(["with", "without"])
    assert {k: (p.fresh, p.validators) for k, p in fresh.items()} == {
        "with": (True, checks), "without": (True, None)}
    clock.now += 60
    stale = cache.lookup_many_sync(["with", "without"])
    assert list(stale) == ["with"] and not stale["with"].fresh
    assert stale["with"].record == page("https://a.test/")
    assert cache.get_sync("with") is None  # the library reads fresh pages only


def test_refresh_makes_a_page_fresh_with_the_new_validators(tmp_path):
    clock = Clock()
    cache = TextCache(tmp_path, ttl=60, clock=clock)
    cache.put_many_sync([("k", page("https://a.test/"))], {"k": Validators("https://a.test/", "1")})
    clock.now += 100
    cache.refresh_sync("k", Validators("https://a.test/", "2"))
    found = cache.lookup_many_sync(["k"])["k"]
    assert found.fresh and found.validators == Validators("https://a.test/", "2")
    clock.now += 30
    assert cache.lookup_many_sync(["k"])["k"].fresh


def test_validators_go_with_their_entry(tmp_path):
    clock = Clock()
    cache = TextCache(tmp_path, ttl=60, clock=clock)
    cache.put_many_sync([("k", page("https://a.test/"))], {"k": Validators("https://a.test/", "1")})
    cache.put_many_sync([("k", page("https://a.test/", "new text"))])  # replaced, no validators
    assert cache.lookup_many_sync(["k"])["k"].validators is None
    db = sqlite3.connect(tmp_path / DB_NAME)
    assert db.execute("SELECT COUNT(*) FROM validators").fetchone()[0] == 0


def test_a_cache_written_before_validators_existed_gains_them(tmp_path):
    db = sqlite3.connect(tmp_path / DB_NAME)
    db.executescript("CREATE TABLE entries (key TEXT PRIMARY KEY, url TEXT NOT NULL, "
                     "stored REAL NOT NULL, size INTEGER NOT NULL, record TEXT NOT NULL);")
    db.execute("INSERT INTO entries VALUES ('old', 'https://a.test/', 1000.0, 10, ?)",
               (page("https://a.test/").model_dump_json(),))
    db.commit()
    db.close()
    cache = TextCache(tmp_path, ttl=60, clock=Clock())
    assert cache.lookup_many_sync(["old"])["old"].validators is None
    checks = Validators("https://b.test/", "e")
    cache.put_many_sync([("new", page("https://b.test/"))], {"new": checks})
    assert cache.lookup_many_sync(["new"])["new"].validators == checks


async def test_pages_read_from_disk_say_so(tmp_path):
    cache = TextCache(tmp_path)

    async def loader() -> Record:
        return page("https://a.test/")

    first = await cache.get_or_load("k", loader)
    second = await cache.get_or_load("k", loader)
    assert (first.cache, second.cache) == (None, "hit")


# --------------------------------------------------------------------------- busy, read-only

def _filled(directory: Path) -> None:
    cache = TextCache(directory)
    cache.put_sync("k", page("https://a.test/"))
    cache.close()


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_locked_database_is_not_taken_for_a_corrupt_one(tmp_path, caplog, journal):
    _filled(tmp_path)
    holder = sqlite3.connect(tmp_path / DB_NAME, isolation_level=None)
    holder.execute(f"PRAGMA journal_mode={journal}")
    holder.execute("BEGIN EXCLUSIVE")  # another run in the middle of a write
    try:
        with caplog.at_level(logging.WARNING):
            cache = TextCache(tmp_path, busy_timeout=0.05)
            if journal == "wal":  # readers go on beside a writer: the cache is used
                assert cache.enabled and cache.get_sync("k") is not None
                cache.put_sync("k2", page("https://b.test/"))  # busy: skipped, not fatal
                assert cache.enabled
            else:  # a rollback journal locks readers out too: this run goes without it
                assert not cache.enabled and "busy" in caplog.text
        assert not list(tmp_path.glob("*.corrupt"))
        assert "integrity" not in caplog.text
    finally:
        holder.execute("COMMIT")
        holder.close()
    again = TextCache(tmp_path)
    assert again.get_sync("k") is not None  # the healthy database is still there, whole
    again.put_sync("k2", page("https://b.test/"))
    assert again.get_sync("k2") is not None


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user may enter (pytest's own are private to their owner)."""
    path = Path(tempfile.mkdtemp(prefix="cache-ro-"))
    path.chmod(0o755)
    yield path
    for item in (path, *path.iterdir()):
        item.chmod(0o755 if item.is_dir() else 0o644)
    shutil.rmtree(path)


def _as_a_reader_only(action: Callable[[], dict]) -> dict:
    """Run ``action`` where files marked read-only cannot be written: as root (who writes
    anything) in a forked child that has become ``nobody``; else right here."""
    if os.geteuid() != 0:
        return action()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, json.dumps(action()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and data
    return json.loads(data)


@pytest.mark.parametrize("directory_writable", [True, False])
def test_a_valid_read_only_database_is_read(shared_dir, directory_writable):
    _filled(shared_dir)
    (shared_dir / DB_NAME).chmod(0o444)
    shared_dir.chmod(0o777 if directory_writable else 0o555)

    def use() -> dict:
        messages: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: messages.append(record.getMessage())  # type: ignore
        logging.getLogger("pipeline.store.cache").addHandler(handler)
        cache = TextCache(shared_dir)
        found = cache.get_sync("k")
        cache.put_sync("k2", page("https://b.test/"))  # read-only: not stored, not fatal
        return {"enabled": cache.enabled, "read_only": cache.read_only,
                "content": found and found.content, "again": cache.get_sync("k") is not None,
                "messages": messages}

    seen = _as_a_reader_only(use)
    assert seen["content"] == "full text" and seen["again"]
    assert seen["enabled"] and seen["read_only"]
    assert any("read-only" in m for m in seen["messages"]), seen["messages"]
    assert not any("integrity" in m or "disabled" in m for m in seen["messages"])
    assert not list(shared_dir.glob("*.corrupt"))
