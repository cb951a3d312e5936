"""The cookies-file reader and matcher, and the same-host rule for credentials."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from yarl import URL

from pipeline.core.errors import PipelineError
from pipeline.fetch.cookies import Cookie, CookieFile, parse_line, path_matches
from pipeline.fetch.credentials import merge_headers, same_host


def jar(*cookies: Cookie, now: float = 1_000_000.0) -> CookieFile:
    return CookieFile(cookies, clock=lambda: now)


def cookie(domain: str, name: str = "c", *, subdomains: bool = False, path: str = "/",
           secure: bool = False, expires: int = 0) -> Cookie:
    return Cookie(domain, subdomains, path, secure, expires, name, "v")


def test_lines_are_parsed_like_curl_writes_them():
    assert parse_line("# a comment", 1) is None
    assert parse_line("   ", 2) is None
    parsed = parse_line("#HttpOnly_.Example.COM\tTRUE\t/p\tTRUE\t1700000000\tsid\ta b", 3)
    assert parsed == Cookie("example.com", True, "/p", True, 1700000000, "sid", "a b",
                            http_only=True)
    # a leading dot means subdomains whatever the flag says; a bare TRUE domain is accepted
    assert parse_line(".a.test\tFALSE\t/\tFALSE\t0\tn\tv", 4).subdomains
    assert parse_line("a.test\tTRUE\t/\tFALSE\t0\tn\tv", 5).subdomains


@pytest.mark.parametrize("line, problem", [
    ("a.test\tFALSE\t/\tFALSE\t0\tn", "7 tab-separated"),
    ("a.test\tMAYBE\t/\tFALSE\t0\tn\tv", "TRUE or FALSE"),
    ("a.test\tFALSE\t/\tFALSE\tsoon\tn\tv", "expiry"),
    ("\tFALSE\t/\tFALSE\t0\tn\tv", "empty domain"),
])
def test_a_malformed_line_is_a_config_error_with_its_number(tmp_path, line, problem):
    path = tmp_path / "cookies.txt"
    path.write_text(f"# Netscape HTTP Cookie File\n{line}\n")
    with pytest.raises(PipelineError) as caught:
        CookieFile.load(path)
    assert caught.value.kind == "config"
    assert "line 2" in caught.value.message and problem in caught.value.message


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(PipelineError) as caught:
        CookieFile.load(tmp_path / "nope.txt")
    assert caught.value.kind == "config" and "nope.txt" in caught.value.message


def test_expired_cookies_are_dropped_when_read(tmp_path):
    path = tmp_path / "cookies.txt"
    path.write_text("a.test\tFALSE\t/\tFALSE\t10\told\t1\na.test\tFALSE\t/\tFALSE\t0\tsession\t2\n"
                    "a.test\tFALSE\t/\tFALSE\t5000\tlater\t3\n")
    loaded = CookieFile.load(path, clock=lambda: 100.0)
    assert len(loaded) == 2
    assert loaded.header_for(URL("http://a.test/")) == "session=2; later=3"


def test_host_only_and_domain_cookies():
    cookies = jar(cookie("example.com", "host"), cookie("example.com", "dom", subdomains=True))
    assert cookies.header_for(URL("http://example.com/")) == "host=v; dom=v"
    assert cookies.header_for(URL("http://a.b.example.com/")) == "dom=v"
    assert cookies.header_for(URL("http://badexample.com/")) is None
    assert cookies.header_for(URL("http://com/")) is None


def test_ip_hosts_match_exactly_never_by_suffix():
    cookies = jar(cookie("0.0.1", subdomains=True), cookie("127.0.0.1", "exact"))
    assert cookies.header_for(URL("http://127.0.0.1:8080/")) == "exact=v"
    assert cookies.header_for(URL("http://127.0.0.2/")) is None


def test_secure_and_expiry_are_checked_per_request():
    clock = [100.0]
    cookies = CookieFile([cookie("a.test", "s", secure=True), cookie("a.test", "t", expires=200)],
                         clock=lambda: clock[0])
    assert cookies.header_for(URL("http://a.test/")) == "t=v"
    assert cookies.header_for(URL("https://a.test/")) == "s=v; t=v"
    clock[0] = 300.0
    assert cookies.header_for(URL("https://a.test/")) == "s=v"


@pytest.mark.parametrize("request_path, cookie_path, expected", [
    ("/", "/", True), ("/docs", "/docs", True), ("/docs/a", "/docs", True),
    ("/docs/a", "/docs/", True), ("/docsx", "/docs", False), ("/", "/docs", False),
])
def test_path_match(request_path, cookie_path, expected):
    assert path_matches(request_path, cookie_path) is expected


segment = st.text(alphabet="abcxyz", min_size=1, max_size=4)


@given(st.lists(segment, min_size=1, max_size=4), st.lists(segment, max_size=3))
def test_a_path_matches_its_own_prefixes_at_segment_boundaries(head, tail):
    cookie_path = "/" + "/".join(head)
    request_path = "/".join([cookie_path, *tail])
    assert path_matches(request_path, cookie_path)
    assert not path_matches(cookie_path + "q", cookie_path)


@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3),
       st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3))
def test_a_host_only_cookie_reaches_its_host_alone(labels, other):
    host, elsewhere = ".".join(labels) + ".test", ".".join(other) + ".test"
    cookies = jar(cookie(host))
    assert cookies.header_for(URL(f"http://{host}/")) == "c=v"
    assert (cookies.header_for(URL(f"http://{elsewhere}/")) is None) is (host != elsewhere)


@pytest.mark.parametrize("start, hop, same", [
    ("http://a.test/x", "http://a.test/y", True),
    ("http://a.test/", "https://a.test/", True),  # the upgrade on default ports
    ("https://a.test/", "http://a.test/", False),  # a downgrade
    ("http://a.test:8080/", "https://a.test/", False),
    ("http://a.test/", "http://a.test:8080/", False),
    ("http://a.test/", "http://b.a.test/", False),
])
def test_same_host(start, hop, same):
    assert same_host(URL(hop), URL(start)) is same


def test_merge_headers_replaces_names_in_any_case():
    assert merge_headers({"User-Agent": "a", "Accept": "b"}, {"user-agent": "c"}) == {
        "Accept": "b", "user-agent": "c"}
