"""Scope, include/exclude globs and the trap guards."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.core.errors import UsageError
from pipeline.crawl.rules import Rules, compile_glob
from pipeline.crawl.scope import Scope, registrable_domain
from pipeline.crawl.traps import TrapGuard, shape_trap, url_pattern


def test_origin_scope_is_scheme_host_and_port() -> None:
    scope = Scope("origin", ["http://example.com/docs/"])
    assert scope.allows("http://EXAMPLE.com/other")
    assert not scope.allows("https://example.com/")
    assert not scope.allows("http://example.com:8080/")
    assert not scope.allows("http://www.example.com/")
    assert not scope.allows("mailto:x@example.com")


def test_domain_scope_uses_the_public_suffix_list() -> None:
    scope = Scope("domain", ["https://docs.example.co.uk/"])
    assert scope.allows("http://www.example.co.uk/a")
    assert scope.allows("https://example.co.uk/")
    assert not scope.allows("https://other.co.uk/")
    assert registrable_domain("a.b.example.co.uk") == "example.co.uk"
    assert registrable_domain("127.0.0.1") == "127.0.0.1"


def test_prefix_scope_matches_whole_segments() -> None:
    scope = Scope("prefix", ["http://e.com/docs/intro.html"])
    assert scope.allows("http://e.com/docs")
    assert scope.allows("http://e.com/docs/a/b")
    assert not scope.allows("http://e.com/docs-old/")
    assert not scope.allows("http://e.com/")
    assert Scope("prefix", ["http://e.com/docs"]).allows("http://e.com/docs/x")


def test_any_scope_takes_every_web_url() -> None:
    scope = Scope("any", ["http://e.com/"])
    assert scope.allows("https://elsewhere.org/x")
    assert not scope.allows("ftp://e.com/")


def test_globs_on_path_and_query() -> None:
    rules = Rules.compile(include=["/blog/**"], exclude=["*.pdf", "/blog/tag/*"])
    assert not rules.excludes("http://e.com/blog/post")
    assert not rules.excludes("http://e.com/blog/post?page=2")
    assert rules.excludes("http://e.com/about")
    assert rules.excludes("http://e.com/blog/files/a.pdf")
    assert rules.excludes("http://e.com/blog/tag/x")
    assert Rules.compile(exclude=["/search?*"]).excludes("http://e.com/search?q=1")
    assert not Rules.compile(exclude=["/a/*"]).excludes("http://e.com/a/b/c")
    assert Rules.compile(exclude=["/p[0-9]"]).excludes("http://e.com/p7")
    assert not Rules.compile(exclude=["/p[!0-9]"]).excludes("http://e.com/p7")


@pytest.mark.parametrize("pattern", ["", "/a[b", "/a]b", " /x", "/a\x01"])
def test_unparsable_globs_are_usage_errors(pattern: str) -> None:
    with pytest.raises(UsageError, match="unusable pattern"):
        compile_glob(pattern)


@settings(deadline=None)
@given(st.text(alphabet=st.characters(whitelist_categories=("L", "N", "Pd", "Po"),
                                     blacklist_characters="*?[]"),
               min_size=1, max_size=20))
def test_a_glob_without_wildcards_matches_itself_only(text: str) -> None:
    pattern = compile_glob("/" + text)
    assert pattern.match("/" + text)
    assert not pattern.match("/" + text + "x")


def test_shape_traps_are_named() -> None:
    assert shape_trap("http://e.com/a/b/a/c/a") == "repeated_segment"
    assert shape_trap("http://e.com/" + "/".join(f"s{i}" for i in range(21))) == "too_deep"
    assert shape_trap("http://e.com/" + "x" * 2100) == "too_long"
    assert shape_trap("http://e.com/a/b/a") is None


def test_a_pattern_repeating_its_text_is_stopped() -> None:
    guard = TrapGuard()
    assert url_pattern("http://e.com/cal/2024/05?view=day") == "e.com/cal/0/0?view"
    for month in range(1, 4):  # three distinct pages: no trap
        guard.observe(f"http://e.com/cal/2024/{month}", f"events of {month}")
    assert guard.check("http://e.com/cal/2024/9") is None
    for month in range(4, 7):  # then the same empty month again and again
        guard.observe(f"http://e.com/cal/2024/{month}", "no events")
    assert guard.check("http://e.com/cal/2024/9") is None  # seen once, repeated twice
    guard.observe("http://e.com/cal/2024/7", "no events")
    assert guard.check("http://e.com/cal/2025/1") == "trap:same_content"
    assert guard.check("http://e.com/blog/1") is None
