"""Is this page a bot check, a JavaScript-only app shell, or not text at all?

Generic signals only: the phrases challenge interstitials and app shells show their human
visitors, checked against a page whose visible text is short (a long article that mentions
"captcha" is still an article); the markup challenge vendors embed; and the structural mark of
an app shell: scripts and an empty mount point instead of content. Only short pages are
examined, so the cost on a normal article is nil.
"""

from __future__ import annotations

import re

from lxml import etree

# What interstitials say. The first group also names the subject of ordinary pages ("What is
# a CAPTCHA?", "Access denied: court rejects appeal"): in the body it counts only beside a
# vendor's challenge markup, and in the title only when the title says little else.
_TOPICAL = (r"attention required|access denied|access to this page has been denied|"
            r"request (?:was )?blocked|security check|captcha|bot detection|one more step")
_INTERSTITIAL = (
    r"just a moment|checking (?:your|if the site connection is secure|the browser)|"
    r"verify(?:ing)? (?:you are|that you are) (?:a )?human|are you a (?:human|robot)|"
    r"ddos protection|unusual traffic|please (?:complete|solve) the|press (?:&|and) hold|"
    r"pardon our interruption"
)
_CHALLENGE = re.compile(f"{_INTERSTITIAL}|{_TOPICAL}", re.IGNORECASE)
_CHALLENGE_UNMARKED = re.compile(_INTERSTITIAL, re.IGNORECASE)
_TITLE_EXTRA_WORDS = 2  # "Attention Required! | Cloudflare", "Security check - Shop name"
# Vendor names as their own tokens: "hcaptcha" inside a setting's name
# ("captcha_plugin_hcaptcha_enabled": false) says nothing about this page.
_CHALLENGE_MARKUP = re.compile(
    r"cf_chl_|_incapsula_|(?<!\w)(?:cf-browser-verification|cf-challenge|challenge-form|"
    r"g-recaptcha|h-captcha|hcaptcha|turnstile|px-captcha|captcha-delivery)(?!\w)",
    re.IGNORECASE,
)
_NEEDS_JS = re.compile(
    r"(?:enable|turn on|activate|requires?|need to enable|must enable)\s+(?:javascript|js)\b|"
    r"javascript (?:is )?(?:required|disabled|must be enabled|needs to be enabled)|"
    r"doesn't work properly without javascript|without javascript enabled",
    re.IGNORECASE,
)
# On the visible page only a request counts: "How to enable JavaScript in Firefox" is a
# (short) help page, "Please enable JavaScript to continue" is a shell.
_ASKS_FOR_JS = re.compile(
    r"(?:please|you (?:must|need to|have to|should)|must|need to)\s+"
    r"(?:enable|turn on|activate|allow)\s+(?:javascript|js)\b|"
    r"requires? (?:javascript|js)\b|"
    r"javascript (?:is )?(?:required|disabled|must be enabled|needs to be enabled)|"
    r"doesn't work properly without javascript|without javascript enabled",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"^\W*(?:loading|please wait|one moment)\W*$", re.IGNORECASE)
_NOSCRIPT = re.compile(r"<noscript[^>]*>(.*?)</noscript>", re.IGNORECASE | re.DOTALL)
_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")
SHORT_PAGE = 1500  # visible characters: interstitials and shells say little


def _empty_mount(body: etree._Element | None) -> bool:
    """The body holds an empty mount point — an element with an id (``#root``, ``#app``) or a
    custom element (``<app-root>``) — and nothing else: scripts are meant to render the page."""
    if body is None:
        return False
    children = [c for c in body if isinstance(c.tag, str)]
    empty = [c for c in children if len(c) == 0 and not (c.text or "").strip()]
    return bool(children) and len(empty) == len(children) and any(
        c.get("id") or "-" in str(c.tag) for c in empty  # <div id="root">, <app-root>
    )


def challenge_reason(title: str, html: str, body: etree._Element | None,
                     visible_text: str) -> str | None:
    """Why the page is a challenge or an app shell, or None when it looks like a document.

    ``html`` is the raw page text; ``body`` and ``visible_text`` come from the cleaned tree.
    """
    if len(visible_text) > SHORT_PAGE:
        return None
    markup = _CHALLENGE_MARKUP.search(html) is not None
    # The title of an interstitial says so; a phrase in the body counts on a tiny page only.
    match = _CHALLENGE.search(title) if len(visible_text) < 800 else None
    if match is not None and len(_WORD.findall(title)) - len(
            _WORD.findall(match.group(0))) > _TITLE_EXTRA_WORDS:
        match = None  # a headline about the subject, not an interstitial's bare title
    if match is None and markup:
        match = _CHALLENGE.search(visible_text)
    if match is None and len(visible_text) < 400:
        match = _CHALLENGE_UNMARKED.search(visible_text)
    if match:
        return f"bot challenge page ({match.group(0).lower()!r})"
    if markup and len(visible_text) < 300:
        return "bot challenge page (challenge markup)"
    if len(visible_text) < 200 and _SCRIPT.search(html):
        noscript = " ".join(_NOSCRIPT.findall(html))
        needs_js = _NEEDS_JS.search(noscript) or _ASKS_FOR_JS.search(visible_text)
        if needs_js:
            return f"JavaScript app shell without content ({needs_js.group(0).lower()!r})"
        if _empty_mount(body):
            return "JavaScript app shell without content (empty mount point)"
        if _PLACEHOLDER.match(visible_text):
            return f"JavaScript app shell without content ({visible_text[:40]!r})"
    return None


_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
# C0 controls that never occur in text (tab, newlines, form feed and ESC — ISO-2022 — do).
_BINARY_BYTES = bytes([*range(0, 9), 11, *range(14, 27), *range(28, 32)])


def looks_binary(body: bytes) -> bool:
    """More than 5% of the first 4 KiB are control bytes text never holds (UTF-16/32 with a
    BOM excepted)."""
    head = body[:4096]
    if not head or head.startswith(_BOMS):
        return False
    controls = len(head) - len(head.translate(None, _BINARY_BYTES))
    return controls > 0.05 * len(head)
