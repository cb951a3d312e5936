"""--dedup: normalisation and shingles (property tests), exact and near marking, dropping, a
resumed deduplicator marking as an uninterrupted one, and the engine's output order."""

from __future__ import annotations

import asyncio
import io
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.batch import dedup
from pipeline.batch.dedup import Deduplicator, normalized, shingles
from pipeline.batch.engine import BatchEngine
from pipeline.batch.input.items import read_items
from pipeline.batch.scheduler import StreamScheduler
from pipeline.core.models import ErrorInfo, Record
from pipeline.core.settings import load_settings

WORDS = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
SPACE = st.sampled_from([" ", "  ", "\n", "\t", " \n\n "])
VOCABULARY = [f"word{n}" for n in range(400)]


@st.composite
def respaced(draw):
    """A list of words and a text of them with arbitrary white space around and between."""
    chosen = draw(st.lists(WORDS, min_size=1, max_size=40))
    gaps = draw(st.lists(SPACE, min_size=len(chosen) + 1, max_size=len(chosen) + 1))
    text = gaps[0] + "".join(word + gap for word, gap in zip(chosen, gaps[1:], strict=True))
    return chosen, text


@given(respaced())
def test_normalised_text_is_its_words_joined_by_one_space(case):
    words, text = case
    assert normalized(text) == " ".join(words)
    assert normalized(normalized(text)) == normalized(text)


@given(respaced(), st.integers(1, 8))
def test_shingles_are_every_run_of_words(case, size):
    words, text = case
    found = shingles(text, size)
    assert len(found) == max(1, len(words) - size + 1)
    assert all(len(shingle.split()) == min(size, len(words)) for shingle in found)
    assert found[0].split() == words[:size] and found[-1].split() == words[-size:]
    assert shingles(text.upper(), size) == found  # case does not count


@given(st.lists(st.sampled_from(["/a", "https://one.test/x", "../b (c)", ""]), min_size=2,
                max_size=2))
def test_a_link_target_does_not_count(targets):
    """The same page under another URL resolves its relative links elsewhere."""
    first, second = (f"See [the report]({target}) for the figures of the year." for target
                     in targets)
    assert shingles(first) == shingles(second)


def record(index: int, content: str | None, **fields) -> Record:
    if content is None:
        return Record.failure(f"https://a.test/{index}", ErrorInfo(kind="timeout", message="t"),
                              index=index)
    return Record(url=f"https://a.test/{index}", index=index, ok=True, content=content,
                  chars=len(content), **fields)


def marks(deduplicator: Deduplicator, records) -> list[int | None]:
    return [deduplicator.mark(r).duplicate_of for r in records]


def test_exact_marks_the_first_record_with_the_same_text():
    texts = ["one two", "three", "one  two\n", None, "three", "four", "one two"]
    records = [record(i, text) for i, text in enumerate(texts)]
    assert marks(Deduplicator("exact"), records) == [None, None, 0, None, 1, None, 0]


def test_a_duplicate_keeps_its_content_unless_dropped():
    first, again = record(0, "the text"), record(1, "the  text", title="T")
    kept = Deduplicator("exact")
    kept.mark(first)
    assert kept.mark(again).content == "the  text"
    dropping = Deduplicator("exact", drop=True)
    dropping.mark(first)
    dropped = dropping.mark(again)
    assert (dropped.ok, dropped.content, dropped.chars, dropped.duplicate_of) == (False, None, 0, 0)
    assert dropped.error.kind == "filtered" and "duplicate of record 0" in dropped.error.message
    assert dropped.title == "T"
    assert Record.model_validate_json(dropped.to_json()) == dropped  # a valid record


def article(rng: random.Random, words: int = 300) -> list[str]:
    return rng.choices(VOCABULARY, k=words)


def changed(words: list[str], rng: random.Random, count: int) -> list[str]:
    copy = list(words)
    for place in rng.sample(range(len(copy)), count):
        copy[place] = "changed"
    return copy


def test_near_marks_a_copy_with_a_few_words_changed_and_not_another_text():
    rng = random.Random(1)
    first, other = article(rng), article(rng)
    copy = changed(first, rng, 3)
    records = [record(0, " ".join(first)), record(1, " ".join(other)),
               record(2, "Menu Home\n\n" + " ".join(copy) + "\n\nFooter links")]
    assert marks(Deduplicator("near"), records) == [None, None, 0]


def test_near_uses_the_documented_threshold():
    """A copy at Jaccard ~0.9 over 5-word shingles is marked; one at ~0.6 is not."""
    rng = random.Random(2)
    words = article(rng, 600)
    # every changed word removes up to 5 shingles of ~600
    close, far = changed(words, rng, 6), changed(words, rng, 30)
    for copy, expected in ((close, 0), (far, None)):
        similarity = (len(set(shingles(" ".join(words))) & set(shingles(" ".join(copy))))
                      / len(set(shingles(" ".join(words))) | set(shingles(" ".join(copy)))))
        assert (similarity >= 0.85) if expected == 0 else (similarity <= 0.7)
        deduplicator = Deduplicator("near")
        assert marks(deduplicator, [record(0, " ".join(words)),
                                    record(1, " ".join(copy))]) == [None, expected]
    assert dedup.NEAR_THRESHOLD == 0.8


