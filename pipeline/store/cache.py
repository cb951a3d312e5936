"""The full-text cache: untruncated records in SQLite on disk, with a TTL and a size cap.

Why: an agent reads a long page window by window (``offset``) without refetching it, and a
batch re-run (``--cache DIR``) skips pages it fetched recently. Entries are keyed by URL plus
the extraction options that change the text (format, handler options) — never by ``max_chars``
or ``offset``, which only select a window of the same full text.

The cache is an optimisation, never a failure source: an unreadable or unwritable database
degrades to "no cache" with one warning. Only a failed integrity check means corrupt (the file
is then moved aside and a new one started): a database busy in another process is waited for
a while, then this run goes without it (or skips the one query), and a valid read-only
database is read, never written. SQLite runs in WAL mode so several processes can share one
directory; every query is small and runs in a worker thread. :meth:`TextCache.get_or_load`
loads concurrent identical requests once (:mod:`pipeline.core.single_flight`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pipeline.core.models import Record
from pipeline.core.single_flight import SingleFlight
from pipeline.core.slices import CacheSettings
from pipeline.fetch.base import Validators

log = logging.getLogger(__name__)

DB_NAME = "fulltext.sqlite3"
DEFAULT_TTL = 24 * 3600.0
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
# Options that pick a window of the full text; they must not split the cache.
_WINDOW_OPTIONS = frozenset({"max_chars", "offset"})

# ``totals`` keeps the stored byte count up to date through triggers, so the size cap costs
# O(1) per write however big the cache grows (a SUM would read every page of the table).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    stored REAL NOT NULL,
    size INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_stored ON entries (stored);
CREATE TABLE IF NOT EXISTS totals (id INTEGER PRIMARY KEY CHECK (id = 0), bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO totals (id, bytes) SELECT 0, COALESCE(SUM(size), 0) FROM entries;
CREATE TRIGGER IF NOT EXISTS entries_added AFTER INSERT ON entries
    BEGIN UPDATE totals SET bytes = bytes + new.size WHERE id = 0; END;
CREATE TRIGGER IF NOT EXISTS entries_removed AFTER DELETE ON entries
    BEGIN UPDATE totals SET bytes = bytes - old.size WHERE id = 0; END;
CREATE TABLE IF NOT EXISTS validators (
    key TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    etag TEXT,
    last_modified TEXT
);
CREATE TRIGGER IF NOT EXISTS validators_removed AFTER DELETE ON entries
    BEGIN DELETE FROM validators WHERE key = old.key; END;
"""


# Every object the schema creates: a database holding them all needs no write to be opened.
_SCHEMA_OBJECTS = frozenset(re.findall(r"IF NOT EXISTS (\w+)", _SCHEMA))
_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
DEFAULT_BUSY_TIMEOUT = 5.0  # seconds a query waits for another process's lock


def _code(exc: sqlite3.Error) -> int:
    """The primary SQLite result code of ``exc`` (extended codes folded)."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF


def _busy(exc: sqlite3.Error) -> bool:
    return _code(exc) in _BUSY_CODES


def _read_only(exc: sqlite3.Error) -> bool:
    return _code(exc) == sqlite3.SQLITE_READONLY


def _has_schema(db: sqlite3.Connection) -> bool:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master")} >= _SCHEMA_OBJECTS


def _fails_integrity_check(path: Path, timeout: float) -> bool:
    """Whether the database at ``path`` is corrupt: SQLite's quick check fails, or the file
    is not a database at all. A check that cannot run (busy, unreadable) says no."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout)
    except sqlite3.Error:
        return False
    try:
        return db.execute("PRAGMA quick_check").fetchall() != [("ok",)]
    except sqlite3.Error as exc:
        return _code(exc) in _CORRUPT_CODES
    finally:
        db.close()


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/extract-pipeline``, else ``~/.cache/extract-pipeline``."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "extract-pipeline"


def cache_key(url: str, **options: Any) -> str:
    """A stable key for ``url`` extracted with ``options`` (window options ignored)."""
    return cache_keys([url], **options)[0]


def cache_keys(urls: Iterable[str], **options: Any) -> list[str]:
    """:func:`cache_key` for many URLs sharing ``options`` (the options are encoded once)."""
    kept = {k: v for k, v in options.items() if k not in _WINDOW_OPTIONS and v is not None}
    blob = json.dumps(kept, sort_keys=True, default=str)
    return [hashlib.sha256(f"{blob}\n{url}".encode()).hexdigest() for url in urls]


