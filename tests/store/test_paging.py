import re
import string

from hypothesis import given
from hypothesis import strategies as st

from pipeline.core.models import ErrorInfo, ExtractOptions, Record
from pipeline.core.truncate import MARKER, truncate
from pipeline.store.cache import TextCache
from pipeline.store.paging import FULL_TEXT_CHARS, page_record, read_windows, window

prose = st.lists(
    st.one_of(
        st.text(string.ascii_letters, min_size=1, max_size=15),  # faster than from_regex
        st.sampled_from([". ", "\n\n", " ", "! ", "\n", "。"]),
        st.text(min_size=1, max_size=30),
    ),
    max_size=120,
).map(" ".join)


def all_windows(text: str, max_chars: int) -> list[str]:
    windows, offset = [], 0
    while True:
        text_part, offset = window(text, offset, max_chars)
        windows.append(text_part)
        if offset is None:
            return windows
        assert len(windows) <= len(text) + 1  # always progresses


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@given(prose, st.integers(min_value=len(MARKER) + 1, max_value=300))
def test_windows_cover_the_text_within_budget(text, max_chars):
    windows = all_windows(text, max_chars)
    assert all(len(w) <= max_chars for w in windows)
    kept = [w[: -len(MARKER)] if i < len(windows) - 1 else w for i, w in enumerate(windows)]
    assert all(w.endswith(MARKER) for w in windows[:-1])
    assert squash("".join(kept)) == squash(text)


@given(prose, st.integers(min_value=50, max_value=300))
def test_first_window_is_the_truncated_text(text, max_chars):
    first = window(text, 0, max_chars)
    cut = truncate(text, max_chars)
    assert first.text == cut.text
    assert first.next_offset == cut.next_offset


def test_offset_past_end_is_empty():
    assert window("short text", 500, 100) == ("", None)


def test_page_record_marks_truncation():
    text = "First paragraph here.\n\n" + "word " * 100
    full = Record(url="https://a.test/", ok=True, content=text, chars=len(text))
    first = page_record(full, 0, 60)
    assert first.truncated and first.next_offset and first.chars == len(first.content) <= 60
    rest = page_record(full, first.next_offset, 10_000)
    assert not rest.truncated and rest.next_offset is None
    assert rest.content == text[first.next_offset :]


TEXT = "\n\n".join(f"Paragraph {i}. " + "word " * 30 for i in range(40))


class FakeExtract:
    def __init__(self):
        self.calls = []

    async def __call__(self, urls, options):
        self.calls.append((list(urls), options.format, options.max_chars))
        return [
            Record(url=u, ok=True, content=TEXT, chars=len(TEXT))
            if "bad" not in u
            else Record.failure(u, ErrorInfo(kind="timeout", message="slow"))
            for u in urls
        ]


async def test_read_windows_pages_from_the_cache(tmp_path):
    cache = TextCache(tmp_path)
    extract = FakeExtract()
    options = ExtractOptions(format="markdown", max_chars=500)
    [first] = await read_windows(extract, ["https://a.test/"], options, cache=cache)
    assert first.truncated and len(first.content) <= 500 and first.next_offset
    assert extract.calls == [(["https://a.test/"], "markdown", FULL_TEXT_CHARS)]

    pieces, offset = [first.content], first.next_offset
    while offset is not None:
        [window_record] = await read_windows(
            extract, ["https://a.test/"], options, offset=offset, cache=cache
        )
        pieces.append(window_record.content)
        offset = window_record.next_offset
    assert len(extract.calls) == 1  # every later window came from the cache
    kept = "".join(p.removesuffix(MARKER) for p in pieces)
    assert re.sub(r"\s+", "", kept) == re.sub(r"\s+", "", TEXT)


async def test_read_windows_batches_misses_and_keys_by_options(tmp_path):
    cache = TextCache(tmp_path)
    extract = FakeExtract()
    urls = ["https://a.test/", "https://b.test/", "https://bad.test/"]
    options = ExtractOptions(format="markdown", max_chars=100_000)
    records = await read_windows(extract, urls, options, cache=cache, identity={"p": ["x"]})
    assert [r.ok for r in records] == [True, True, False]
    assert extract.calls[0][0] == urls  # one call for all the misses
    await read_windows(extract, urls, options, cache=cache, identity={"p": ["x"]})
    assert extract.calls[1][0] == ["https://bad.test/"]  # failures are not cached
    await read_windows(extract, urls[:1], options.model_copy(update={"format": "text"}),
                       cache=cache, identity={"p": ["x"]})
    await read_windows(extract, urls[:1], options, cache=cache, identity={"p": ["y"]})
    assert [c[0] for c in extract.calls[2:]] == [urls[:1], urls[:1]]  # other keys, refetched
