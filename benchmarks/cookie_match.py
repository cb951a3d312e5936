"""Why ``--cookie-file`` has its own matcher: the cost of finding one request's cookies in a
browser-sized cookies.txt with :mod:`http.cookiejar` against :class:`CookieFile`, and two
files the standard library cannot use.

    python benchmarks/cookie_match.py [--domains 3000] [--requests 200]
"""

from __future__ import annotations

import argparse
import http.cookiejar
import sys
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path

from yarl import URL

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.fetch.cookies import CookieFile

HEADER = "# Netscape HTTP Cookie File\n"


def stdlib_jar(path: Path) -> http.cookiejar.MozillaCookieJar:
    policy = http.cookiejar.DefaultCookiePolicy(
        strict_ns_domain=http.cookiejar.DefaultCookiePolicy.DomainStrictNonDomain)
    jar = http.cookiejar.MozillaCookieJar(policy=policy)
    jar.load(str(path), ignore_discard=True)
    return jar


def per_request_us(action, requests: int) -> float:
    started = time.perf_counter()
    for _ in range(requests):
        action()
    return (time.perf_counter() - started) / requests * 1e6


def stdlib_header(jar: http.cookiejar.CookieJar, url: str) -> str | None:
    request = urllib.request.Request(url)
    jar.add_cookie_header(request)
    return request.get_header("Cookie")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=3000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        big = Path(work) / "big.txt"
        big.write_text(HEADER + "".join(
            f".site{i}.test\tTRUE\t/\tFALSE\t4000000000\tc{i}\tv{i}\n"
            for i in range(args.domains)))
        url = f"https://www.site{args.domains // 2}.test/a"
        jar, ours = stdlib_jar(big), CookieFile.load(big)
        assert stdlib_header(jar, url) == ours.header_for(URL(url))
        slow = per_request_us(lambda: stdlib_header(jar, url), args.requests)
        fast = per_request_us(lambda: ours.header_for(URL(url)), args.requests * 50)
        print(f"| {args.domains} domains | http.cookiejar {slow:,.0f} µs/request | "
              f"CookieFile {fast:,.1f} µs/request |")

        bare = Path(work) / "bare.txt"
        bare.write_text(HEADER + "example.test\tTRUE\t/\tFALSE\t0\tn\tv\n")
        try:
            with warnings.catch_warnings():  # it reports its own assertion as a bug
                warnings.simplefilter("ignore")
                stdlib_jar(bare)
            print("http.cookiejar reads 'example.test TRUE'")
        except http.cookiejar.LoadError as exc:
            print(f"http.cookiejar refuses the whole file for 'example.test TRUE': {exc}")
        print(f"CookieFile: {len(CookieFile.load(bare))} cookie")

        local = Path(work) / "local.txt"
        local.write_text(HEADER + "localhost\tFALSE\t/\tFALSE\t0\tn\tv\n")
        theirs = stdlib_header(stdlib_jar(local), "http://localhost/")
        mine = CookieFile.load(local).header_for(URL("http://localhost/"))
        print(f"localhost: http.cookiejar sends {theirs!r}, CookieFile {mine!r}")


if __name__ == "__main__":
    main()
