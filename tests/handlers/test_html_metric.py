from benchmarks.shingle_metric import corpus_score, score_page, shingles, tokens


def test_identical_texts_score_one():
    text = "The quick brown fox jumps over the lazy dog, again and again."
    score = score_page(text, text)
    assert (score.precision, score.recall, score.exact) == (1.0, 1.0, True)


def test_punctuation_and_whitespace_are_ignored_but_case_is_kept():
    assert score_page("Hello,   world!\n\nok", "Hello world ok").exact
    assert not score_page("hello world ok", "Hello world ok").exact


def test_disjoint_texts_score_zero():
    score = score_page("one two three four five", "six seven eight nine ten")
    assert (score.precision, score.recall, score.exact) == (0.0, 0.0, False)


def test_short_texts_make_one_short_shingle():
    assert shingles(tokens("two words")) == {("two", "words"): 1}
    assert score_page("two words", "two words").recall == 1.0
    assert score_page("", "two words").precision is None


def test_shingles_are_a_multiset():
    # "a b c d" twice in truth, once predicted: half of the true shingles are found.
    score = score_page("a b c d", "a b c d a b c d")
    assert score.precision == 1.0
    assert 0 < score.recall < 1


def test_corpus_f1_is_harmonic_mean_of_mean_precision_and_mean_recall():
    pages = [score_page("a b c d e", "a b c d e"), score_page("a b c d x", "a b c d e f g")]
    result = corpus_score(pages)
    p = (1.0 + 0.5) / 2
    r = (1.0 + 1 / 4) / 2
    assert abs(result.precision - p) < 1e-9
    assert abs(result.recall - r) < 1e-9
    assert abs(result.f1 - 2 * p * r / (p + r)) < 1e-9
    assert result.accuracy == 0.5


def test_pages_without_predicted_shingles_do_not_count_for_precision():
    pages = [score_page("", "a b c d"), score_page("a b c d", "a b c d")]
    result = corpus_score(pages)
    assert result.precision == 1.0
    assert result.recall == 0.5


def test_paired_bootstrap_sees_a_small_consistent_gain_and_no_change():
    from benchmarks.shingle_metric import PageScore, paired_bootstrap

    before = [PageScore(0.80 + i % 7 / 100, 0.70 + i % 5 / 100, False) for i in range(60)]
    after = [PageScore(p.precision + 0.01, p.recall, False) for p in before]
    gain = paired_bootstrap(before, after)
    assert gain.delta > 0 and gain.low > 0 and gain.verdict == "better" and gain.worse == 0
    same = paired_bootstrap(before, before)
    assert (same.delta, same.low, same.high, same.verdict) == (0, 0, 0, "same")
    assert paired_bootstrap(after, before).verdict == "worse"
