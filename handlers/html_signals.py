"""Is this page a bot check or a JavaScript-only app shell rather than a document?

Generic signals only: the phrases challenge interstitials and app shells show their human
visitors, checked against a page whose visible text is short (a long article that mentions
"captcha" is still an article), plus the structural mark of an app shell: an empty mount
point and scripts doing all the work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

_CHALLENGE = re.compile(
    r"just a moment|checking (?:your|if the site connection is secure|the browser)|"
    r"verify(?:ing)? (?:you are|that you are) (?:a )?human|are you a (?:human|robot)|"
    r"attention required|access denied|access to this page has been denied|"
    r"request (?:was )?blocked|ddos protection|security check|captcha|bot detection|"
    r"unusual traffic|please (?:complete|solve) the|press (?:&|and) hold|"
    r"pardon our interruption|one more step",
    re.IGNORECASE,
)
_CHALLENGE_MARKUP = re.compile(
    r"cf-browser-verification|cf-challenge|challenge-form|cf_chl_|g-recaptcha|h-captcha|"
    r"hcaptcha|turnstile|px-captcha|captcha-delivery|_incapsula_",
    re.IGNORECASE,
)
_NEEDS_JS = re.compile(
    r"(?:enable|turn on|activate|requires?|need to enable|must enable)\s+javascript|"
    r"javascript (?:is )?(?:required|disabled|must be enabled|needs to be enabled)|"
    r"doesn't work properly without javascript|without javascript enabled",
    re.IGNORECASE,
)
_SHORT_PAGE = 1500  # visible characters: interstitials say little


@dataclass(frozen=True)
class RawSignals:
    """What cleaning removes but the verdict needs: read from the untouched tree."""

    title: str
    scripts: int
    noscript_text: str
    markup_hit: bool
    empty_mount: bool


def raw_signals(root: etree._Element) -> RawSignals:
    title = next((" ".join(t.text_content().split()) for t in root.iter("title")), "")
    scripts = 0
    markup_hit = False
    for element in root.iter("script", "form", "div", "iframe"):
        if element.tag == "script":
            scripts += 1
        attributes = " ".join(element.attrib.values())
        if attributes and _CHALLENGE_MARKUP.search(attributes):
            markup_hit = True
    noscript = " ".join(n.text_content() for n in root.iter("noscript"))
    body = root.find("body")
    empty_mount = False
    if body is not None:
        blocks = [c for c in body if isinstance(c.tag, str) and c.tag not in ("script",
                                                                             "noscript", "style",
                                                                             "link", "template")]
        empty_mount = bool(blocks) and all(
            len(b) == 0 and not (b.text or "").strip() for b in blocks
        )
    return RawSignals(title, scripts, noscript, markup_hit, empty_mount)


def challenge_reason(signals: RawSignals, visible_text: str) -> str | None:
    """Why the page is a challenge or an app shell, or None when it looks like a document."""
    if len(visible_text) > _SHORT_PAGE:
        return None
    match = _CHALLENGE.search(signals.title) or _CHALLENGE.search(visible_text)
    if match and (signals.markup_hit or len(visible_text) < 600):
        return f"bot challenge page ({match.group(0).lower()!r})"
    if signals.markup_hit and len(visible_text) < 300:
        return "bot challenge page (challenge markup)"
    needs_js = _NEEDS_JS.search(f"{signals.noscript_text} {visible_text}")
    if len(visible_text) < 200 and signals.scripts and (signals.empty_mount or needs_js):
        detail = f"{needs_js.group(0).lower()!r}" if needs_js else "empty mount point"
        return f"JavaScript app shell without server-rendered content ({detail})"
    return None
