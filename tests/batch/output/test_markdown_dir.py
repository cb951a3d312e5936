"""--markdown-dir: one markdown file per page, its path mirroring the URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.batch.output.markdown_dir import MarkdownDir, markdown_path
from pipeline.core.models import Record


@pytest.mark.parametrize(("url", "path"), [
    ("https://Example.com/", "example.com/index.md"),
    ("https://example.com/docs/", "example.com/docs/index.md"),
    ("https://example.com/docs/intro", "example.com/docs/intro.md"),
    ("http://example.com:8080/a/b.html", "example.com_8080/a/b.html.md"),
    ("https://example.com/a/../..", "example.com/index.md"),
])
def test_paths_mirror_the_url(url: str, path: str) -> None:
    assert markdown_path(url) == Path(path)


def test_a_query_gets_a_hash_and_names_stay_inside() -> None:
    one, two = markdown_path("https://e.com/s?q=1"), markdown_path("https://e.com/s?q=2")
    assert one != two and one.parent == Path("e.com") and one.name.startswith("s_")
    assert ".." not in markdown_path("https://e.com/%2E%2E/x").parts
    assert len(markdown_path("https://e.com/" + "a" * 500).name) < 140


def test_pages_with_content_are_written_with_front_matter(tmp_path: Path) -> None:
    pages = MarkdownDir(tmp_path)
    pages.write(Record(url="https://e.com/a", ok=True, title='A "quoted" title',
                       content="# A\n\ntext", depth=2, parent="https://e.com/", via="link"))
    pages.write(Record.failure("https://e.com/b", error={"kind": "http_status",
                                                          "message": "404"}))
    assert (tmp_path / "e.com" / "a.md").read_text() == (
        '---\nurl: "https://e.com/a"\ntitle: "A \\"quoted\\" title"\ndepth: 2\n---\n\n'
        "# A\n\ntext\n")
    assert not (tmp_path / "e.com" / "b.md").exists()
