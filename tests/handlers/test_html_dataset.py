"""A few real pages of the article-extraction benchmark (kept beside the repo, as in CI;
skipped when absent)."""

import gzip
import json
from pathlib import Path

import pytest

from benchmarks.shingle_metric import score_page
from handlers.html import HTML_HANDLER
from handlers.registry import HandlerContext

# (id prefix, minimum per-page F1): news with a header block, a blog, a non-English page,
# a page whose article sits in a "widget"-named wrapper.
PAGES = [("06e5123e4ef7", 0.95), ("0e014df693f1", 0.9), ("f105de6e63ca", 0.75),
         ("34a7328535ad", 0.9), ("2f42ef1d3ea0", 0.9)]


@pytest.fixture(scope="module")
def truth(news_dataset: Path) -> dict:
    return json.loads((news_dataset / "ground-truth.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("prefix", "minimum"), PAGES)
def test_real_page_f1(news_dataset, truth, prefix, minimum):
    page_id = next(k for k in truth if k.startswith(prefix))
    body = gzip.decompress((news_dataset / "html" / f"{page_id}.html.gz").read_bytes())
    doc = HTML_HANDLER.handle(body, HandlerContext(url=truth[page_id]["url"], format="text"))
    score = score_page(doc.content, truth[page_id]["articleBody"])
    f1 = 2 * score.precision * score.recall / (score.precision + score.recall)
    assert f1 >= minimum
    assert doc.title
