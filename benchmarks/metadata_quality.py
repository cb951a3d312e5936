"""Title, byline and date accuracy of the HTML handler on both dev sets.

    python benchmarks/metadata_quality.py [--dataset PATH] [--modern PATH] [--show-misses]

modern-web-dev has true titles, bylines and dates: a title is right when equal to the truth
(case and spacing aside), a date when it names the true calendar day; a byline is right when
its name words (3+ letters, case aside, "and" left out) are the truth's, and "found" when it
shares one with it;
pages whose truth has no byline count the bylines we report anyway.

The article-extraction-benchmark has no true titles or bylines, so both checks there are
documented heuristics with references independent of the handler's own sources:

* **Title** — right when it does not carry the site name (``og:site_name``) and either
  (a) it equals a visible ``<h1>``/``<h2>`` of the page that the page's ``<title>`` or
  ``og:title`` repeats (the page confirms that heading as its headline), or (b) when no
  heading is so confirmed, at least 75% of the URL slug's words (3+ letters, ASCII slugs of
  four words or more) occur in it. Pages with neither reference are not counted.
* **Byline** — a page "has a byline" when its visible text (scripts and styles removed)
  shows one: a "By Firstname Lastname" phrase, or a short element whose class/id/itemprop/rel
  says author or byline. The byline is found when the handler reports one sharing a word
  (3+ letters) with that visible byline text.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lxml import etree  # noqa: E402

from benchmarks.quality import DEFAULT_DATASET, SETS, load_pages, load_set  # noqa: E402
from handlers.html import HTML_HANDLER  # noqa: E402
from handlers.registry import HandlerContext  # noqa: E402

_WORD = re.compile(r"[a-z]{3,}")
_BY_NAME = re.compile(r"\bBy\s+([A-Z][\w'’.-]+(?:\s+[A-Z][\w'’.-]+){1,3})")
_AUTHOR_NAME = re.compile(r"author|byline", re.IGNORECASE)


def slug_words(url: str) -> list[str]:
    segments = [s for s in urlsplit(url).path.split("/") if s]
    if not segments:
        return []
    slug = max(segments[-2:], key=len).lower()
    slug = re.sub(r"\.[a-z]{2,5}$", "", slug)
    words = [w for w in re.split(r"[-_]+", slug) if w.isalpha() and w.isascii()]
    return words if len(words) >= 4 else []


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def confirmed_headlines(root: etree._Element) -> list[str]:
    """Visible h1/h2 texts that the page's <title> or og:title repeats."""
    declared = [_norm("".join(t.itertext())) for t in root.iter("title")]
    declared += [_norm(m.get("content") or "") for m in root.iter("meta")
                 if (m.get("property") or m.get("name")) == "og:title"]
    declared = [d for d in declared if d]
    found = []
    for heading in root.iter("h1", "h2"):
        text = _norm("".join(heading.itertext()))
        if len(text.split()) >= 3 and any(text in d for d in declared):
            found.append(text)
    return found


def title_right(title: str | None, url: str, site: str | None,
                headlines: list[str]) -> bool | None:
    """True/False, or None when the page offers no reference."""
    if site and site.lower() in (title or "").lower() and site.lower() not in url.lower():
        return False
    if headlines:
        return _norm(title or "") in headlines
    words = [w for w in slug_words(url) if len(w) >= 3]
    if not words:
        return None
    have = set(_WORD.findall((title or "").lower().replace("’", "").replace("'", "")))
    return sum(w in have for w in words) >= 0.75 * len(words)


def page_tree(body: bytes) -> etree._Element:
    """The page without scripts, styles, forms and comment threads (benchmark pages are
    UTF-8)."""
    root = etree.fromstring(body, etree.HTMLParser(remove_comments=True, encoding="utf-8"))
    doomed = [e for e in root.iter() if isinstance(e.tag, str) and (
        e.tag in ("script", "style", "noscript", "form")
        or re.search(r"comment", f"{e.get('class')} {e.get('id')}", re.IGNORECASE))]
    for element in doomed:
        if element.getparent() is not None:
            element.getparent().remove(element)
    return root


