"""The PDF handler: page text with markers, caps, and honest failures."""

from __future__ import annotations

import builtins
import itertools
import pickle
from pathlib import Path

import pytest

import handlers.pdf as pdf_module
from handlers.pdf import PDF_HANDLER, pdf_date
from handlers.registry import HandlerContext
from pipeline.core.errors import PipelineError

FIXTURES = Path(__file__).parent.parent / "fixtures"


def ctx(**options) -> HandlerContext:
    return HandlerContext(url="https://example.com/doc.pdf", options=options)


def failure(body: bytes, **options) -> PipelineError:
    with pytest.raises(PipelineError) as info:
        PDF_HANDLER.handle(body, ctx(**options))
    return info.value


def test_text_of_every_page_under_its_marker(pdf_writer) -> None:
    body = pdf_writer(
        [["First page line one", "line two (with parens)"], ["Second page"], ["Third page"]],
        info={"Title": "Annual Report", "Author": "Jane Roe",
              "CreationDate": "D:20240102030405+01'00'"},
    )
    document = PDF_HANDLER.handle(body, ctx())
    assert document.title == "Annual Report"
    assert document.content.splitlines()[:4] == [
        "--- page 1 ---", "", "First page line one", "line two (with parens)"]
    assert "--- page 2 ---\n\nSecond page\n\n--- page 3 ---\n\nThird page" in document.content
    assert "\r" not in document.content
    assert document.metadata == {"byline": "Jane Roe", "published": "2024-01-02T03:04:05+01:00",
                                 "pages": 3}


def test_pages_without_text_are_skipped_but_numbering_stays_true(pdf_writer) -> None:
    document = PDF_HANDLER.handle(pdf_writer([["one"], None, ["three"]]), ctx())
    assert "--- page 2 ---" not in document.content
    assert "--- page 3 ---\n\nthree" in document.content


def test_page_cap(pdf_writer) -> None:
    body = pdf_writer([[f"page {n} text"] for n in range(1, 6)])
    document = PDF_HANDLER.handle(body, ctx(pdf_max_pages=2))
    assert "page 2 text" in document.content and "page 3 text" not in document.content
    assert document.content.endswith("--- stopped after 2 of 5 pages: page cap ---")
    assert document.metadata["pdf_stopped"] == "page_cap"
    assert document.metadata["pages"] == 5


def test_time_cap_stops_between_pages(pdf_writer, monkeypatch) -> None:
    clock = itertools.count(step=10.0)  # every look at the clock is 10 s later
    monkeypatch.setattr(pdf_module.time, "monotonic", lambda: next(clock))
    body = pdf_writer([[f"page {n} text"] for n in range(1, 6)])
    document = PDF_HANDLER.handle(body, ctx(pdf_time_limit=25))
    assert "page 2 text" in document.content and "page 3 text" not in document.content
    assert document.metadata["pdf_stopped"] == "time_limit"
    assert document.content.endswith("stopped after 2 of 5 pages: time limit ---")


def test_time_cap_before_any_text_is_a_timeout(pdf_writer) -> None:
    assert failure(pdf_writer([["text"]]), pdf_time_limit=-1).kind == "timeout"


def test_scanned_pdf_without_text_is_empty(pdf_writer) -> None:
    error = failure(pdf_writer([None, None]))
    assert error.kind == "empty"
    assert "no extractable text" in error.message


def test_password_protected_pdf_is_a_clear_extract_error() -> None:
    error = failure((FIXTURES / "encrypted.pdf").read_bytes())
    assert error.kind == "extract"
    assert "encrypted" in error.message


def test_owner_password_only_pdf_is_still_read() -> None:
    # Most "encrypted" PDFs on the web only restrict editing: readers open them freely.
    document = PDF_HANDLER.handle((FIXTURES / "encrypted-owner-only.pdf").read_bytes(), ctx())
    assert "Locked text" in document.content


@pytest.mark.parametrize("cut", ["truncated", "garbled", "header only"])
def test_corrupt_pdf_is_an_extract_error(pdf_writer, cut: str) -> None:
    good = pdf_writer([["some text"]])
    body = {"truncated": good[:120], "garbled": good.replace(b"obj", b"xyz"),
            "header only": b"%PDF-1.4\n"}[cut]
    error = failure(body)
    assert error.kind == "extract"
    assert "corrupt" in error.message


def test_without_pypdfium2_a_pdf_is_unsupported_with_the_install_hint(
    pdf_writer, monkeypatch
) -> None:
    real_import = builtins.__import__

    def no_pdfium(name, *args, **kwargs):
        if name == "pypdfium2":
            raise ImportError("no pypdfium2")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pdfium)
    error = failure(pdf_writer([["text"]]))
    assert error.kind == "unsupported_type"
    assert "pip install -e '.[pdf]'" in error.message


