"""Tag vocabularies shared by the HTML modules."""

from __future__ import annotations


def _tags(spec: str) -> frozenset[str]:
    return frozenset(spec.split())


# Never readable content. <noscript> holds lazy-image fallbacks or "enable JavaScript" notes.
DROP_TAGS = _tags(
    "script style noscript template iframe frame frameset object embed applet svg canvas "
    "map area audio video source track button select option input textarea link meta "
    "base dialog"
)
# Elements that start a new block of text when rendered.
BLOCK_TAGS = _tags(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main menu nav ol p "
    "pre section summary table tbody thead tfoot tr td th ul caption"
)
