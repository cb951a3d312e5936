"""Interstitials are told apart from short real pages that talk about the same things."""

import pytest

from handlers.html import HTML_HANDLER
from handlers.registry import HandlerContext
from pipeline.core.errors import PipelineError


def run(title: str, body: str):
    html = f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"
    return HTML_HANDLER.handle(html.encode(), HandlerContext(url="https://example.org/p",
                                                             format="markdown"))


@pytest.mark.parametrize(
    ("title", "body"),
    [
        ("Just a moment...", "<h2>Verifying you are human. This may take a few seconds.</h2>"
                             "<div id='turnstile-wrapper'></div>"),
        ("Attention Required! | Cloudflare", "<h1>Sorry, you have been blocked</h1>"),
        ("Access to this page has been denied.",
         "<div id='px-captcha'></div><p>Press &amp; Hold to confirm you are a human.</p>"),
        ("example.com", "<script src='https://ct.captcha-delivery.com/c.js'></script>"),
        ("Shop", "<p>Please enable JavaScript to view this website.</p><script src='/a.js'>"
                 "</script>"),
    ],
)
def test_interstitials_are_challenges(title, body):
    with pytest.raises(PipelineError) as info:
        run(title, body)
    assert info.value.kind == "challenge"


@pytest.mark.parametrize(
    ("title", "body", "kept"),
    [
        ("What is a CAPTCHA?",
         "<article><h1>What is a CAPTCHA?</h1><p>A CAPTCHA is a test that tells humans and "
         "computers apart. Sites use it to stop bots from signing up in bulk.</p></article>",
         "tells humans and computers apart"),
        ("Enable JavaScript in Firefox",
         "<article><h1>How to enable JavaScript in Firefox</h1><p>Open the settings page, "
         "search for the JavaScript option and turn it on.</p></article>"
         "<script src='/a.js'></script>",
         "Open the settings page"),
        ("Access denied: why banks block foreign logins",
         "<article><p>Banks block logins from abroad by default, a policy that surprises "
         "travellers every summer.</p></article>",
         "Banks block logins"),
    ],
)
def test_short_real_pages_on_those_subjects_are_read(title, body, kept):
    assert kept in run(title, body).content