def visible_byline(root: etree._Element) -> str | None:
    """Byline evidence on the visible page, or None when the page shows none."""
    evidence = []
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        label = " ".join(element.get(a) or "" for a in ("class", "id", "itemprop", "rel"))
        if _AUTHOR_NAME.search(label):
            text = " ".join("".join(element.itertext()).split())
            if 2 < len(text) < 100:
                evidence.append(text)
    match = _BY_NAME.search(" ".join("".join(root.itertext()).split()))
    if match:
        evidence.append(match.group(1))
    return " ".join(evidence) or None


def byline_found(byline: str | None, evidence: str) -> bool:
    ours = set(_WORD.findall((byline or "").lower()))
    return bool(ours & set(_WORD.findall(evidence.lower())))


def _words(text: str | None) -> set[str]:
    """A byline's name words: 3+ letters, case aside, without the "and" joining names."""
    return set(re.findall(r"[^\W\d_]{3,}", (text or "").casefold())) - {"and"}


def modern_figures(dataset: Path, show_misses: bool) -> None:
    """Titles, bylines and dates against modern-web-dev's truth."""
    titles = bylines_exact = bylines_found = bylined = unbylined = invented = 0
    dated = dates = 0
    pages = load_set(dataset)
    truths = json.loads((dataset / "ground-truth.json").read_text(encoding="utf-8"))
    for page in pages:
        try:
            doc = HTML_HANDLER.handle(page.body, HandlerContext(url=page.url, format="text"))
            title, meta = doc.title, doc.metadata
        except Exception:  # an error record: no metadata
            title, meta = None, {}
        titles += " ".join((title or "").split()).casefold() == " ".join(
            (page.title or "").split()).casefold()
        truth = truths[page.id]
        ours, true = _words(meta.get("byline")), _words(truth.get("byline"))
        if true:
            bylined += 1
            bylines_exact += ours == true
            bylines_found += bool(ours & true)
            if ours != true and show_misses:
                print(f"byline {page.id}: {meta.get('byline')!r} vs {truth.get('byline')!r}")
        else:
            unbylined += 1
            invented += bool(ours)
        if page.published:
            dated += 1
            dates += (meta.get("published") or "")[:10] == page.published[:10]
    print(f"modern title right: {titles}/{len(pages)} = {titles / len(pages):.1%}")
    print(f"modern byline right: {bylines_exact}/{bylined} = {bylines_exact / bylined:.1%}, "
          f"found {bylines_found}/{bylined} = {bylines_found / bylined:.1%}; "
          f"a byline on {invented}/{unbylined} pages without one")
    print(f"modern published right: {dates}/{dated} = {dates / dated:.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--modern", type=Path, default=SETS["modern"],
                        help="the modern-web-dev folder (true titles, bylines, dates)")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    titled = title_ok = bylined = byline_ok = 0
    for page_id, url, body, _truth in load_pages(args.dataset):
        doc = HTML_HANDLER.handle(body, HandlerContext(url=url, format="text"))
        root = page_tree(body)
        ok = title_right(doc.title, url, doc.metadata.get("site_name"),
                         confirmed_headlines(root))
        if ok is not None:
            titled += 1
            title_ok += ok
            if not ok and args.show_misses:
                print(f"title miss {page_id[:8]}: {doc.title!r} <- {url}")
        evidence = visible_byline(root)
        if evidence:
            bylined += 1
            ok = byline_found(doc.metadata.get("byline"), evidence)
            byline_ok += ok
            if not ok and args.show_misses:
                print(f"byline miss {page_id[:8]}: {doc.metadata.get('byline')!r} "
                      f"vs {evidence[:80]!r}")
    print(f"title right: {title_ok}/{titled} = {title_ok / max(titled, 1):.1%} "
          f"(pages with a confirmed headline or a word slug)")
    print(f"byline found: {byline_ok}/{bylined} = {byline_ok / max(bylined, 1):.1%} "
          f"(pages showing a byline)")
    if (args.modern / "ground-truth.json").is_file():
        modern_figures(args.modern, args.show_misses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
