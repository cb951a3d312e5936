"""The archive port: where a fetcher hands every HTTP exchange it made (``--warc-out``).

The fetcher calls :meth:`ResponseArchive.keep` once per GET it sent whose response headers
arrived: page fetches (each redirect hop too), robots.txt, sitemaps and feeds. HEAD probes
are not kept (no body; an archive reader would index them as empty captures). Responses the
fetcher refuses before reading a byte of their body (a Content-Length over ``--max-bytes``,
a media type no handler reads) are not kept either: nothing of them was received.

Implementations: the WARC writer of the batch command
(:class:`pipeline.batch.output.warc_out.WarcWriter`) and :class:`FakeArchive` (a list, for
tests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from pipeline.core.request_options import CREDENTIAL_HEADERS

# WARC-Truncated's values (WARC 1.1, 5.13): why a kept body is shorter than the response's.
Truncation = Literal["length", "time", "disconnect", "unspecified"]


@dataclass(frozen=True)
class Exchange:
    """One request and its response as they went over the wire.

    ``request_headers`` are the headers the fetcher sent (its own and the caller's, with
    the credentials it sent: none where the credential scope withheld them);
    ``credentials`` names (lowercase) the headers that carry credentials, which an archive
    must not keep (the WARC writer redacts them). ``headers`` are the response's, in the
    order received. ``body`` holds the bytes received: still in their Content-Encoding,
    without Transfer-Encoding's chunk framing (the client removed it). ``truncated`` says
    why ``body`` stops short of the response (None: it is whole): ``length`` a size cap
    stopped reading, ``time`` the deadline, ``disconnect`` the connection, ``unspecified``
    the fetcher did not read it (a redirect's or an error page's body). ``sent`` is when the
    request went out (UTC).
    """

    method: str
    url: str
    request_headers: Mapping[str, str]
    status: int
    reason: str | None
    version: str
    headers: Sequence[tuple[str, str]]
    body: bytes
    sent: datetime
    truncated: Truncation | None = None
    credentials: frozenset[str] = CREDENTIAL_HEADERS


@runtime_checkable
class ResponseArchive(Protocol):
    """Contract of an archive: :meth:`keep` stores one exchange before it returns (so a
    record written after it never names a response the archive lacks, even after a
    ``kill -9``) and never raises: an archive that cannot write keeps the failure for its
    owner to act on (the batch command's WARC writer ends the run before the next record is
    written). It is called from the fetcher's event loop, one call at a time."""

    def keep(self, exchange: Exchange) -> None: ...


@dataclass
class FakeArchive:
    """An archive that keeps exchanges in a list (``exchanges``), in order."""

    exchanges: list[Exchange] = field(default_factory=list)

    def keep(self, exchange: Exchange) -> None:
        self.exchanges.append(exchange)
