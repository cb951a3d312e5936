"""The article-extraction-benchmark metric: 4-token shingle precision/recall.

Facts from the dataset's README (our own implementation): ``\\w+`` tokens with case kept;
every window of 4 consecutive tokens counted as a multiset (1–3 tokens give one shorter
shingle); per-page precision and recall; corpus precision and recall are means over pages
that have any predicted / any true shingle; F1 is the harmonic mean of those two means;
accuracy is the share of pages whose token lists are identical.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+")
SHINGLE = 4


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text or "")


def shingles(words: Sequence[str], size: int = SHINGLE) -> Counter[tuple[str, ...]]:
    if not words:
        return Counter()
    if len(words) < size:
        return Counter([tuple(words)])
    return Counter(tuple(words[i : i + size]) for i in range(len(words) - size + 1))


@dataclass(frozen=True)
class PageScore:
    """One page: precision (None without predicted shingles), recall (None without true
    shingles) and whether the token lists are identical."""

    precision: float | None
    recall: float | None
    exact: bool


def score_page(predicted: str, truth: str) -> PageScore:
    pred_words, true_words = tokens(predicted), tokens(truth)
    pred, true = shingles(pred_words), shingles(true_words)
    tp = sum((pred & true).values())
    n_pred, n_true = sum(pred.values()), sum(true.values())
    return PageScore(
        precision=tp / n_pred if n_pred else None,
        recall=tp / n_true if n_true else None,
        exact=pred_words == true_words,
    )


@dataclass(frozen=True)
class CorpusScore:
    f1: float
    precision: float
    recall: float
    accuracy: float


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def corpus_score(pages: Sequence[PageScore]) -> CorpusScore:
    precision = _mean([p.precision for p in pages if p.precision is not None])
    recall = _mean([p.recall for p in pages if p.recall is not None])
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = _mean([1.0 if p.exact else 0.0 for p in pages])
    return CorpusScore(f1, precision, recall, accuracy)


def bootstrap_std(pages: Sequence[PageScore], rounds: int = 1000, seed: int = 0) -> CorpusScore:
    """Standard deviation of each corpus figure over page resamples with replacement."""
    rng = random.Random(seed)
    samples = [corpus_score(rng.choices(pages, k=len(pages))) for _ in range(rounds)]

    def std(values: list[float]) -> float:
        mean = _mean(values)
        return (sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1)) ** 0.5

    return CorpusScore(
        std([s.f1 for s in samples]),
        std([s.precision for s in samples]),
        std([s.recall for s in samples]),
        std([s.accuracy for s in samples]),
    )


@dataclass(frozen=True)
class Difference:
    """Corpus F1 of version B minus version A on the same pages, with a paired bootstrap."""

    delta: float
    low: float  # 2.5th percentile of the resampled differences
    high: float  # 97.5th percentile
    worse: float  # share of resamples where B scores below A

    @property
    def verdict(self) -> str:
        if self.low > 0:
            return "better"
        if self.high < 0:
            return "worse"
        return "same"


def paired_bootstrap(before: Sequence[PageScore], after: Sequence[PageScore],
                     rounds: int = 1000, seed: int = 0) -> Difference:
    """Resample pages with replacement, the same pages for both versions each round, and
    take the difference of the two corpus F1 scores: the noise of which pages happened to
    be in the set cancels out, so small real effects show."""
    if len(before) != len(after):
        raise ValueError("both versions must be scored on the same pages")
    rng = random.Random(seed)
    indices = range(len(before))
    deltas = []
    for _ in range(rounds):
        sample = rng.choices(indices, k=len(before))
        deltas.append(corpus_score([after[i] for i in sample]).f1
                      - corpus_score([before[i] for i in sample]).f1)
    deltas.sort()
    return Difference(
        delta=corpus_score(after).f1 - corpus_score(before).f1,
        low=deltas[int(0.025 * rounds)],
        high=deltas[min(int(0.975 * rounds), rounds - 1)],
        worse=sum(d < 0 for d in deltas) / rounds,
    )