Loader = Callable[[], Awaitable[Record]]
T = TypeVar("T")
_SQL_VARIABLES = 500  # below SQLite's limit on bound parameters per statement


def _total(db: sqlite3.Connection) -> int:
    total: int = db.execute("SELECT bytes FROM totals WHERE id = 0").fetchone()[0]
    return total


def _insert_validators(db: sqlite3.Connection, validators: Mapping[str, Validators]) -> None:
    db.executemany(
        "INSERT OR REPLACE INTO validators (key, url, etag, last_modified) VALUES (?, ?, ?, ?)",
        [(key, v.url, v.etag, v.last_modified) for key, v in validators.items()])


def _succeeded(record: Record) -> bool:
    return record.ok


@dataclass(frozen=True)
class CachedPage:
    """A stored record, whether it is still ``fresh`` (younger than the TTL), and the
    validators its response had (a stale page with validators can be revalidated)."""

    record: Record
    fresh: bool
    validators: Validators | None = None


class TextCache:
    """Full untruncated records by key; see the module docstring.

    ``directory=None`` makes a cache that stores nothing (loads still go through single
    flight). ``clock`` is injectable for tests.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None,
        *,
        ttl: float = DEFAULT_TTL,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.time,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.read_only = False  # a valid database we may read but not write
        self._clock = clock
        self._busy_timeout = busy_timeout
        self._warned_busy = False
        self._lock = threading.Lock()
        self._flights: SingleFlight[str, Record] = SingleFlight()
        self._db: sqlite3.Connection | None = None
        self.path: Path | None = None
        if directory is not None and ttl >= 0 and max_bytes > 0:
            self.path = Path(directory) / DB_NAME
            self._db = self._open(self.path)

    # --- lifecycle

    def _connect(self, path: Path) -> sqlite3.Connection:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=self._busy_timeout, check_same_thread=False,
                             isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=NORMAL")
            if not _has_schema(db):  # a write: only when something is missing
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def _connect_read_only(self, path: Path) -> sqlite3.Connection:
        """A database we may not write (nor its directory, for WAL's side files): read it
        as it is on disk."""
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True,
                             timeout=self._busy_timeout, check_same_thread=False,
                             isolation_level=None)
        try:
            if not _has_schema(db):
                raise sqlite3.OperationalError("not a cache database")
        except BaseException:
            db.close()
            raise
        return db

    def _open(self, path: Path) -> sqlite3.Connection | None:
        try:
            return self._connect(path)
        except sqlite3.DatabaseError as exc:
            if _busy(exc):
                log.warning("cache %s is busy (locked by another process for %g s); running "
                            "without the cache this time", path, self._busy_timeout)
                return None
            if _read_only(exc):
                return self._open_read_only(path, exc)
            if not _fails_integrity_check(path, self._busy_timeout):
                self._warn_disabled(exc)
                return None
            # Corrupt: move it aside and start afresh once.
            log.warning("cache %s failed its integrity check (%s); moved aside, starting a "
                        "new one", path, exc)
            try:
                for suffix in ("", "-wal", "-shm"):
                    side = Path(f"{path}{suffix}")
                    if side.exists():
                        side.replace(f"{path}{suffix}.corrupt")
                return self._connect(path)
            except (OSError, sqlite3.Error) as again:
                self._warn_disabled(again)
        except OSError as exc:
            self._warn_disabled(exc)
        return None

    def _open_read_only(self, path: Path, exc: sqlite3.Error) -> sqlite3.Connection | None:
        try:
            db = self._connect_read_only(path)
        except sqlite3.Error:
            self._warn_disabled(exc)
            return None
        self._note_read_only(path)
        return db

    def _note_read_only(self, path: Path | None) -> None:
        if self.read_only:
            return
        self.read_only = True
        log.warning("cache %s is read-only: pages are read from it, none are stored", path)

    def _warn_disabled(self, exc: BaseException) -> None:
        log.warning("cache disabled: %s", exc)

    @property
    def enabled(self) -> bool:
        """Whether entries are stored (False once the database has been given up)."""
        return self._db is not None

    def close(self) -> None:
        """Close the database; the cache then stores nothing."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # --- synchronous primitives (run in a worker thread by the async API)

    def _run(self, action: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            if self._db is None:
                return None
            try:
                return action(self._db)
            except sqlite3.Error as exc:
                if _busy(exc):  # another process holds the lock: skip this query only
                    if not self._warned_busy:
                        self._warned_busy = True
                        log.warning("cache %s is busy (locked by another process); a "
                                    "query was skipped", self.path)
                    return None
                if _read_only(exc):
                    self._note_read_only(self.path)
                    return None
                self._warn_disabled(exc)
                self._db.close()
                self._db = None
                return None
            except (OSError, ValueError) as exc:
                self._warn_disabled(exc)
                self._db.close()
                self._db = None
                return None

    def get_sync(self, key: str) -> Record | None:
        """The fresh entry for ``key``, or None (expired entries are dropped)."""
        return self.get_many_sync([key]).get(key)

    def get_many_sync(self, keys: Sequence[str]) -> dict[str, Record]:
        """The fresh entries among ``keys`` (expired ones are dropped, unless they can be
        revalidated: see :meth:`lookup_many_sync`)."""
        return {key: page.record for key, page in self.lookup_many_sync(keys).items()
                if page.fresh}

    def put_sync(self, key: str, record: Record) -> None:
        """Store ``record`` under ``key``, then evict the oldest entries above the size cap."""
        self.put_many_sync([(key, record)])

    def put_many_sync(self, items: Sequence[tuple[str, Record]],
                      validators: Mapping[str, Validators] | None = None) -> None:
        """Store every ``(key, record)`` (one bigger than the whole cap is skipped), with the
        ``validators`` of its key if any, then evict the oldest entries above the size cap."""
        if self.read_only:
            return
        rows = []
        now = self._clock()
        for key, record in items:
            payload = record.model_dump_json()
            size = len(payload.encode())
            if size <= self.max_bytes:
                rows.append((key, record.url, now, size, payload))
        if not rows:
            return

        def action(db: sqlite3.Connection) -> None:
            with _transaction(db):  # a reader never sees half a batch
                # delete + insert, not REPLACE: REPLACE's implicit delete fires no trigger
                db.executemany("DELETE FROM entries WHERE key = ?", [(r[0],) for r in rows])
                db.executemany(
                    "INSERT INTO entries (key, url, stored, size, record) VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
                if validators:
                    _insert_validators(db, {r[0]: validators[r[0]] for r in rows
                                            if r[0] in validators})
                self._evict(db)

        self._run(action)

    def lookup_many_sync(self, keys: Sequence[str]) -> dict[str, CachedPage]:
        """The entries among ``keys``: fresh ones, and stale ones that have validators (to
        revalidate); stale ones without validators are dropped."""

        def action(db: sqlite3.Connection) -> dict[str, CachedPage]:
            found: dict[str, CachedPage] = {}
            stale: list[tuple[str]] = []
            now = self._clock()
            for start in range(0, len(keys), _SQL_VARIABLES):
                chunk = keys[start : start + _SQL_VARIABLES]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    "SELECT e.key, e.stored, e.record, v.url, v.etag, v.last_modified "
                    f"FROM entries e LEFT JOIN validators v ON v.key = e.key "
                    f"WHERE e.key IN ({marks})", chunk)
                for key, stored, payload, url, etag, last_modified in rows:
                    fresh = now - stored < self.ttl
                    checks = Validators(url, etag, last_modified) if url else None
                    if fresh or checks is not None:
                        found[key] = CachedPage(Record.model_validate_json(payload), fresh,
                                                checks)
                    else:
                        stale.append((key,))
            if stale and not self.read_only:
                db.executemany("DELETE FROM entries WHERE key = ?", stale)
            return found

        return (self._run(action) if keys else None) or {}

    def refresh_sync(self, key: str, validators: Validators | None = None) -> None:
        """The server says ``key``'s page has not changed: fresh again from now, with the
        validators it sent (if any)."""

        def action(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.execute("UPDATE entries SET stored = ? WHERE key = ?", (self._clock(), key))
                if validators is not None:
                    _insert_validators(db, {key: validators})

        self._run(action)

    async def lookup(self, key: str) -> CachedPage | None:
        """:meth:`lookup_many_sync` of one key, in a worker thread."""
        if self._db is None:
            return None
        return (await asyncio.to_thread(self.lookup_many_sync, [key])).get(key)

    async def store(self, key: str, record: Record, validators: Validators | None) -> None:
        """Store ``record`` with its validators, in a worker thread."""
        if self._db is not None:
            checks = {key: validators} if validators is not None else None
            await asyncio.to_thread(self.put_many_sync, [(key, record)], checks)

    async def refresh(self, key: str, validators: Validators | None = None) -> None:
        """:meth:`refresh_sync` in a worker thread."""
        if self._db is not None:
            await asyncio.to_thread(self.refresh_sync, key, validators)

    def _evict(self, db: sqlite3.Connection) -> None:
        if _total(db) <= self.max_bytes:
            return
        db.execute("DELETE FROM entries WHERE stored <= ?", (self._clock() - self.ttl,))
        excess = _total(db) - self.max_bytes
        doomed = []
        for key, size in db.execute("SELECT key, size FROM entries ORDER BY stored, rowid"):
            if excess <= 0:
                break  # the index walk stops here: only the oldest rows are read
            doomed.append((key,))
            excess -= size
        db.executemany("DELETE FROM entries WHERE key = ?", doomed)

    def stats(self) -> tuple[int, int]:
        """(entries, bytes) currently stored."""
        result = self._run(
            lambda db: (db.execute("SELECT COUNT(*) FROM entries").fetchone()[0], _total(db))
        )
        return tuple(result) if result else (0, 0)

    # --- async API

    async def get(self, key: str) -> Record | None:
        """The fresh entry for ``key``, or None; the query runs in a worker thread."""
        if self._db is None:
            return None
        return await asyncio.to_thread(self.get_sync, key)

    async def put(self, key: str, record: Record) -> None:
        """Store ``record`` under ``key`` (see :meth:`put_sync`) from a worker thread."""
        if self._db is not None:
            await asyncio.to_thread(self.put_sync, key, record)

    async def get_or_load(
        self, key: str, loader: Loader, *, store: Callable[[Record], bool] = _succeeded
    ) -> Record:
        """The cached record for ``key``, else ``await loader()`` — stored when ``store``
        says so (by default only successful records). Concurrent calls with the same key
        share one load; one caller cancelling does not cancel the load for the others."""

        async def load_one(_: list[None]) -> list[Record]:
            return [await loader()]

        return (await self.get_or_load_many({key: None}, load_one, store=store))[key]

    async def get_or_load_many(
        self,
        wanted: Mapping[str, T],
        loader: Callable[[list[T]], Awaitable[Sequence[Record]]],
        *,
        store: Callable[[Record], bool] = _succeeded,
    ) -> dict[str, Record]:
        """A record for every key of ``wanted`` (key → the item to load it from): cached
        ones from disk, keys already being loaded by another caller from that load, and the
        rest with ONE ``loader(items)`` call (one record per item, in order) — so a batch
        provider is still called once per batch. Exceptions from ``loader`` reach every
        caller waiting on its keys."""
        async def fill(keys: list[str]) -> dict[str, Record]:
            return await self.fill_many({key: wanted[key] for key in keys}, loader, store=store)

        return await self._flights.run_many(list(wanted), fill)


    async def fill_many(
        self,
        wanted: Mapping[str, T],
        loader: Callable[[list[T]], Awaitable[Sequence[Record]]],
        *,
        store: Callable[[Record], bool] = _succeeded,
    ) -> dict[str, Record]:
        """A record for every key of ``wanted``: fresh stored ones (marked ``hit``), the
        rest from ONE ``loader(items)`` call, stored when ``store`` says so before this
        returns (a caller's next read hits). No single flight here: callers that share
        loads wrap this in one (:meth:`get_or_load_many`, the reader)."""
        keys = list(wanted)
        found = await asyncio.to_thread(self.get_many_sync, keys) if self._db else {}
        found = {key: record.model_copy(update={"cache": "hit"})
                 for key, record in found.items()}
        todo = [key for key in keys if key not in found]
        if todo:
            loaded = list(await loader([wanted[key] for key in todo]))
            if len(loaded) != len(todo):
                raise RuntimeError(f"loader returned {len(loaded)} records for {len(todo)}")
            found.update(zip(todo, loaded, strict=True))
        keep = [(key, found[key]) for key in todo if store(found[key])]
        if keep and self._db is not None:
            await asyncio.to_thread(self.put_many_sync, keep)
        return found


def open_cache(settings: CacheSettings, *, batch: bool = False) -> TextCache:
    """A cache as these settings describe it, for the caller to own and close (there is no
    process-wide one: the runtime or a long-lived caller keeps it). The library and MCP
    server use ``cache_dir`` or the default directory unless ``cache`` is off; the batch
    command (``batch=True``) only an explicit ``cache_dir`` (``--cache DIR``). A TTL of 0
    keeps pages but revalidates each read."""
    if batch:
        directory = settings.cache_dir
    else:
        directory = (settings.cache_dir or str(default_cache_dir())) if settings.cache else None
    max_bytes = settings.cache_max_mb * 1024 * 1024
    if directory is None or max_bytes <= 0:
        return TextCache(None)
    return TextCache(Path(directory).expanduser(), ttl=settings.cache_ttl, max_bytes=max_bytes)
