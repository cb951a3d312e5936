import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.core.truncate import MARKER, find_cut, truncate


@given(st.text(), st.integers(min_value=0, max_value=400))
def test_never_over_budget_and_prefix(text, max_chars):
    result = truncate(text, max_chars)
    assert len(result.text) <= max_chars
    if result.truncated:
        kept = result.text[: -len(MARKER)] if result.text.endswith(MARKER) else ""
        assert text.startswith(kept)
    else:
        assert result.text == text


# Character-class strategies are st.text over the class: st.from_regex draws the same strings
# at ~100x the CPU, which made these tests outlast the suite's timeout on a loaded machine.
def _letters(low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(string.ascii_lowercase, min_size=low, max_size=high)


@given(st.lists(_letters(1, 12), min_size=2, max_size=80),
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
    from pipeline.core.truncate import (
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


# --- markdown: the cut leaves valid markdown (checked by an independent CommonMark parser)

_WORD = _letters(1, 10)
_URL = st.text(string.ascii_lowercase + "/", max_size=20).map("https://e.test/".__add__)
_WORDS = st.lists(_WORD, min_size=1, max_size=6).map(" ".join)
_LINK = st.builds(lambda text, url, image: f"{'!' if image else ''}[{text}]({url})",
                  _WORDS, _URL, st.booleans())
_INLINE = st.lists(st.one_of(_WORD, _WORD.map(lambda w: w + "."), _LINK), min_size=1,
                   max_size=25).map(" ".join)


@st.composite
def _table(draw) -> str:
    width = draw(st.integers(2, 4))
    cell = st.one_of(_WORDS, _LINK)
    rows = draw(st.lists(st.lists(cell, min_size=width, max_size=width), min_size=1,
                         max_size=6))
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows[1:]])


@st.composite
def _code(draw) -> str:
    marks = draw(st.sampled_from(["```", "````", "~~~"]))
    info = draw(st.sampled_from(["", "json", "python"]))
    # code that looks like tables, links, and fences that do not close this one
    line = st.one_of(st.text(string.ascii_lowercase + '|[]() {}:",', max_size=30),
                     st.just("```" if marks != "```" else "``"), _LINK, _table())
    body = draw(st.lists(line, min_size=1, max_size=8))
    return f"{marks}{info}\n" + "\n".join(body) + f"\n{marks}"


_BLOCK = st.one_of(_INLINE, _WORDS.map("# ".__add__), _INLINE.map("- ".__add__), _table(),
                   _code())
# Opening with a paragraph: a safe cut always exists (a link or row longer than the whole
# budget at the very start must be cut inside: a window has to move on).
_MARKDOWN = st.builds(lambda first, blocks: "\n\n".join([first, *blocks]),
                      _WORDS, st.lists(_BLOCK, max_size=8))


def _parse(text):
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").parse(text)


def _kept(source: str, result_text: str) -> str:
    """The part of ``source`` a markdown cut kept: the result without the marker and what
    :func:`~pipeline.core.markdown_cut.closing` put before it (the longest reading that fits)."""
    from pipeline.core.markdown_cut import closing

    body = result_text.removesuffix(MARKER)
    readings = [body[:len(body) - len(tail)] for tail in _TAILS if body.endswith(tail)]
    kept = [k for k in readings if source.startswith(k) and closing(k, MARKER) == body[len(k):]]
    assert kept, result_text
    return max(kept, key=len)


_TAILS = ("", "\n", "\n\n", "\n```\n", "\n````\n", "\n~~~\n")


def assert_valid_cut(source: str, text: str) -> None:
    tokens = _parse(text)
    inline = [t for t in tokens if t.type == "inline"]
    # the marker reads as text: not inside a code block, not an extra (dropped) table cell
    assert inline and inline[-1].content.endswith("[truncated]"), text
    assert not any("[truncated]" in t.content for t in tokens if t.type in ("fence", "code_block"))
    # no link cut short: a bracket left over in text means a link lost its end
    for token in inline:
        for child in token.children or []:
            if child.type == "text":
                assert "[" not in child.content.replace("[truncated]", ""), text
                assert "]" not in child.content.replace("[truncated]", ""), text
    # no table row cut short
    kept = _kept(source, text)
    rows = {t.map[0] for t in _parse(kept) if t.type == "tr_open"}
    last_line = kept.count("\n")
    if last_line in rows:
        assert source[len(kept):len(kept) + 1] in ("", "\n"), text


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_MARKDOWN, st.integers(min_value=len(MARKER) + 1, max_value=500))
def test_markdown_cut_is_valid_markdown_within_the_budget(source, max_chars):
    result = truncate(source, max_chars, markdown=True)
    assert len(result.text) <= max_chars
    if not result.truncated:
        assert result.text == source
        return
    assert_valid_cut(source, result.text)
    # the next window starts right after what this one kept
    kept = _kept(source, result.text)
    assert len(kept) <= result.next_offset and not source[len(kept):result.next_offset].strip()
    assert source[result.next_offset:]  # there is more to read


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_BLOCK, min_size=1, max_size=8).map("\n\n".join),
       st.integers(min_value=0, max_value=80))
def test_markdown_cut_stays_within_tiny_budgets_and_moves_on(source, max_chars):
    result = truncate(source, max_chars, markdown=True)
    assert len(result.text) <= max_chars
    assert not result.truncated or result.next_offset > 0 or max_chars == 0


def test_a_cut_inside_a_json_fence_closes_it_within_the_budget():
    import json

    pretty = json.dumps({f"key{i}": f"value number {i}" for i in range(40)}, indent=2)
    source = f"```json\n{pretty}\n```"
    result = truncate(source, 300, markdown=True)
    assert len(result.text) <= 300
    assert result.text.endswith(f"\n```\n{MARKER}")
    assert [t.type for t in _parse(result.text)][:1] == ["fence"]
    assert_valid_cut(source, result.text)


def test_a_cut_moves_back_to_the_start_of_a_table_row_or_a_link():
    rows = "\n".join(f"| [page {i}](https://e.test/{i}) | some words here |" for i in range(9))
    table = f"| a | b |\n| --- | --- |\n{rows}"
    result = truncate(table, 120, markdown=True)
    assert _kept(table, result.text).endswith("| some words here |")
    assert result.text.endswith(f" |\n\n{MARKER}")  # a blank line: the marker is no cell
    prose = "Read " + " ".join(f"[the chapter number {i}](https://e.test/{i})" for i in range(9))
    cut = truncate(prose, 100, markdown=True)
    assert _kept(prose, cut.text).endswith(")") and prose[cut.next_offset] == "["


def test_plain_text_is_cut_as_before():
    source = "```json\n" + "word " * 100
    text = truncate(source, 100).text
    assert source.startswith(text.removesuffix(MARKER)) and "\n```\n" not in text
