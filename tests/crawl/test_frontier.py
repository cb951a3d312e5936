"""The frontier: aliases, depth, budgets, per-prefix budget, the ledger."""

from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.crawl.frontier import Entry, Frontier
from pipeline.crawl.ledger import Ledger


def test_aliases_are_fetched_once_and_links_to_them_are_duplicates() -> None:
    frontier = Frontier(max_pages=10)
    assert frontier.offer("http://e.com/", depth=0, parent=None, via="start") is None
    assert frontier.offer("http://e.com/index.html#x", depth=1, parent="http://e.com/",
                          via="link") == "duplicate"
    frontier.alias("http://e.com/new")  # a redirect target
    assert frontier.offer("http://e.com/new?utm_source=x", depth=1, parent="http://e.com/",
                          via="link") == "duplicate"
    assert frontier.next() == Entry("http://e.com/", 0, None, "start")
    assert frontier.next() is None


def test_depth_and_order() -> None:
    frontier = Frontier(max_pages=10, max_depth=1)
    frontier.offer("http://e.com/", depth=0, parent=None, via="start")
    frontier.offer("http://e.com/a", depth=1, parent="http://e.com/", via="link")
    assert frontier.offer("http://e.com/b", depth=2, parent="http://e.com/a",
                          via="link") == "depth"
    assert frontier.next() == Entry("http://e.com/", 0, None, "start")
    assert frontier.next() == Entry("http://e.com/a", 1, "http://e.com/", "link")
    assert frontier.next() is None


@settings(deadline=None)
@given(st.integers(1, 30), st.integers(0, 60), st.lists(st.booleans(), max_size=80))
def test_never_more_pages_than_the_budget(budget: int, urls: int,
                                          outcomes: list[bool]) -> None:
    """However many are in flight and however many give their place back, the pages that
    became records never exceed the budget."""
    frontier = Frontier(max_pages=budget)
    for number in range(urls):
        frontier.offer(f"http://e.com/{number}", depth=0, parent=None, via="start")
    records = 0
    flying: list[Entry] = []
    for counted in outcomes:
        while (entry := frontier.next()) is not None:
            flying.append(entry)
            assert records + len(flying) <= budget
        if flying:
            frontier.finished(flying.pop(), counted=counted)
            records += counted
    assert records <= budget


def test_per_prefix_budget_skips_the_rest_of_a_branch() -> None:
    stream = io.StringIO()
    frontier = Frontier(max_pages=100, max_per_prefix=2, ledger=Ledger(stream))
    for number in range(5):
        frontier.offer(f"http://e.com/big/{number}", depth=1, parent=None, via="link")
    frontier.offer("http://e.com/small/1", depth=1, parent=None, via="link")
    taken = []
    while (entry := frontier.next()) is not None:
        taken.append(entry.url)
    assert taken == ["http://e.com/big/0", "http://e.com/big/1", "http://e.com/small/1"]
    assert frontier.ledger.counts == {"budget": 3}
    assert [json.loads(line)["url"] for line in stream.getvalue().splitlines()] == [
        f"http://e.com/big/{number}" for number in (2, 3, 4)]


def test_budget_spent_leaves_the_rest_and_idles() -> None:
    frontier = Frontier(max_pages=1)
    frontier.offer("http://e.com/a", depth=0, parent=None, via="start")
    frontier.offer("http://e.com/b", depth=0, parent=None, via="start")
    entry = frontier.next()
    assert entry is not None and frontier.next() is None and frontier.spent
    frontier.finished(entry, counted=True)
    assert frontier.idle
    assert [left.url for left in frontier.leftovers()] == ["http://e.com/b"]
