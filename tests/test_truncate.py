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


_PIECES = st.sampled_from(["word", "ab", "x", " ", ". ", "\n\n", "! ", "longerword"])


@given(st.lists(_PIECES, min_size=1, max_size=120).map("".join),
       st.integers(min_value=1, max_value=300))
def test_cut_prefers_paragraph_then_sentence_then_word_then_hard(text, budget):
    cut = find_cut(text, budget)
    if len(text) <= budget:
        assert cut == (len(text), "none")
        return
    assert 0 <= cut.end <= budget
    paragraph_in_latter_half = any(
        text.startswith("\n\n", i) for i in range(budget // 2, budget + 1))
    sentence_past_30 = any(
        text[i - 1] in ".!" and i < len(text) and text[i].isspace()
        for i in range(max(1, int(budget * 0.3) + 1), budget + 1))
    if cut.boundary == "paragraph":
        assert text.startswith("\n\n", cut.end) and cut.end >= budget // 2
    else:
        assert not paragraph_in_latter_half
    if cut.boundary == "sentence":
        assert text[cut.end - 1] in ".!" and text[cut.end].isspace()
    elif cut.boundary != "paragraph":
        assert not sentence_past_30
    if cut.boundary == "word":
        assert text[cut.end].isspace()
    if cut.boundary == "hard":
        assert cut.end == budget and not any(c.isspace() for c in text[1 : budget + 1])


def test_budget_smaller_than_the_marker_is_a_plain_cut_that_still_advances():
    result = truncate("abcdefghijklmnopqrstuvwxyz", 5)
    assert result == ("abcde", True, 5)


def test_titles_and_metadata_are_clipped_at_any_depth():
    from pipeline.truncate import (
        METADATA_CHARS,
        METADATA_ITEMS,
        TITLE_CHARS,
        clip_metadata,
        clip_title,
    )
    assert len(clip_title("T " * 100_000)) <= TITLE_CHARS and clip_title(None) is None
    clipped = clip_metadata({"description": "d " * 100_000, "n": 3,
                             "tags": ["t " * 5_000] * 1_000, "ld": {"x": ["y " * 5_000]}})
    assert len(clipped["description"]) <= METADATA_CHARS and clipped["n"] == 3
    assert len(clipped["tags"]) == METADATA_ITEMS
    assert all(len(t) <= METADATA_CHARS for t in clipped["tags"])
    assert len(clipped["ld"]["x"][0]) <= METADATA_CHARS
