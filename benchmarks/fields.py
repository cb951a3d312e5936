"""Product fields (price, SKU, availability) on product-fields-dev: ours, extruct, the vendors.

    python benchmarks/fields.py [--dataset DIR] [--save FILE] [--compare FILE]
                                [--errors] [--cpu] [--passes 3]

Rows, all on the same pages in the same run:

* **ours**: the HTML handler with the built-in ``product`` schema (``--schema product``, no
  model): the record's ``fields``;
* **structured**: what records carry without a schema, ``metadata.structured``'s product
  (the one :func:`handlers.structured.main_product` picks, else the first);
* **extruct**: extruct (JSON-LD, microdata, OpenGraph) run here, read the way the
  benchmark's own extruct baseline reads it (the first product, its first offer; og
  price tags; price-parser), without that baseline's default of ``InStock`` for a page that
  says nothing;
* **Zyte**, **Diffbot**, **extruct (published)**: the published outputs (``peers/``).

Scored as the benchmark's ``evaluate.py`` does: per attribute, per page one predicted value
(or none) against the accepted values; price compared as a decimal, SKU and availability
exactly; F1 over all pages, ± the standard deviation of 1,000 bootstrap resamples (seed 42).
Availability is scored in the benchmark's two names: the schema.org names that mean a
product can be ordered (``PreOrder``, ``LimitedAvailability``, …) count as ``InStock``,
``SoldOut`` and ``Discontinued`` as ``OutOfStock``.

``--save FILE`` keeps ours per page; ``--compare FILE`` sets this run against such a file
(paired bootstrap of the F1 difference per attribute). ``--errors`` lists our wrong pages.
``--cpu`` times the handler per page on modern-web-dev with and without ``schema=product``
(alternating, ``time.process_time``, best of ``--passes``): the median per page of each
and of the difference.

``--article`` checks the ``article`` schema instead, on both article dev sets: its title,
byline and published date scored by ``benchmarks/metadata_quality.py``'s own checks beside
the record's title and metadata from the same run (the article-extraction benchmark's
title and byline heuristics; modern-web-dev's true titles, bylines and days), and on how
many pages the fields differ from that metadata at all (language included).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import random
import statistics
import sys
import time
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from handlers.html import HTML_HANDLER  # noqa: E402
from handlers.registry import HandlerContext, HandlerOptions  # noqa: E402
from handlers.structured import main_product, structured_of  # noqa: E402
from pipeline.core.errors import PipelineError  # noqa: E402
from pipeline.core.field_schemas import schema_text  # noqa: E402

DATASET = ROOT.parent / "shared" / "datasets" / "product-fields-dev"
ATTRIBUTES = ("price", "sku", "availability")
PEERS = ("Zyte", "Diffbot", "extruct")
_IN_STOCK = {"InStock", "PreOrder", "PreSale", "BackOrder", "LimitedAvailability",
             "InStoreOnly", "OnlineOnly", "MadeToOrder"}
_OUT_OF_STOCK = {"OutOfStock", "SoldOut", "Discontinued"}
Prediction = dict[str, str | None]
Counts = tuple[int, int, int]


def load(dataset: Path) -> tuple[dict[str, dict[str, Any]], dict[str, bytes]]:
    truth = json.loads((dataset / "ground-truth.json").read_text(encoding="utf-8"))
    pages = {page_id: gzip.decompress((dataset / "html" / f"{page_id}.html.gz").read_bytes())
             for page_id in sorted(truth)}
    return truth, pages


def two_names(availability: Any) -> str | None:
    """A schema.org availability name in the benchmark's two names."""
    if availability in _IN_STOCK:
        return "InStock"
    if availability in _OUT_OF_STOCK:
        return "OutOfStock"
    return None


def _price(value: Any) -> str | None:
    return None if value is None else str(value)


