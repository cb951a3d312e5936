"""benchmarks/dedup.py and benchmarks/language.py on a tiny hand-made dataset (no shared
dataset needed): a planted copy is made and marked, languages are compared with the
declared ones."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import lxml.html
import pytest

from benchmarks import dedup as dedup_bench
from benchmarks import language as language_bench

ENGLISH = [
    "The harbour master said the new breakwater would be finished before the winter storms, "
    "and that the fishing fleet could return to the inner basin in March.",
    "Work on the northern pier began two years ago, after a storm tore away most of the old "
    "wooden jetty and left three trawlers stranded on the shingle for a week.",
    "Engineers chose granite blocks from a quarry up the coast, because concrete poured in "
    "salt water cracked within a decade on the last project of its kind.",
    "Local traders hope that a sheltered harbour will bring back the summer ferries, which "
    "stopped calling when insurers refused to cover berths exposed to the open sea.",
    "The council expects the final bill to come in below the original estimate, although a "
    "dispute over the lighthouse access road has still to be settled in court.",
]
GERMAN = [
    "Der Hafenmeister sagte, der neue Wellenbrecher werde vor den Winterstürmen fertig, und "
    "die Fischereiflotte könne im März in das innere Becken zurückkehren.",
    "Die Arbeiten am nördlichen Pier begannen vor zwei Jahren, nachdem ein Sturm den alten "
    "Holzsteg fortgerissen und drei Trawler eine Woche lang auf dem Kies festgesetzt hatte.",
    "Die Ingenieure wählten Granitblöcke aus einem Steinbruch an der Küste, weil Beton im "
    "Salzwasser beim letzten Vorhaben dieser Art schon nach zehn Jahren Risse bekam.",
    "Die Händler hoffen, dass ein geschützter Hafen die Sommerfähren zurückbringt, die "
    "ausblieben, als die Versicherer offene Liegeplätze nicht mehr decken wollten.",
    "Der Stadtrat rechnet mit Kosten unter der ersten Schätzung, auch wenn ein Streit um die "
    "Zufahrt zum Leuchtturm noch vor Gericht geklärt werden muss.",
]


def html(lang: str, title: str, paragraphs: list[str]) -> str:
    return (f"<html lang='{lang}'><head><title>{title}</title></head><body><nav><a href='/'>"
            "Home</a> <a href='/news'>News</a></nav><article><h1>" + title + "</h1>"
            + "".join(f"<p>{text}</p>" for text in paragraphs)
            + "<p><a href='/more'>More on the works</a></p></article><footer>© Port news"
            "</footer></body></html>")


PAGES = {"en1": ("en", html("en", "Harbour", ENGLISH)),
         "de1": ("de-DE", html("de-DE", "Hafen", GERMAN))}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    (tmp_path / "html").mkdir()
    truth = {}
    for page_id, (_, html) in PAGES.items():
        (tmp_path / "html" / f"{page_id}.html.gz").write_bytes(gzip.compress(html.encode()))
        truth[page_id] = {"url": f"https://example.test/{page_id}/", "articleBody": ""}
    (tmp_path / "ground-truth.json").write_text(json.dumps(truth))
    return tmp_path


def test_a_planted_copy_has_other_navigation_and_a_few_words_changed():
    body = PAGES["en1"][1].encode()
    copy = dedup_bench.plant(body, random.Random(1)).decode()
    assert "<nav>" in copy and "Home</a>" not in copy and "Port news" not in copy
    words = [" ".join(lxml.html.fromstring(html).find(".//article").itertext()).split()
             for html in (body, copy.encode())]
    changed = sum(before != after for before, after in zip(*words, strict=True))
    assert 1 <= changed <= dedup_bench.CHANGED_WORDS


def test_the_dedup_benchmark_marks_the_planted_copies(dataset, capsys):
    assert dedup_bench.main(["--dataset", str(dataset), "--memory", "0"]) == 0
    report = capsys.readouterr().out
    assert "| near (rensa) | 2/2 = 1.000 | 0/2 = 0.000 |" in report
    assert "| exact | 0/2 = 0.000 | 0/2 = 0.000 |" in report  # words changed: not exact


def test_the_language_benchmark_compares_with_the_declared_language(dataset, capsys):
    assert language_bench.main(["--dataset", str(dataset)]) == 0
    report = capsys.readouterr().out
    assert "| ours (fastText lid.176.ftz, first 1,000 chars) | 2/2 = 1.000 |" in report
