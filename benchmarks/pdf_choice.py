"""Choose the PDF text library: pypdf vs pypdfium2, by speed and text quality.

Generated PDFs (fpdf2, benchmark-only) carry known text — real article bodies from the shared
article benchmark — so quality is scored against the source: word F1 (which words survive) and
bigram F1 (word order, and words glued together or split apart). PDFs given on the command line
have no ground truth: they get speed, word counts, "glued" tokens (alphabetic runs > 24 chars,
the sign of lost spaces) and the agreement between the two libraries.

    python benchmarks/pdf_choice.py [--dataset DIR] [--font TTF] [--write] [FILE.pdf ...]

``--font`` defaults to DejaVuSans found through ``fc-match``; ``--write`` puts the table into
benchmarks/README.md between this script's markers.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import logging
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

DATASET = Path("../shared/datasets/article-extraction-benchmark")
README = Path(__file__).with_name("README.md")
BEGIN, END = "<!-- pdf_choice:begin -->", "<!-- pdf_choice:end -->"
WORD = re.compile(r"\w+", re.UNICODE)


def extract_pypdf(data: bytes) -> list[str]:
    import pypdf

    return [page.extract_text() or "" for page in pypdf.PdfReader(io.BytesIO(data)).pages]


def extract_pdfium(data: bytes) -> list[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(data)
    try:
        return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    finally:
        doc.close()


LIBRARIES: dict[str, Callable[[bytes], list[str]]] = {
    "pypdf": extract_pypdf,
    "pypdfium2": extract_pdfium,
}


def words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


def f1(found: Counter, truth: Counter) -> float:
    common = sum((found & truth).values())
    if not common:
        return 0.0
    precision, recall = common / sum(found.values()), common / sum(truth.values())
    return 2 * precision * recall / (precision + recall)


def bigrams(tokens: list[str]) -> Counter:
    return Counter(itertools.pairwise(tokens))


def default_font() -> str | None:
    try:
        out = subprocess.run(["fc-match", "-f", "%{file}", "DejaVuSans"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def article_texts(dataset: Path, count: int) -> list[str]:
    truth = json.loads((dataset / "ground-truth.json").read_text(encoding="utf-8"))
    bodies = [item["articleBody"] for _, item in sorted(truth.items())]
    # Only scripts DejaVu covers: a missing glyph would be scored against both libraries.
    return [b for b in bodies if len(b) > 2000 and max(map(ord, b)) < 0x2E80][:count]


def generate(texts: list[str], font: str | None) -> dict[str, tuple[bytes, str]]:
    """Three layouts of the same prose: one column, two columns, and a table."""
    from fpdf import FPDF

    def new_pdf() -> FPDF:
        pdf = FPDF()
        if font:
            pdf.add_font("body", fname=font)
            pdf.set_font("body", size=10)
        else:
            pdf.set_font("helvetica", size=10)
        return pdf

    def clean(text: str) -> str:
        return text if font else text.encode("latin-1", "replace").decode("latin-1")

    prose = "\n\n".join(clean(t) for t in texts)
    one = new_pdf()
    one.add_page()
    one.multi_cell(0, 5, prose)
    two = new_pdf()
    two.add_page()
    with two.text_columns(ncols=2, gutter=8) as cols:
        cols.write(prose)
    table_rows = [p.split(". ")[:3] for p in prose.split("\n\n")[:40]]
    table_rows = [row + [""] * (3 - len(row)) for row in table_rows]
    tab = new_pdf()
    tab.add_page()
    with tab.table(first_row_as_headings=False) as table:
        for row in table_rows:
            cells = table.row()
            for cell in row:
                cells.cell(cell)
    table_text = " ".join(" ".join(row) for row in table_rows)
    return {
        "prose, 1 column": (bytes(one.output()), prose),
        "prose, 2 columns": (bytes(two.output()), prose),
        "table, 3 columns": (bytes(tab.output()), table_text),
    }


def timed(extract: Callable[[bytes], list[str]], data: bytes, repeat: int = 3):
    best, pages = float("inf"), []
    for _ in range(repeat):
        start = time.process_time()
        pages = extract(data)
        best = min(best, time.process_time() - start)
    return best, pages


def glued(tokens: list[str]) -> int:
    return sum(1 for t in tokens if len(t) > 24 and t.isalpha())


def run(args: argparse.Namespace) -> str:
    rows = []
    generated = generate(article_texts(args.dataset, args.articles), args.font)
    samples = [(name, data, truth) for name, (data, truth) in generated.items()]
    samples += [(Path(p).name, Path(p).read_bytes(), None) for p in args.files]
    for name, data, truth in samples:
        outputs = {lib: timed(fn, data) for lib, fn in LIBRARIES.items()}
        tokens = {lib: words("\n".join(pages)) for lib, (_, pages) in outputs.items()}
        for lib, (seconds, pages) in outputs.items():
            other = next(t for key, t in tokens.items() if key != lib)
            if truth is not None:
                ref = words(truth)
                quality = (f"{f1(Counter(tokens[lib]), Counter(ref)):.3f}",
                           f"{f1(bigrams(tokens[lib]), bigrams(ref)):.3f}")
            else:
                quality = ("—", f"agree {f1(Counter(tokens[lib]), Counter(other)):.3f}")
            rows.append((name, len(pages), lib, f"{1000 * seconds / max(len(pages), 1):.2f}",
                         len(tokens[lib]), glued(tokens[lib]), *quality))
    head = ("| PDF | pages | library | ms/page | words | glued | word F1 | bigram F1 |\n"
            "|---|---|---|---|---|---|---|---|\n")
    return head + "\n".join("| " + " | ".join(str(c) for c in row) + " |" for row in rows)


def write_readme(table: str, command: str) -> None:
    text = README.read_text(encoding="utf-8")
    block = f"{BEGIN}\n`{command}`\n\n{table}\n{END}"
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text,
                      flags=re.S)
    else:
        text = text.rstrip() + "\n\n## PDF library choice\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="extra real PDFs (no ground truth)")
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--articles", type=int, default=12)
    parser.add_argument("--font", default=None, help="TTF for the generated PDFs")
    parser.add_argument("--write", action="store_true", help="update benchmarks/README.md")
    args = parser.parse_args(argv)
    args.font = args.font or default_font()
    logging.getLogger("fpdf").setLevel(logging.ERROR)
    table = run(args)
    print(table)
    if args.write:
        names = " ".join(Path(f).name for f in args.files)
        write_readme(table, f"python benchmarks/pdf_choice.py --write {names}".strip())


if __name__ == "__main__":
    sys.exit(main())
