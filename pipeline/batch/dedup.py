"""``--dedup exact|near``: mark each record whose text an earlier record already has.

Records are compared in the order they are written, which with ``--dedup`` is input order
(the run is ``--ordered``: :func:`pipeline.batch.run.engine_settings`), so of two copies the
earlier input line is the original: a record whose text matches one before it gets
``duplicate_of``, that record's ``index`` (the lowest, when several distinct ones match); it
keeps its content unless ``--drop-duplicates`` (then it is ``filtered``). Only distinct texts
are remembered, since a duplicate's text is there already; the memory figures are
benchmarks/README.md's ("Duplicates"):

* ``exact``: the text with its white space normalised (runs of it one space, none at the
  ends), as a 16-byte BLAKE2b digest — about 90 bytes per distinct record.
* ``near``: MinHash (``rensa``, extra ``[dedup]``: :data:`NUM_PERM` permutations) over
  :data:`SHINGLE_WORDS`-word shingles (in Chinese and Japanese, where no space separates
  words, each character is a word) of the lower-cased text without markdown link
  targets (the same page under another URL resolves its relative links elsewhere), LSH
  (:data:`BANDS` bands) for candidates, and a match when the estimated Jaccard
  similarity is at least :data:`NEAR_THRESHOLD` — about 2.1 KB per distinct record.

A resumed run first :meth:`Deduplicator.remember`\\ s the records its output holds, in their
order, so it marks what follows as an uninterrupted run would. ``merge --dedup`` runs the
same over every shard's records in index order.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal, Protocol

from pipeline.core.errors import UsageError
from pipeline.core.extras import install_hint
from pipeline.core.models import Record

DedupMode = Literal["exact", "near"]
NEAR_THRESHOLD = 0.8
SHINGLE_WORDS = 5
NUM_PERM = 128
BANDS = 16  # of 8 rows: a pair at Jaccard 0.8 shares a band with probability 0.95
SEED = 26  # fixed, so a resumed run and merge hash as the first run did
# a link target, one level of parentheses inside; atomic: the choices cannot overlap anyway
_LINK_TARGET = re.compile(r"\]\((?>(?:[^()]|\([^()]*\))*)\)")
# Chinese and Japanese write no spaces between words: each of their characters is a word
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana, Han ideographs
_HAS_CJK = re.compile(f"[{_CJK}]")
_CJK_WORDS = re.compile(f"[{_CJK}]|[^{_CJK}]+")


def normalized(text: str) -> str:
    """``text`` with each run of white space one space, none at the ends."""
    return " ".join(text.split())


def words_of(text: str) -> list[str]:
    """The words of ``text``: split at white space, and each Chinese or Japanese character
    (kana, Han) a word of its own, since those scripts put no space between words."""
    words = text.split()
    if _HAS_CJK.search(text) is None:
        return words
    return [piece for word in words for piece in _CJK_WORDS.findall(word)]


def shingles(text: str, size: int = SHINGLE_WORDS) -> list[str]:
    """The ``size``-word shingles of ``text`` (lower-cased, markdown link targets removed;
    words as :func:`words_of` has them); a text of fewer words is one shingle."""
    words = words_of(_LINK_TARGET.sub("]", text).lower())
    if len(words) <= size:
        return [" ".join(words)]
    return list(map(" ".join, zip(*(words[start:] for start in range(size)), strict=False)))


class TextIndex(Protocol):
    """The texts seen so far, by the index of the record that had each first."""

    def first_or_add(self, index: int, text: str) -> int | None:
        """The lowest index of a remembered text ``text`` matches; None when none does,
        and ``text`` is then remembered as ``index``'s."""
        ...


class ExactIndex:
    """Texts equal once white space is normalised."""

    def __init__(self) -> None:
        self._first: dict[bytes, int] = {}

    def first_or_add(self, index: int, text: str) -> int | None:
        key = hashlib.blake2b(normalized(text).encode(), digest_size=16).digest()
        first = self._first.setdefault(key, index)
        return None if first == index else first


def require_rensa() -> None:
    """A one-line ``UsageError`` saying how to install the MinHash library when it is not."""
    try:
        import rensa  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"--dedup near needs rensa: {install_hint('dedup')}") from exc


class NearIndex:
    """Texts whose shingle sets are at least :data:`NEAR_THRESHOLD` alike (MinHash, LSH)."""

    def __init__(self) -> None:
        require_rensa()
        import rensa

        self._minhash = rensa.RMinHash
        self._seen = rensa.RMinHashDeduplicator(NEAR_THRESHOLD, NUM_PERM, True, BANDS, SEED)

    def first_or_add(self, index: int, text: str) -> int | None:
        signature = self._minhash(NUM_PERM, SEED)
        signature.update(shingles(text))
        if found := self._seen.get_duplicates(signature):
            return min(map(int, found))
        self._seen.add(str(index), signature)
        return None


class Deduplicator:
    """Marks records as :mod:`this module <pipeline.batch.dedup>` says."""

    def __init__(self, mode: DedupMode, *, drop: bool = False) -> None:
        self.index: TextIndex = ExactIndex() if mode == "exact" else NearIndex()
        self.drop = drop

    def mark(self, record: Record) -> Record:
        """``record`` with ``duplicate_of`` when an earlier record had its text (or, with
        ``drop``, as a ``filtered`` record without content). Records without content pass."""
        if not record.ok or record.content is None or record.index is None:
            return record
        original = self.index.first_or_add(record.index, record.content)
        if original is None:
            return record
        if self.drop:
            return record.filtered(f"duplicate of record {original} (--dedup)",
                                   duplicate_of=original)
        return record.model_copy(update={"duplicate_of": original})

    def remember(self, index: int, content: str | None, duplicate_of: int | None) -> None:
        """A record written before (``--resume``): a distinct one's text is remembered."""
        if content is not None and duplicate_of is None:
            self.index.first_or_add(index, content)
