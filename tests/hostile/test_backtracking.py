"""No regular expression of ours can be made to backtrack exponentially, and the inputs that
did it hang nothing any more.

The static check reads every compiled pattern of ``pipeline`` and ``handlers`` with Python's
own regex parser: an unbounded repeat inside another unbounded repeat (``(?:\\s+|…)*``) is
how a few bytes buy 2^n steps, so it must sit in an atomic group (or be possessive), which
never backtracks, or be listed below with the reason its inner choices cannot overlap. The
time-bounded checks run the inputs that used to hang in a child process, which is killed if
it outlives the bound.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

import pytest

from pipeline.core.errors import UsageError
from tests.cli.test_end_to_end import ROOT

# (module, name): why its nested repeats cannot overlap, so each string has one way through.
DISJOINT = {
    ("pipeline.core.markdown_cut", "_LINK"):
        "each alternative inside a repeat starts with a different character (\\\\, [, or "
        "neither) and the inner repeat is closed by ] or ), which the other choices exclude",
}
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT)
BOUND = 120  # seconds: what used to take 2^50 steps needs well under one


def _patterns() -> Iterator[tuple[str, str, re.Pattern]]:
    for package_name in ("pipeline", "handlers"):
        package = importlib.import_module(package_name)
        names = [package_name] + [info.name for info in
                                  pkgutil.walk_packages(package.__path__, package_name + ".")]
        for name in names:
            try:
                module = importlib.import_module(name)
            except (ImportError, UsageError):  # an optional extra that is not installed
                continue
            for attribute, value in vars(module).items():
                values = value if isinstance(value, tuple | list) else (value,)
                for found in values:
                    if isinstance(found, re.Pattern):
                        yield name, attribute, found


def _nested_repeats(items, inside: bool = False) -> int:
    """Unbounded repeats inside another one, outside atomic groups and possessive repeats."""
    count = 0
    for op, argument in items:
        if op in _REPEATS:
            _, high, body = argument
            unbounded = high == sre.MAXREPEAT
            count += int(unbounded and inside)
            count += _nested_repeats(body, inside or unbounded)
        elif op == sre.SUBPATTERN:
            count += _nested_repeats(argument[-1], inside)
        elif op == sre.BRANCH:
            count += sum(_nested_repeats(branch, inside) for branch in argument[1])
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            count += _nested_repeats(argument[1], inside)
        # ATOMIC_GROUP and POSSESSIVE_REPEAT: never backtracked into
    return count


def test_the_static_check_sees_the_shape_that_hung_the_sitemap_walk():
    old_root = re.compile(rb"(?:\s+|<\?.*?\?>|<!--.*?-->)*<([A-Za-z_][\w.\-]*)", re.DOTALL)
    assert _nested_repeats(_parser.parse(old_root.pattern, old_root.flags)) > 0
    atomic = re.compile(rb"(?>(?:\s+|<\?.*?\?>|<!--.*?-->)*)<([A-Za-z_][\w.\-]*)", re.DOTALL)
    assert _nested_repeats(_parser.parse(atomic.pattern, atomic.flags)) == 0


def test_no_pattern_of_ours_nests_unbounded_repeats_that_can_backtrack():
    found = list(_patterns())
    assert len(found) > 50  # the walk found the modules' patterns
    offending = [f"{module}.{name}: {pattern.pattern!r:.80}"
                 for module, name, pattern in found
                 if (module, name) not in DISJOINT
                 and _nested_repeats(_parser.parse(pattern.pattern, pattern.flags))]
    assert offending == []


def _run_bounded(code: str) -> str:
    """``code``'s stdout, run in a child interpreter killed after :data:`BOUND` seconds."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=BOUND, check=True)
    return done.stdout


def test_the_backtracking_xml_prologue_is_a_record_at_once():
    """An XML declaration, a few dozen newlines and an unexpected token: the root-element
    regex took 2^n steps on it (n = 60 here: forever)."""
    out = _run_bounded(
        "from pipeline.batch.input.documents import parse_document\n"
        "body = b'<?xml version=\"1.0\"?>' + b'\\n' * 60 + b'!' + b' ' * 60\n"
        "parsed = parse_document(body, 'https://s.test/sitemap.xml', 1 << 20)\n"
        "print(parsed.error.kind, parsed.links)\n")
    assert out.split() == ["decode", "[]"]


@pytest.mark.parametrize("head", [b"<!-- -->" * 120 + b"<x", b"<!---->" * 140 + b"\n"])
def test_comments_before_no_html_tag_are_sniffed_at_once(head):
    out = _run_bounded(
        "from handlers.html import HTML_HANDLER\n"
        f"print(HTML_HANDLER.sniff({head!r}))\n")
    assert out.strip() == "False"


def test_the_disjoint_pattern_stays_linear_on_its_worst_input():
    out = _run_bounded(
        "from pipeline.core.markdown_cut import _LINK\n"
        "print(sum(1 for _ in _LINK.finditer('[' * 200_000 + '](' * 100_000)))\n")
    assert int(out) == 0