def ours(body: bytes, url: str, schema: str | None) -> tuple[Prediction, Prediction]:
    """(with the product schema, metadata.structured's product) for one page."""
    ctx = HandlerContext(url=url, format="text", options=HandlerOptions(schema=schema))
    try:
        document = HTML_HANDLER.handle(body, ctx)
    except PipelineError:
        return dict.fromkeys(ATTRIBUTES), dict.fromkeys(ATTRIBUTES)
    fields = document.fields or {}
    product: dict[str, Any] = dict(main_product(document.metadata) or next(
        iter(structured_of(document.metadata).get("Product", [])), {}))
    return ({"price": fields.get("price"), "sku": fields.get("sku"),
             "availability": two_names(fields.get("availability"))},
            {"price": _price(product.get("price")), "sku": product.get("sku"),
             "availability": two_names(product.get("availability"))})


def extruct_row(body: bytes, url: str) -> Prediction:
    """extruct's JSON-LD, microdata and OpenGraph, read as the benchmark's baseline does."""
    import extruct
    from price_parser import Price

    data = extruct.extract(body, base_url=url, uniform=True, errors="ignore",
                           syntaxes=["opengraph", "json-ld", "microdata"])
    found: Prediction = {}
    og = {k.lower(): v for k, v in (data.get("opengraph") or [{}])[0].items()} if data.get(
        "opengraph") else {}
    readings = [(og.get("og:price:amount") or og.get("product:price:amount"),
                 og.get("og:price:currency") or og.get("product:price:currency"),
                 og.get("og:availability") or og.get("product:availability"),
                 og.get("og:sku") or og.get("product:sku"))]
    for syntax in ("json-ld", "microdata"):
        product = next((item for item in data.get(syntax) or []
                        if "Product" in str(item.get("@type", ""))), None)
        if product is None:
            continue
        product = {k.lower(): v for k, v in product.items()}
        offers = product.get("offers") or []
        offer = (offers[0] if isinstance(offers, list) and offers
                 else offers if isinstance(offers, dict) else {})
        offer = offer if isinstance(offer, dict) else {}
        readings.append((offer.get("price") or offer.get("highPrice") or offer.get("lowPrice"),
                         offer.get("priceCurrency"), offer.get("availability"),
                         product.get("sku") or product.get("productid")))
    for price, currency, availability, sku in readings:  # later syntaxes win, as there
        if price is not None:
            parsed = Price.fromstring(str(price), currency_hint=str(currency or ""))
            if parsed.amount is not None:
                found["price"] = str(parsed.amount_float)
        state = str(availability or "").lower().replace(" ", "")
        if state.endswith(("instock", "in_stock", "limitedavailability", "presale",
                           "preorder", "instoreonly")):
            found["availability"] = "InStock"
        elif state.endswith(("outofstock", "out_of_stock", "soldout", "sold_out",
                             "discontinued")):
            found["availability"] = "OutOfStock"
        if sku:
            found["sku"] = str(sku)
    return found


# ----------------------------------------------------------------------- scoring
def counts(true: list[str], predicted: str | None, decimal: bool) -> Counts:
    """(tp, fp, fn) of one page, as evaluate.py counts them."""
    accepted: set[Any] = set(true)
    guess: Any = predicted
    if decimal:
        accepted = {Decimal(x) for x in true}
        try:
            guess = None if predicted is None else Decimal(predicted)
        except InvalidOperation:
            guess = object()  # a value that is no number is wrong
    if guess is None:
        return 0, 0, int(bool(accepted))
    if guess in accepted:
        return 1, 0, 0
    return 0, 1, int(bool(accepted))


def f1(rows: list[Counts]) -> float:
    tp, fp, fn = (sum(column) for column in zip(*rows, strict=True)) if rows else (0, 0, 0)
    precision = 1.0 if fp == fn == 0 else 0.0 if tp == fp == 0 else tp / (tp + fp)
    recall = 1.0 if fp == fn == 0 else 0.0 if tp == fn == 0 else tp / (tp + fn)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def bootstrap_std(rows: list[Counts], rounds: int = 1000) -> float:
    random.seed(42)
    n = len(rows)
    values = [f1([rows[random.randint(0, n - 1)] for _ in range(n)]) for _ in range(rounds)]
    return statistics.stdev(values)


def score(truth: dict[str, dict[str, Any]], predictions: dict[str, Prediction],
          attribute: str) -> list[Counts]:
    return [counts(truth[page].get(attribute) or [], (predictions.get(page) or {}).get(
        attribute), attribute == "price") for page in truth]


