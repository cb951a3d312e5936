"""The exchange between a sharded crawl's shards, through the in-process fake: several
:class:`ShardCrawl` in one event loop over random link graphs, with a small stand-in for the
engine (no HTTP), so every interleaving the random delays make is a case."""

from __future__ import annotations

import asyncio
import io
import json
import random
from collections import Counter

import pytest

from pipeline.batch.shards.plan import shard_of
from pipeline.core.models import Record
from pipeline.crawl.exchange import Hub, LocalHub
from pipeline.crawl.ledger import Ledger
from pipeline.crawl.run import CrawlOptions
from pipeline.crawl.shards import ShardCrawl

HOSTS = [f"http://127.0.0.1:{20000 + number}" for number in range(6)]


def graph(seed: int, pages: int = 40) -> dict[str, list[str]]:
    """Pages spread over several hosts, each linking to a few others anywhere."""
    rng = random.Random(seed)
    urls = [f"{rng.choice(HOSTS)}/p{number}" for number in range(pages)]
    return {url: rng.sample(urls, rng.randint(0, 4)) for url in urls}


def reachable(links: dict[str, list[str]], starts: list[str]) -> set[str]:
    seen, todo = set(starts), list(starts)
    while todo:
        for link in links[todo.pop()]:
            if link not in seen:
                seen.add(link)
                todo.append(link)
    return seen


async def run_engine(crawl: ShardCrawl, links: dict[str, list[str]], fetched: Counter[str],
                     written: list[Record], rng: random.Random, concurrency: int = 3) -> None:
    """What the batch engine does with a scheduler, page fetches replaced by a few turns of
    the event loop."""
    in_flight: set[asyncio.Task[None]] = set()

    async def fetch(index: int, url: str) -> None:
        for _ in range(rng.randint(0, 5)):
            await asyncio.sleep(0)
        fetched[url] += 1
        record = Record(url=url, index=index, ok=True, content=f"the page {url}",
                        links=links.get(url, []))
        kept = crawl.take(record)
        if kept is not None:
            written.append(kept)

    while True:
        if len(in_flight) < concurrency and (item := crawl.next()) is not None:
            task = asyncio.ensure_future(fetch(item.index, item.url))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
            continue
        if len(in_flight) >= concurrency:
            await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            continue
        waiting = asyncio.ensure_future(crawl.pending())
        await asyncio.wait({waiting, *in_flight}, return_when=asyncio.FIRST_COMPLETED)
        if not waiting.done():
            waiting.cancel()
            continue
        if not waiting.result() and not in_flight:
            return


async def crawl_sharded(links: dict[str, list[str]], starts: list[str], shards: int,
                        options: CrawlOptions, seed: int
                        ) -> tuple[Counter[str], list[Record], list[dict[str, object]]]:
    hub = LocalHub(shards, options.max_pages)
    fetched: Counter[str] = Counter()
    written: list[Record] = []
    stream = io.StringIO()
    ledger = Ledger(stream)
    crawls = [ShardCrawl(starts, options, hub.exchanges[shard], shard, shards, ledger)
              for shard in range(shards)]
    rng = random.Random(seed)
    await asyncio.wait_for(asyncio.gather(*(run_engine(crawl, links, fetched, written, rng)
                                            for crawl in crawls)), 60)
    for crawl in crawls:
        for entry in crawl.frontier.leftovers():  # what Crawl.finish does with the rest
            ledger.skip(entry.url, "budget", entry.parent, entry.depth)
    skipped = [json.loads(line) for line in stream.getvalue().splitlines()]
    return fetched, written, skipped


@pytest.mark.parametrize("seed", range(12))
async def test_every_reachable_page_once_across_shards(seed: int) -> None:
    links = graph(seed)
    rng = random.Random(seed)
    starts = rng.sample(sorted(links), 2)
    shards = rng.choice([2, 3, 4])
    fetched, written, skipped = await crawl_sharded(
        links, starts, shards, CrawlOptions(scope="any", sitemap=False), seed)
    expected = reachable(links, starts)
    assert set(fetched) == expected
    assert all(count == 1 for count in fetched.values())
    assert sorted(record.url for record in written) == sorted(expected)
    indices = [record.index for record in written]
    assert len(set(indices)) == len(indices)  # unique across the shards' parts
    for record in written:  # each written by the shard that owns its host
        assert record.index is not None
        assert record.index % shards == shard_of(record.url, shards)
    assert not [entry for entry in skipped if entry["reason"] != "duplicate"]


@pytest.mark.parametrize("seed", range(8))
async def test_the_global_budget_is_never_exceeded(seed: int) -> None:
    links = graph(seed, pages=60)
    rng = random.Random(seed)
    starts = rng.sample(sorted(links), 3)
    budget = rng.randint(1, 12)
    fetched, written, skipped = await crawl_sharded(
        links, starts, 3, CrawlOptions(scope="any", sitemap=False, max_pages=budget), seed)
    expected = reachable(links, starts)
    assert len(written) == min(budget, len(expected))
    assert sum(fetched.values()) == len(written)  # no page requested past the budget
    if len(expected) > budget:
        assert any(entry["reason"] == "budget" for entry in skipped)


async def test_origin_scope_hands_foreign_links_to_their_owner_who_judges_them() -> None:
    """With the default scope, links to another host are judged (out of scope, one ledger
    line) by the shard that owns that host."""
    home, other = HOSTS[0], next(host for host in HOSTS if shard_of(host, 2)
                                 != shard_of(HOSTS[0], 2))
    links = {f"{home}/": [f"{other}/x", f"{home}/a"], f"{home}/a": [f"{other}/x"],
             f"{other}/x": []}
    fetched, _written, skipped = await crawl_sharded(
        links, [f"{home}/"], 2, CrawlOptions(sitemap=False), 0)
    assert set(fetched) == {f"{home}/", f"{home}/a"}
    assert skipped == [{"url": f"{other}/x", "reason": "out_of_scope",
                        "parent": f"{home}/", "depth": 1}]


def test_the_hub_waits_for_handoffs_still_on_their_way() -> None:
    """An idle report whose counts disagree with what the hub saw (a handoff posted but not
    arrived, or delivered but not judged) does not end the crawl."""
    hub = Hub(2, max_pages=10)
    assert hub.idle(0, sent=1, received=0, give_back=0, blocked=False) == []
    assert hub.idle(1, sent=0, received=0, give_back=0, blocked=False) == []
    out = hub.post(0, 1, [("url", "http://h/", 1, None, "link")])  # type: ignore[list-item]
    assert out == [(1, ("mail", [("url", "http://h/", 1, None, "link")]))]
    assert hub.idle(1, sent=0, received=1, give_back=0, blocked=False) == [
        (0, ("done", None)), (1, ("done", None))]


def test_places_given_back_wake_a_shard_waiting_for_them() -> None:
    hub = Hub(2, max_pages=2)
    assert hub.reserve(2) == 2 and hub.reserve(1) == 0
    assert hub.idle(1, sent=0, received=0, give_back=0, blocked=True) == []
    assert hub.idle(0, sent=0, received=0, give_back=1, blocked=False) == [(1, ("wake", None))]
    assert not hub.done
    assert hub.reserve(5) == 1
