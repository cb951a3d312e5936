"""``--include`` / ``--exclude``: globs on a URL's path and query.

The glob language: ``*`` matches within one path segment (no ``/``), ``**`` matches
anything, ``?`` one character, ``[abc]`` / ``[!abc]`` one of a set. A pattern starting with
``/`` is anchored at the path's start; any other pattern may match from any segment's start
(as if ``**/`` came before it). The whole of ``path?query`` must match: ``/blog/*`` takes
``/blog/post`` but not ``/blog/post?page=2`` (write ``/blog/**`` for that). A pattern that
cannot be parsed (an unclosed ``[``, an empty pattern, a control character) is a
:class:`~pipeline.core.errors.UsageError` before anything is fetched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from yarl import URL

from pipeline.core.errors import UsageError


def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression of one glob; ``UsageError`` naming the fault."""
    if not pattern or pattern.strip() != pattern:
        raise UsageError(f"unusable pattern {pattern!r}: empty or with spaces around it")
    if any(ord(char) < 32 or ord(char) == 127 for char in pattern):
        raise UsageError(f"unusable pattern {pattern!r}: a control character")
    out: list[str] = [] if pattern.startswith("/") else ["(?:.*/)?"]
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            if pattern.startswith("**", i):
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append(".")
        elif char == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                raise UsageError(f"unusable pattern {pattern!r}: '[' at {i} is never closed")
            body = pattern[i + 1:end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        elif char == "]":
            raise UsageError(f"unusable pattern {pattern!r}: ']' at {i} without '['")
        else:
            out.append(re.escape(char))
        i += 1
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error as exc:
        raise UsageError(f"unusable pattern {pattern!r}: {exc}") from None


def path_and_query(url: str | URL) -> str:
    """What the globs see: the decoded path, then ``?query`` when there is one."""
    parsed = url if isinstance(url, URL) else URL(url)
    query = parsed.query_string
    return parsed.path + (f"?{query}" if query else "")


@dataclass(frozen=True)
class Rules:
    """Compiled include and exclude globs."""

    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def compile(cls, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Rules:
        return cls(tuple(map(compile_glob, include)), tuple(map(compile_glob, exclude)))

    def excludes(self, url: str | URL) -> bool:
        """True when ``url`` is excluded: it matches an exclude, or includes are given and
        it matches none."""
        target = path_and_query(url)
        if any(pattern.match(target) for pattern in self.exclude):
            return True
        return bool(self.include) and not any(pattern.match(target)
                                              for pattern in self.include)
