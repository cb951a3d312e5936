"""A PDF under the byte cap whose streams inflate to gigabytes is refused before PDFium."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from handlers.pdf import PDF_HANDLER
from handlers.pdf_bounds import check_inflated_size, inflated_size
from handlers.registry import HandlerContext
from pipeline.core.errors import PipelineError
from tests.hostile.zoo import _pdf_bomb

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CTX = HandlerContext(url="http://x.test/a.pdf", final_url="http://x.test/a.pdf",
                     media_type="application/pdf", charset=None, format="text", options={})


def test_inflated_size_counts_zlib_and_stops_past_the_budget():
    data = zlib.compress(b"a" * 5_000_000)
    assert inflated_size(data, 10_000_000) == 5_000_000
    assert 1_000_000 < inflated_size(data, 1_000_000) <= 2_100_000  # one window past, no more
    assert inflated_size(b"not zlib at all", 100) == 0


def test_a_pdf_bomb_is_too_large_before_pdfium_reads_it():
    bomb = _pdf_bomb(300)
    assert len(bomb) < 400_000
    with pytest.raises(PipelineError) as caught:
        PDF_HANDLER.handle(bomb, CTX)
    assert caught.value.kind == "too_large"


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.pdf")))
def test_ordinary_pdfs_pass_the_check(name):
    check_inflated_size((FIXTURES / name).read_bytes())
