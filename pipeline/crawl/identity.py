"""One URL identity for the whole crawl: two spellings of one page get one key.

Scheme and host lower-cased, the default port, the fragment and user info dropped,
percent-encoding normalised (yarl: unreserved characters decoded, hex upper-cased, dot
segments resolved), query parameters sorted, tracking parameters and session ids removed
(also as ``;jsessionid=`` path parameters), and ``…/index.html`` (``.htm``, ``.php``) the
same as its directory. ``/a`` and ``/a/`` stay two paths: a server that treats them as one
says so with a redirect, which makes them aliases in the frontier.
"""

from __future__ import annotations

import re

from yarl import URL

# Parameters that say who sent the visitor, not what the page is.
TRACKING_PREFIXES = ("utm_",)
TRACKING = frozenset({
    "gclid", "gclsrc", "dclid", "fbclid", "msclkid", "yclid", "twclid", "ttclid", "igshid",
    "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "oly_anon_id",
    "oly_enc_id", "vero_id", "wickedid", "rb_clickid", "s_cid", "ref_src",
})
# Parameters that carry a visitor's session.
SESSION = frozenset({
    "jsessionid", "phpsessid", "aspsessionid", "asp.net_sessionid", "sid", "sessionid",
    "session_id", "cfid", "cftoken", "zenid", "oscsid",
})
INDEX_PAGES = frozenset({"index.html", "index.htm", "index.php"})
_PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid|sid)=[^/;?]*", re.IGNORECASE)


def dropped_parameter(name: str) -> bool:
    """A query parameter that never tells two pages apart (tracking or session)."""
    lowered = name.lower()
    return lowered in TRACKING or lowered in SESSION or lowered.startswith(TRACKING_PREFIXES)


def url_identity(url: str | URL) -> str:
    """The identity key of an absolute http(s) URL (any other string comes back as given,
    stripped: it never equals a web page's key)."""
    try:
        parsed = url if isinstance(url, URL) else URL(url.strip())
    except (ValueError, TypeError):
        return str(url).strip()
    if not parsed.absolute or parsed.scheme.lower() not in ("http", "https"):
        return str(url).strip()
    path = _PATH_SESSION.sub("", parsed.raw_path) or "/"
    head, _, last = path.rpartition("/")
    if last.lower() in INDEX_PAGES:
        path = head + "/"
    pairs = sorted((key, value) for key, value in parsed.query.items()
                   if not dropped_parameter(key))
    host = (parsed.raw_host or "").lower().rstrip(".")
    if ":" in host:
        host = f"[{host}]"
    if not parsed.is_default_port() and parsed.explicit_port is not None:
        host = f"{host}:{parsed.explicit_port}"
    built = URL(f"{parsed.scheme.lower()}://{host}{path}", encoded=True)
    if pairs:
        built = built.with_query(pairs)
    return str(built)
