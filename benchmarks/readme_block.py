"""Writing a benchmark's report into ``benchmarks/README.md`` between its markers."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"


def write_block(text: str, name: str, heading: str, path: Path = README) -> None:
    """Put ``text`` between the ``<!-- name:start -->`` and ``<!-- name:end -->`` markers,
    or at the end under ``heading`` (a ``## …`` line) when the markers are not there yet."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    readme = path.read_text(encoding="utf-8")
    block = f"{start}\n{text}\n{end}"
    if start in readme and end in readme:
        head, _, rest = readme.partition(start)
        _, _, tail = rest.partition(end)
        readme = head + block + tail
    else:
        readme = readme.rstrip("\n") + f"\n\n{heading}\n\n" + block + "\n"
    path.write_text(readme, encoding="utf-8")
