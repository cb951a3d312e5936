"""Fixtures for handler tests: a tiny PDF writer (Helvetica text pages, text-less pages,
an Info dict), exposed as the ``make_pdf`` fixture so no test imports a helper module; and
the shared dev sets, which skip the test when they are not beside the repository."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

SHARED_DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


def shared_dataset(name: str) -> Path:
    """The folder of one shared dev set; skips the calling test when it is absent (a fresh
    clone has no ``../shared``; CI has it and runs these tests)."""
    folder = SHARED_DATASETS / name
    if not (folder / "ground-truth.json").is_file():
        pytest.skip(f"shared dataset not found beside the repository: {folder}")
    return folder


@pytest.fixture(scope="module")
def news_dataset() -> Path:
    """``../shared/datasets/article-extraction-benchmark`` (skips when absent)."""
    return shared_dataset("article-extraction-benchmark")


@pytest.fixture(scope="module")
def modern_dataset() -> Path:
    """``../shared/datasets/modern-web-dev`` (skips when absent)."""
    return shared_dataset("modern-web-dev")


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _content(lines: list[str] | None) -> bytes:
    if lines is None:  # a "scanned" page: only a filled rectangle, no text at all
        return b"0.5 g 72 72 300 400 re f"
    ops = ["BT /F1 12 Tf 14 TL 72 720 Td"]
    ops += [f"({_escape(line)}) Tj T*" for line in lines]
    ops.append("ET")
    return "\n".join(ops).encode("latin-1")


def make_pdf(pages: list[list[str] | None], info: dict[str, str] | None = None) -> bytes:
    """A valid PDF with one page per item: a list of text lines, or None for no text."""
    objects: list[bytes] = [b"", b""]  # 1: catalog, 2: page tree, filled in below
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")  # 3
    kids = []
    for lines in pages:
        stream = _content(lines)
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        content_id = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % content_id
        )
        kids.append(len(objects))
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    info_ref = b""
    if info:
        entries = " ".join(f"/{k} ({_escape(v)})" for k, v in info.items())
        objects.append(f"<< {entries} >>".encode("latin-1"))
        info_ref = b" /Info %d 0 R" % len(objects)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, info_ref, xref)
    return bytes(out)


@pytest.fixture
def pdf_writer() -> Callable[..., bytes]:
    return make_pdf