def paired(before: list[Counts], after: list[Counts], rounds: int = 1000
           ) -> tuple[float, float, float]:
    """(F1 after − before, 2.5th and 97.5th percentile over paired resamples)."""
    rng = random.Random(0)
    n = len(before)
    diffs = []
    for _ in range(rounds):
        picks = [rng.randrange(n) for _ in range(n)]
        diffs.append(f1([after[i] for i in picks]) - f1([before[i] for i in picks]))
    diffs.sort()
    return f1(after) - f1(before), diffs[int(0.025 * rounds)], diffs[int(0.975 * rounds)]


# ----------------------------------------------------------------------- CPU
def cpu(passes: int) -> tuple[float, float, float]:
    """(median ms per page without a schema, with ``product``, median per-page difference)
    on modern-web-dev: the best of ``passes`` alternating passes per page."""
    from benchmarks.quality import SETS, load_set

    pages = load_set(SETS["modern"])
    product = schema_text("product")
    best: dict[tuple[str, bool], float] = {}

    def timed(page: Any, schema: str | None) -> float:
        ctx = HandlerContext(url=page.url, format="text",
                             options=HandlerOptions(schema=schema))
        start = time.process_time()
        with contextlib.suppress(PipelineError):
            HTML_HANDLER.handle(page.body, ctx)
        return (time.process_time() - start) * 1000

    for _ in range(passes + 1):  # the first is a warm-up, kept only if it is faster
        for page in pages:
            for with_schema in (False, True):
                key = (page.id, with_schema)
                spent = timed(page, product if with_schema else None)
                best[key] = min(best.get(key, spent), spent)
    without = [best[(p.id, False)] for p in pages]
    with_ = [best[(p.id, True)] for p in pages]
    return (statistics.median(without), statistics.median(with_),
            statistics.median(b - a for a, b in zip(without, with_, strict=True)))


# ----------------------------------------------------------------------- article schema
def article_check(sets: dict[str, Path] | None = None) -> list[tuple[str, int, int, int]]:
    """(check, right by the record's metadata, right by the article schema's fields,
    pages) on the article dev sets (``news``, ``modern``; ``sets`` replaces their
    folders), scored as ``metadata_quality.py`` scores."""
    from benchmarks.metadata_quality import (
        _words,
        byline_found,
        confirmed_headlines,
        page_tree,
        title_right,
        visible_byline,
    )
    from benchmarks.quality import SETS, load_set

    article = schema_text("article")
    rows: dict[str, list[int]] = {}

    def add(check: str, metadata: bool, fields: bool) -> None:
        row = rows.setdefault(check, [0, 0, 0])
        row[0] += metadata
        row[1] += fields
        row[2] += 1

    for name, dataset in (sets or SETS).items():
        truths = json.loads((dataset / "ground-truth.json").read_text(encoding="utf-8"))
        for page in load_set(dataset):
            ctx = HandlerContext(url=page.url, format="text",
                                 options=HandlerOptions(schema=article))
            try:
                document = HTML_HANDLER.handle(page.body, ctx)
            except PipelineError:
                continue
            meta, fields = document.metadata, document.fields or {}
            reading = {"title": document.title, "byline": meta.get("byline"),
                       "published": meta.get("published"),
                       "modified": meta.get("modified"), "language": meta.get("lang")}
            add(f"{name}: pages whose fields equal the metadata", True,
                fields == reading)
            if name == "news":
                root = page_tree(page.body)
                right = [title_right(title, page.url, meta.get("site_name"),
                                     confirmed_headlines(root))
                         for title in (reading["title"], fields.get("title"))]
                if right[0] is not None:
                    add("news: title right (heuristic)", bool(right[0]), bool(right[1]))
                evidence = visible_byline(root)
                if evidence:
                    add("news: byline found (heuristic)",
                        byline_found(reading["byline"], evidence),
                        byline_found(fields.get("byline"), evidence))
                continue
            truth = truths[page.id]
            add("modern: title exact", _same(reading["title"], page.title),
                _same(fields.get("title"), page.title))
            if _words(truth.get("byline")):
                true = _words(truth.get("byline"))
                add("modern: byline right (name words)", _words(reading["byline"]) == true,
                    _words(fields.get("byline")) == true)
            if page.published:
                day = page.published[:10]
                add("modern: published = true day",
                    str(reading["published"] or "")[:10] == day,
                    str(fields.get("published") or "")[:10] == day)
    return [(check, row[0], row[1], row[2]) for check, row in rows.items()]


