"""``--warc-out`` under a credential scope: a sitemap on the user's origin lists pages there,
on a ``--credential-host`` and on a foreign origin (which also serves a child sitemap and is
the target of a redirect). Each server logs the headers it received; the WARC's request
records must say the same — the credentials that were sent, redacted (``Authorization``,
``Cookie`` and a ``--credential-header``), and none where the scope withheld them."""

from __future__ import annotations

import gzip

import pytest

from pipeline.batch.output.warc_out import warc_files
from tests.batch.input.sitemap_site import index, urlset
from tests.batch.input.test_credential_scope import FLAGS, SECRETS, _cookie_file, logging_site
from tests.cli.test_end_to_end import run_cli
from tests.support.pages import serve
from tests.support.records import read_records
from tests.support.warc_files import read_all, record_headers

pytest.importorskip("fastwarc", reason="the warc extra: pip install -e '.[warc]'")
pytest.importorskip("warcio", reason="warcio reads what we write (the test extra)")

STEM = "part-00000-of-00001"
REDACTED = "<redacted>"


async def test_warc_request_records_say_what_each_server_received(tmp_path):
    logs: dict[str, list] = {"mine": [], "trusted": [], "foreign": []}
    documents: dict[str, dict[str, bytes]] = {name: {} for name in logs}
    redirects: dict[str, str] = {}
    warc, out = tmp_path / "warc", tmp_path / "out.jsonl"
    async with serve(logging_site(logs["mine"], documents["mine"], redirects)) as mine, \
            serve(logging_site(logs["trusted"], documents["trusted"])) as trusted, \
            serve(logging_site(logs["foreign"], documents["foreign"])) as foreign:
        documents["mine"]["/map.xml"] = index([f"{mine}/pages.xml", f"{trusted}/more.xml",
                                               f"{foreign}/other.xml"])
        documents["mine"]["/pages.xml"] = urlset([f"{mine}/a", f"{mine}/go", f"{trusted}/b",
                                                  f"{foreign}/c"])
        documents["trusted"]["/more.xml"] = urlset([f"{trusted}/d", f"{foreign}/e"])
        documents["foreign"]["/other.xml"] = urlset([f"{foreign}/f"])
        redirects["/go"] = f"{foreign}/landing"  # leaves the first host: credentials stay
        code, stderr = await run_cli(
            "--sitemap", f"{mine}/map.xml", "-o", str(out), "--warc-out", str(warc),
            "--credential-host", trusted.removeprefix("http://"),
            "--cookie-file", _cookie_file(tmp_path), *FLAGS)
    assert code == 0, stderr
    assert len(read_records(out)) == 7  # a, go (its landing), b, c, d, e, f

    received: dict[str, list[dict[str, str]]] = {}  # URL: the headers of each GET
    for name, root in (("mine", mine), ("trusted", trusted), ("foreign", foreign)):
        for method, path, headers in logs[name]:
            if method == "GET":
                received.setdefault(root + path, []).append(headers)
    archived: dict[str, list[dict[str, str]]] = {}
    [path] = warc_files(warc, STEM)
    assert all(kind in ("warcinfo", "request", "response") for kind, _, _ in read_all(path))
    for warc_headers, http, _ in record_headers(path):
        if warc_headers["WARC-Type"] == "request":
            assert http is not None
            archived.setdefault(warc_headers["WARC-Target-URI"], []).append(
                {name.lower(): value for name, value in http.headers})

    # every GET is archived once, sitemap documents and the redirect's two hops included
    assert archived.keys() == received.keys()
    assert {f"{mine}/map.xml", f"{trusted}/more.xml", f"{foreign}/other.xml", f"{mine}/go",
            f"{foreign}/landing"} <= archived.keys()
    for url, gets in received.items():
        assert len(archived[url]) == len(gets) == 1, url
        got, kept = gets[0], archived[url][0]
        for name, value in kept.items():  # what the record says was sent, was
            assert got[name] == value or (name in SECRETS and value == REDACTED), (url, name)
        present = {name for name in SECRETS if name in got}
        assert present == (set(SECRETS) if url.startswith((mine, trusted)) else set()), url
        assert {name for name in SECRETS if name in kept} == present, url

    whole = gzip.decompress(path.read_bytes())
    for secret in (b"Bearer SECRET", b": KEY\r\n", b"sid=COOKIE"):
        assert secret not in whole
    assert b"\r\nX-Api-Key: " + REDACTED.encode() + b"\r\n" in whole
