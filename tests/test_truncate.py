from hypothesis import given
from hypothesis import strategies as st

from pipeline.truncate import MARKER, find_cut, truncate


@given(st.text(), st.integers(min_value=0, max_value=400))
def test_never_over_budget_and_prefix(text, max_chars):
    result = truncate(text, max_chars)
    assert len(result.text) <= max_chars
    if result.truncated:
        kept = result.text[: -len(MARKER)] if result.text.endswith(MARKER) else ""
        assert text.startswith(kept)
    else:
        assert result.text == text


@given(st.lists(st.from_regex(r"[a-z]{1,12}", fullmatch=True), min_size=2, max_size=80),
       st.integers(min_value=30, max_value=300))
def test_no_mid_word_cut_when_window_has_space(words, max_chars):
    text = " ".join(words)
    result = truncate(text, max_chars)
    if result.truncated:
        kept = result.text[: -len(MARKER)]
        budget = max_chars - len(MARKER)
        if " " in text[:budget]:
            assert kept == "" or text[len(kept)] == " "


def test_boundary_preference_order():
    para = "First paragraph sentence one. Sentence two.\n\nSecond paragraph goes on and on"
    assert find_cut(para, 60).boundary == "paragraph"
    sentence = "A" * 30 + ". " + "b " * 40
    assert find_cut(sentence, 60).boundary == "sentence"
    words = "word " * 30
    assert find_cut(words, 42).boundary == "word"
    assert find_cut("x" * 100, 42) == (42, "hard")


def test_next_offset_resumes_after_the_cut():
    text = "Alpha beta gamma. " * 20
    result = truncate(text, 80)
    assert result.truncated and result.next_offset is not None
    assert text[result.next_offset :].startswith("Alpha")