def _same(title: Any, true: str | None) -> bool:
    """A title equal to the true one, case and spacing aside (as metadata_quality.py)."""
    return " ".join(str(title or "").split()).casefold() == " ".join(
        (true or "").split()).casefold()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--save", type=Path, help="write our predictions per page here")
    parser.add_argument("--compare", type=Path, help="a --save file to compare with")
    parser.add_argument("--errors", action="store_true", help="list our wrong pages")
    parser.add_argument("--no-extruct", action="store_true", help="skip running extruct")
    parser.add_argument("--cpu", action="store_true", help="also time --schema product")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--article", action="store_true",
                        help="check the article schema on the article dev sets instead")
    args = parser.parse_args(argv)
    if args.article:
        print(f"{'check':48}{'metadata':>10}{'article fields':>16}{'pages':>7}")
        for check, metadata, fields, pages_ in article_check():
            print(f"{check:48}{metadata:>10}{fields:>16}{pages_:>7}")
        return

    truth, pages = load(args.dataset)
    product = schema_text("product")
    rows: dict[str, dict[str, Prediction]] = {"ours": {}, "structured": {}}
    if not args.no_extruct:
        rows["extruct"] = {}
    spent: list[float] = []
    for page_id, body in pages.items():
        url = truth[page_id]["url"]
        start = time.process_time()
        rows["ours"][page_id], rows["structured"][page_id] = ours(body, url, product)
        spent.append((time.process_time() - start) * 1000)
        if "extruct" in rows:
            rows["extruct"][page_id] = extruct_row(body, url)
    for peer in PEERS:
        path = args.dataset / "peers" / f"{peer}.json"
        if path.exists():
            name = f"{peer} (published)" if peer == "extruct" else peer
            rows[name] = json.loads(path.read_text(encoding="utf-8"))

    print(f"{len(pages)} pages; F1 ± bootstrap std (1000 resamples), as evaluate.py scores")
    print(f"{'system':22}" + "".join(f"{a:>18}" for a in ATTRIBUTES))
    for name, predictions in rows.items():
        cells = []
        for attribute in ATTRIBUTES:
            scored = score(truth, predictions, attribute)
            cells.append(f"{f1(scored):.3f} ± {bootstrap_std(scored):.3f}")
        print(f"{name:22}" + "".join(f"{c:>18}" for c in cells))
    print(f"ours: handler with schema, median {statistics.median(spent):.1f} ms CPU per page")

    if args.errors:
        for attribute in ATTRIBUTES:
            for page_id in truth:
                true = truth[page_id].get(attribute) or []
                got = rows["ours"][page_id].get(attribute)
                if counts(true, got, attribute == "price")[1:] != (0, 0):
                    print(f"  {attribute:12} {page_id[:8]} {truth[page_id]['url'][:60]:60} "
                          f"truth={true} ours={got!r}")
    if args.save:
        args.save.write_text(json.dumps(rows["ours"], indent=1, sort_keys=True))
    if args.compare:
        before = json.loads(args.compare.read_text())
        for attribute in ATTRIBUTES:
            diff, low, high = paired(score(truth, before, attribute),
                                     score(truth, rows["ours"], attribute))
            print(f"  vs {args.compare.name}: {attribute:12} ΔF1 {diff:+.3f} "
                  f"[{low:+.3f}, {high:+.3f}] (95% paired bootstrap)")
    if args.cpu:
        without, with_, difference = cpu(args.passes)
        print(f"modern-web-dev, handler CPU per page (median): {without:.2f} ms without a "
              f"schema, {with_:.2f} ms with schema=product; median difference "
              f"{difference:+.2f} ms")


if __name__ == "__main__":
    main()


