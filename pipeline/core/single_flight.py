"""Single flight: concurrent requests for one key share one load.

The one mechanism for it (the batch engine's duplicate lines, the reader's cache loads, a
vendor chain's reads): the first caller of a key starts its load, later callers of the same
key wait for that load's result instead of starting their own. A batch of keys is loaded by
ONE call (a vendor that takes many URLs at once is still called once per batch).

The load runs in a task of its own, so one caller giving up (cancelled) does not cancel it
for the others; when every caller waiting on a load has given up, the load is cancelled
too, so nothing runs on after its last caller (e.g. after a run stopped). An exception from
the load reaches every caller waiting on its keys.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(eq=False)
class _Load(Generic[V]):
    """One running load: its task and how many callers still wait on each of its keys."""

    task: asyncio.Task[None] | None = None
    waiters: int = 0


@dataclass(eq=False)
class _Flight(Generic[V]):
    future: asyncio.Future[V]
    load: _Load[V]
    waiters: int = 0


@dataclass(eq=False)
class SingleFlight(Generic[K, V]):
    """Loads shared by key among concurrent callers; see the module docstring. One instance
    per scope of sharing (a run, a runtime, a reader); use it from one event loop."""

    _running: dict[K, _Flight[V]] = field(default_factory=dict)

    @property
    def pending(self) -> int:
        """How many keys are being loaded."""
        return len(self._running)

    async def run(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        """``await load()`` for ``key``, unless a load of ``key`` is running: its result."""

        async def one(_: list[K]) -> Mapping[K, V]:
            return {key: await load()}

        return (await self.run_many([key], one))[key]

    async def run_many(self, keys: Sequence[K],
                       load: Callable[[list[K]], Awaitable[Mapping[K, V]]]) -> dict[K, V]:
        """A value for every key (distinct keys): those being loaded by another caller from
        that load, the rest from ONE ``load(rest)`` call, which returns a value for each."""
        loop = asyncio.get_running_loop()
        flights: dict[K, _Flight[V]] = {}
        mine: dict[K, _Flight[V]] = {}
        own = _Load[V]()
        for key in keys:
            flight = self._running.get(key)
            if flight is None or flight.future.get_loop() is not loop:
                flight = mine[key] = self._running[key] = _Flight(loop.create_future(), own)
            flight.waiters += 1
            flight.load.waiters += 1
            flights[key] = flight
        if mine:
            own.task = loop.create_task(self._fill(mine, load))
        try:
            if len(flights) == 1:  # one key, the common case: no gather's task around it
                [flight] = flights.values()
                values = [await asyncio.shield(flight.future)]
            else:
                values = await asyncio.shield(
                    asyncio.gather(*(f.future for f in flights.values())))
        except asyncio.CancelledError:
            self._leave(flights.values())
            raise
        self._leave(flights.values())
        return dict(zip(flights, values, strict=True))

    def _leave(self, flights: Iterable[_Flight[V]]) -> None:
        """This caller no longer waits; a load nobody waits for any more is cancelled."""
        for flight in flights:
            flight.waiters -= 1
            flight.load.waiters -= 1
            task = flight.load.task
            if flight.load.waiters == 0 and task is not None and not task.done():
                task.cancel()

    async def _fill(self, flights: dict[K, _Flight[V]],
                    load: Callable[[list[K]], Awaitable[Mapping[K, V]]]) -> None:
        try:
            values = await load(list(flights))
            missing = [key for key in flights if key not in values]
            if missing:
                raise RuntimeError(f"load returned no value for {len(missing)} of its keys")
            for key, flight in flights.items():
                if not flight.future.done():
                    flight.future.set_result(values[key])
        except BaseException as exc:
            for flight in flights.values():
                if flight.future.done():
                    continue
                if isinstance(exc, asyncio.CancelledError):
                    flight.future.cancel()
                else:
                    flight.future.set_exception(exc)
                    flight.future.exception()  # retrieved here: no "never retrieved" noise
            if isinstance(exc, asyncio.CancelledError):
                raise
            # KeyboardInterrupt / SystemExit reach the waiters through their futures and are
            # raised in THEIR tasks; raised here too, it would stop the event loop itself
        finally:
            for key, flight in flights.items():
                if self._running.get(key) is flight:
                    del self._running[key]