def test_handler_is_picklable_for_the_process_pool() -> None:
    assert pickle.loads(pickle.dumps(PDF_HANDLER)) == PDF_HANDLER


def test_text_format_keeps_the_same_markers(pdf_writer) -> None:
    body = pdf_writer([["a"], ["b"]])
    document = PDF_HANDLER.handle(body, HandlerContext(url="u", format="text"))
    assert document.format == "text"
    assert document.content == "--- page 1 ---\n\na\n\n--- page 2 ---\n\nb"


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("D:20240102030405Z", "2024-01-02T03:04:05+00:00"),
        ("D:20240102030405-05'30'", "2024-01-02T03:04:05-05:30"),
        ("D:2024", "2024-01-01T00:00:00"),
        ("D:20241340", None),
        ("yesterday", None),
        (None, None),
    ],
)
def test_pdf_dates(raw: str | None, iso: str | None) -> None:
    assert pdf_date(raw) == iso


def test_running_headers_and_footers_are_dropped(pdf_writer) -> None:
    pages = [["ACME Annual Report", f"Body text of page {n}.", "Shared sentence.", f"Page {n} of 4"]
             for n in range(1, 5)]
    document = PDF_HANDLER.handle(pdf_writer(pages), ctx())
    assert "ACME Annual Report" not in document.content
    assert "Page 3 of 4" not in document.content
    assert "--- page 3 ---\n\nBody text of page 3.\nShared sentence." in document.content
    # No Info title: page 1's first line, read before the running lines went.
    assert document.title == "ACME Annual Report"


def test_few_pages_keep_every_line(pdf_writer) -> None:
    document = PDF_HANDLER.handle(pdf_writer([["Same", "a"], ["Same", "b"]]), ctx())
    assert document.content.count("Same") == 2


def _report_page(n: int) -> list[str]:
    """A page of a generated report: running header and footer around body lines, some of
    which differ from page to page only in digits."""
    body = [f"Section {n}: Widget sales"]
    body += [f"Week {w} of the quarter went as planned." for w in range(1, 2 + n % 3)]
    body.append(f"Units sold in region {n}: {100 + 37 * n}")  # the last body line
    return ["ACME Quarterly Report", *body, f"Page {n} of 5"]


def test_furniture_goes_but_body_lines_differing_in_digits_stay(pdf_writer) -> None:
    document = PDF_HANDLER.handle(pdf_writer([_report_page(n) for n in range(1, 6)]), ctx())
    for n in range(1, 6):
        page = document.content.split(f"--- page {n} ---\n\n")[1].split("\n\n--- page")[0]
        assert page.splitlines() == _report_page(n)[1:-1]  # the whole body, nothing else


def test_only_the_same_edge_position_on_most_pages_is_furniture(pdf_writer) -> None:
    pages = []
    for n, total in zip(range(1, 6), (120, 95, 310, 42, 77), strict=True):
        body = [f"Paragraph {k} of page {n} says something." for k in range(3)]
        shared, last = "Prices include tax.", f"Total: {total} units"  # no page's number
        # the shared sentence at the top (pages 1-2), at the bottom (3-4), in the middle (5)
        body = ([shared, *body, last] if n < 3 else [*body, last, shared] if n < 5
                else [body[0], shared, *body[1:], last])
        pages.append(["Confidential", *body, f"- {n + 10} -"])
    document = PDF_HANDLER.handle(pdf_writer(pages), ctx())
    assert "Confidential" not in document.content and "- 13 -" not in document.content
    assert document.content.count("Prices include tax.") == 5
    assert all(f"Total: {t} units" in document.content for t in (120, 95, 310, 42, 77))
    assert all(f"Paragraph 0 of page {n} says" in document.content for n in range(1, 6))


@pytest.mark.parametrize("label", ["{n}", "Page {n}", "p. {n}", "{n} / 9", "ACME | {n}",
                                   "{n} · Annual Report", "Seite {n} von 9", "[{n}]"])
def test_page_number_lines_are_furniture_in_their_usual_shapes(pdf_writer, label) -> None:
    bodies = [[f"The {word} page, line {w}." for w in "abcd"]
              for word in ("alpha", "beta", "gamma", "delta")]
    pages = [[*body, label.format(n=n)] for n, body in enumerate(bodies, start=1)]
    document = PDF_HANDLER.handle(pdf_writer(pages), ctx())
    assert document.content == "\n\n".join(
        f"--- page {n} ---\n\n" + "\n".join(body) for n, body in enumerate(bodies, start=1))
