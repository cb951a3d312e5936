"""readability-lxml's main-content algorithm, for ``--html-extractor readability``.

An optional extra (``pip install -e '.[readability]'``), imported on first use
inside the worker that runs the HTML handler. Only the choice of the main block is
readability's: metadata, challenge detection, rendering and truncation stay the handler's, so
the two algorithms differ in nothing else.
"""

from __future__ import annotations

from lxml import etree

from handlers.html_dom import parse
from pipeline.core.errors import PipelineError
from pipeline.core.extras import install_hint

EXTRA = "readability"
MISSING = f"--html-extractor readability needs readability-lxml: {install_hint(EXTRA)}"


def require() -> None:
    """A ``config`` error when the extra is not installed."""
    try:
        import readability.readability  # noqa: F401  (its cleaner needs lxml_html_clean)
    except ImportError as exc:
        raise PipelineError("config", MISSING) from exc


def readability_main(html: str, url: str) -> etree._Element | None:
    """The block readability-lxml picks as the page's content, parsed into our kind of tree
    (None when it finds nothing)."""
    require()
    from readability import Document as ReadabilityDocument
    from readability.readability import Unparseable

    try:
        summary = ReadabilityDocument(html, url=url or None).summary(html_partial=True)
    except Unparseable:
        return None
    if not summary.strip():
        return None
    root = parse(summary)
    body = root.find("body")
    return root if body is None else body
