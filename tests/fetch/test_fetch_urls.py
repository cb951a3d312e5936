"""URL normalisation and validation (no network)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from yarl import URL

from pipeline.core.errors import PipelineError
from pipeline.fetch import normalize_url
from pipeline.fetch.urls import MAX_URL_BYTES, parse_ipv4_host, resolve_location


@pytest.mark.parametrize("raw, expected", [
    ("http://example.com", "http://example.com/"),
    ("  https://Example.COM/a b\n", "https://example.com/a%20b"),
    ("HTTP://bücher.de/%7efoo?q=1#frag", "http://xn--bcher-kva.de/~foo?q=1"),
    ("http://user:pw@example.com/x", "http://example.com/x"),
    ("http://example.com./", "http://example.com/"),
    ("https://example.com:443/", "https://example.com/"),
    ("http://example.com:8080", "http://example.com:8080/"),
    ("http://x.com/a/../b/./c", "http://x.com/b/c"),
    ("http://ex\tample.com/pa\nth", "http://example.com/path"),
    ("http:/example.com/", "http://example.com/"),
    ("http://[::1]:8080", "http://[::1]:8080/"),
    ("http://%65xample.com/", "http://example.com/"),
])
def test_normalisation(raw, expected):
    assert normalize_url(raw) == expected


@pytest.mark.parametrize("raw, kind", [
    ("javascript:alert(1)", "blocked"),
    ("JaVaScRiPt:alert(1)", "blocked"),
    ("file:///etc/passwd", "blocked"),
    ("data:text/html,<script>", "blocked"),
    ("ftp://example.com/file", "blocked"),
    ("gopher://127.0.0.1:25/", "blocked"),
    ("example.com/page", "invalid_url"),
    ("//example.com/page", "invalid_url"),
    ("localhost:8080/x", "invalid_url"),
    ("", "invalid_url"),
    ("   ", "invalid_url"),
    ("http://", "invalid_url"),
    ("http://:80/", "invalid_url"),
    ("http://exa mple.com/", "invalid_url"),
    ("http://a..b/", "invalid_url"),
    ("http://example.com:99999/", "invalid_url"),
    ("http://example.com:0/", "invalid_url"),
    ("http://ex\x00ample.com/", "invalid_url"),
    ("http://evil.com\\@good.com/", "invalid_url"),
    ("http://1.2.3.4.5/", "invalid_url"),
    ("http://256.0.0.1/", "invalid_url"),
    ("http://[::1/", "invalid_url"),
    ("http://0x7f000001/", "blocked"),
    ("http://2130706433/", "blocked"),
    ("http://0177.0.0.1/", "blocked"),
    ("http://127.1/", "blocked"),
    ("http://example.com/" + "a" * MAX_URL_BYTES, "invalid_url"),
])
def test_refusals(raw, kind):
    with pytest.raises(PipelineError) as info:
        normalize_url(raw)
    assert info.value.kind == kind
    assert info.value.message.isprintable()


@pytest.mark.parametrize("host, address", [
    ("0x7f000001", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"),
    ("127.1", "127.0.0.1"), ("10.1.2", "10.1.0.2"), ("0", "0.0.0.0"),
    ("169.254.169.254", "169.254.169.254"), ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
])
def test_numeric_hosts_are_recognised(host, address):
    assert str(parse_ipv4_host(host)) == address


def test_domain_names_are_not_numeric():
    assert parse_ipv4_host("example.com") is None
    assert parse_ipv4_host("1.2.3.com") is None


def test_user_at_host_trick_judges_the_real_host():
    assert normalize_url("http://example.com@10.0.0.1/") == "http://10.0.0.1/"


def test_redirect_location_resolution():
    base = URL("https://a.example/dir/page")
    assert str(resolve_location(base, "other")) == "https://a.example/dir/other"
    assert str(resolve_location(base, "//b.example/x")) == "https://b.example/x"
    assert str(resolve_location(base, "HTTP://C.example")) == "http://c.example/"
    for bad, kind in [(None, "invalid_url"), ("", "invalid_url"),
                      ("file:///etc/passwd", "blocked"), ("http://0x7f000001/", "blocked")]:
        with pytest.raises(PipelineError) as info:
            resolve_location(base, bad)
        assert info.value.kind == kind


@given(st.text(max_size=300))
def test_any_text_is_normalised_or_refused_with_a_stable_kind(text):
    try:
        url = normalize_url(text)
    except PipelineError as exc:
        assert exc.kind in ("invalid_url", "blocked")
        return
    assert url.startswith(("http://", "https://"))
    assert normalize_url(url) == url  # idempotent
    assert len(url.encode()) <= MAX_URL_BYTES


_label = r"[a-z](?:[a-z0-9-]{0,8}[a-z0-9])?"
_host = st.from_regex(rf"{_label}(?:\.{_label}){{0,3}}", fullmatch=True)


@given(st.sampled_from(["http", "https", "HTTP"]), _host,
       st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=60))
def test_valid_urls_keep_scheme_and_host(scheme, host, path):
    url = normalize_url(f"{scheme}://{host}/{path}")
    parsed = URL(url)
    assert (parsed.scheme, parsed.raw_host) == (scheme.lower(), host)
    assert normalize_url(url) == url


@given(st.sampled_from(["http://", "https://", "HTTP://", "http:/", "http:\\\\"]),
       st.text(max_size=200))
def test_url_like_text_is_normalised_or_refused(prefix, rest):
    try:
        url = normalize_url(prefix + rest)
    except PipelineError as exc:
        assert exc.kind in ("invalid_url", "blocked") and exc.message.isprintable()
        return
    parsed = URL(url)
    assert parsed.scheme in ("http", "https") and parsed.raw_host
    assert parsed.raw_host.isascii() and not parsed.user and not parsed.fragment
    assert normalize_url(url) == url
