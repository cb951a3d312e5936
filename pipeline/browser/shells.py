"""Which fetched pages ``--render auto`` renders: the ones a browser would change.

Judged after the page's static extraction, so a page with content pays nothing: only a page
the HTML handler called a JavaScript app shell (an empty mount point, a ``<noscript>`` asking
for JavaScript, a "Loading..." placeholder), found empty although it ships scripts, or kept
very little text from while it carries a data island (``__NEXT_DATA__``, a JSON script, an
initial-state assignment), an empty mount point or mostly script bytes. Bot challenges stay
``challenge``: a browser is not a way around them. Non-HTML pages and error statuses never
get here (the caller renders HTML answers only).
"""

from __future__ import annotations

import re

from pipeline.core.errors import PipelineError

APP_SHELL = "JavaScript app shell"  # how the HTML handler's challenge message starts
RENDER_HINT = "a browser renders it: --render auto"
SHORT_CONTENT = 300  # characters: an extraction this short may be a shell's leftovers
_SCRIPT = re.compile(rb"<script\b[^>]*>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)
_HAS_SCRIPT = re.compile(rb"<script\b", re.IGNORECASE)
_DATA_ISLAND = re.compile(
    rb"<script\b[^>]*\btype\s*=\s*[\"']?application/json|__NEXT_DATA__|__NUXT(?:_DATA)?__|"
    rb"__INITIAL_STATE__|__PRELOADED_STATE__|__APOLLO_STATE__|__remixContext",
    re.IGNORECASE)
_EMPTY_MOUNT = re.compile(
    rb"<(?:div|main|section)\b[^>]*\bid\s*=\s*[\"']?(?:root|app|__next|__nuxt|___gatsby|"
    rb"svelte|application)[\"'\s>][^<]*</(?:div|main|section)>", re.IGNORECASE)


def with_render_hint(error: PipelineError) -> PipelineError:
    """``error`` naming the flag that renders the page when it is an app shell's
    ``challenge`` (met with rendering off); any other error as it is."""
    if error.kind == "challenge" and error.message.startswith(APP_SHELL):
        return PipelineError(error.kind, f"{error.message}; {RENDER_HINT}",
                             retryable=error.retryable)
    return error


def render_reason(body: bytes, *, error: PipelineError | None = None,
                  content_chars: int = 0) -> str | None:
    """Why ``auto`` renders this HTML page (``body``), given its static extraction's
    ``error`` or the length of its content; None when it keeps the static result."""
    if error is not None:
        if error.kind == "challenge":
            return "app shell" if error.message.startswith(APP_SHELL) else None
        if error.kind == "empty" and _HAS_SCRIPT.search(body):
            return "no content but scripts"
        return None
    if content_chars >= SHORT_CONTENT:
        return None
    if _DATA_ISLAND.search(body):
        return "little content beside a data island"
    if _EMPTY_MOUNT.search(body):
        return "little content beside an empty mount point"
    scripts = sum(len(script) for script in _SCRIPT.findall(body))
    if scripts * 2 > len(body):
        return "little content, mostly scripts"
    return None
