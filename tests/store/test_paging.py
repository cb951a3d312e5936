import re
import string

from hypothesis import given
from hypothesis import strategies as st

from pipeline.core.models import Record
from pipeline.core.truncate import MARKER, truncate
from pipeline.store.paging import page_record, window

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
