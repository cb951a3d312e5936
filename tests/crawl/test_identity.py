"""URL identity: one key per page, idempotent, never two distinct paths merged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.crawl.identity import url_identity

SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.~é ", min_size=1,
                  max_size=8).filter(lambda s: s not in (".", "..")
                                     and s.lower() not in ("index.html", "index.htm",
                                                           "index.php"))
PATH = st.lists(SEGMENT, max_size=5).map(lambda parts: "/" + "/".join(parts))
KEY = st.sampled_from(["a", "b", "q", "page", "utm_source", "gclid", "PHPSESSID", "id"])
QUERY = st.lists(st.tuples(KEY, st.text(alphabet="xyz01 &=", max_size=4)), max_size=4)
HOST = st.sampled_from(["example.com", "Example.COM", "docs.example.org", "127.0.0.1",
                        "[::1]"])


def _url(scheme: str, host: str, port: str, path: str, query: list[tuple[str, str]],
         fragment: str) -> str:
    from urllib.parse import quote, urlencode

    url = f"{scheme}://{host}{port}{quote(path)}"
    if query:
        url += "?" + urlencode(query)
    return url + (f"#{fragment}" if fragment else "")


URLS = st.builds(_url, st.sampled_from(["http", "HTTP", "https"]), HOST,
                 st.sampled_from(["", ":8080"]), PATH, QUERY,
                 st.sampled_from(["", "top", "a/b"]))


@settings(deadline=None)
@given(URLS)
def test_identity_is_idempotent(url: str) -> None:
    assert url_identity(url_identity(url)) == url_identity(url)


@settings(deadline=None)
@given(PATH, PATH)
def test_distinct_paths_stay_distinct(first: str, second: str) -> None:
    from urllib.parse import quote

    one = url_identity("http://example.com" + quote(first))
    two = url_identity("http://example.com" + quote(second))
    assert (one == two) == (first == second)


def test_spellings_of_one_page_share_a_key() -> None:
    same = [
        "http://example.com/docs/",
        "HTTP://EXAMPLE.com:80/docs/#intro",
        "http://example.com/docs/index.html",
        "http://example.com/docs/INDEX.HTM?utm_source=news&utm_medium=mail",
        "http://example.com/docs/index.php?gclid=1&fbclid=2",
        "http://example.com/docs/;jsessionid=ABC123",
        "http://example.com/docs/?PHPSESSID=77",
        "http://example.com/%64ocs/",
    ]
    assert {url_identity(url) for url in same} == {"http://example.com/docs/"}


def test_query_order_does_not_matter_but_values_do() -> None:
    assert url_identity("http://e.com/s?b=2&a=1") == url_identity("http://e.com/s?a=1&b=2")
    assert url_identity("http://e.com/s?a=1") != url_identity("http://e.com/s?a=2")
    assert url_identity("http://e.com/a") != url_identity("http://e.com/a/")
    assert url_identity("https://e.com/") != url_identity("http://e.com/")
    assert url_identity("http://e.com:8080/") != url_identity("http://e.com/")


def test_non_web_strings_come_back_as_given() -> None:
    assert url_identity("mailto:a@b.c") == "mailto:a@b.c"
    assert url_identity(" not a url ") == "not a url"