def test_near_points_at_the_lowest_index_among_the_matches():
    """Two remembered texts unlike each other (changes in different places) both match the
    text between them."""
    rng = random.Random(3)
    words = article(rng)
    one, two = list(words), list(words)
    for place in range(0, 40, 10):
        one[place], two[-1 - place] = "changed", "altered"
    deduplicator = Deduplicator("near")
    assert deduplicator.index.first_or_add(9, " ".join(one)) is None
    assert deduplicator.index.first_or_add(4, " ".join(two)) is None  # both remembered
    assert deduplicator.mark(record(12, " ".join(words))).duplicate_of == 4


@st.composite
def runs(draw):
    """Texts with exact and near repeats, and where a run was cut (crash or stop)."""
    rng = random.Random(draw(st.integers(0, 1000)))
    bases = [article(rng, 80) for _ in range(draw(st.integers(1, 4)))]
    texts = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["same", "near", "new", "error"]))
        base = rng.choice(bases)
        texts.append({"same": " ".join(base), "near": " ".join(changed(base, rng, 1)),
                      "new": " ".join(article(rng, 80)), "error": None}[kind])
    return texts, draw(st.integers(0, len(texts))), draw(st.booleans())


@pytest.mark.parametrize("mode", ["exact", "near"])
@settings(max_examples=40, deadline=None)
@given(case=runs())
def test_a_resumed_deduplicator_marks_as_an_uninterrupted_one(mode, case):
    texts, cut, drop = case
    records = [record(i, text) for i, text in enumerate(texts)]
    uninterrupted = Deduplicator(mode, drop=drop)
    whole = [uninterrupted.mark(r) for r in records]
    written = whole[:cut]  # what the output held when the run stopped
    resumed = Deduplicator(mode, drop=drop)
    for r in written:
        resumed.remember(r.index, r.content, r.duplicate_of)
    assert [resumed.mark(r) for r in records[cut:]] == whole[cut:]


def test_near_without_rensa_says_what_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "rensa", None)
    with pytest.raises(Exception, match=r"pip install -e '\.\[dedup\]'"):
        Deduplicator("near")


async def test_a_stopped_ordered_run_with_marks_writes_an_input_order_prefix():
    """Past the first unfinished line nothing is written, so --resume sees the same order."""
    release = asyncio.Event()

    async def extract(url: str) -> Record:
        if url.endswith("/2"):
            await release.wait()
        return Record(url=url, ok=True, content="same text", chars=9)

    urls = "".join(f"http://example.test/{n}\n" for n in range(8)).encode()
    config = load_settings({"concurrency": 4, "ordered": True}, env={})
    written: list[Record] = []
    deduplicator = Deduplicator("exact")
    engine = BatchEngine(config, extract, written.append, mark=deduplicator.mark, grace=0.05)
    stop = asyncio.Event()
    work = StreamScheduler.reading(read_items(io.BytesIO(urls)))
    running = asyncio.ensure_future(engine.run(work, stop))
    while len(written) < 2:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # lines 3-5 finish and wait behind line 2
    stop.set()
    await asyncio.wait_for(running, 5)
    assert [(r.index, r.duplicate_of) for r in written] == [(0, None), (1, 0)]


HAN = [chr(code) for code in range(0x4E00, 0x4E00 + 600)]
KANA = [chr(code) for code in range(0x3042, 0x3094)]


def cjk_text(rng: random.Random, letters: list[str], length: int = 400) -> str:
    """A text without spaces, in sentences ending with the ideographic full stop."""
    sentences = ("".join(rng.choices(letters, k=rng.randint(15, 30))) + "。"
                 for _ in range(length // 22))
    return "".join(sentences)


@pytest.mark.parametrize("letters", [HAN, HAN + KANA], ids=["chinese", "japanese"])
def test_near_marks_a_chinese_or_japanese_copy_and_not_another_text(letters):
    """No space between words: each character is a word, so shingles are characters."""
    rng = random.Random(7)
    first, other = cjk_text(rng, letters), cjk_text(rng, letters)
    copy = list(first)
    for place in rng.sample(range(len(copy)), 3):
        copy[place] = "字"
    records = [record(0, first), record(1, other),
               record(2, "导航 首页\n\n" + "".join(copy) + "\n\n版权所有")]
    assert marks(Deduplicator("near"), records) == [None, None, 0]


def test_words_are_characters_only_in_scripts_without_spaces():
    assert dedup.words_of("Ein Satz, 中文字 and かな。ok") == [
        "Ein", "Satz,", "中", "文", "字", "and", "か", "な", "。ok"]
    korean = "한국어 문장은 띄어 씁니다 여기 있어요"  # spaces between words: split as before
    assert shingles(korean, 5)[0] == "한국어 문장은 띄어 씁니다 여기"
