"""A resolver that judges the addresses a name resolves to before aiohttp may connect.

aiohttp asks the connector's resolver for every new connection (through its DNS cache), so a
refused address never gets a socket, and a name that resolves to a public address once and to
a private one later (DNS rebinding) is judged each time it is resolved.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from pipeline.fetch.policy import NetworkPolicy, way_out


class AddressBlocked(OSError):
    """Every address a host resolved to is refused by the policy."""

    def __init__(self, host: str, reason: str, way_out: str = "") -> None:
        super().__init__(f"{host}: {reason} refused")
        self.host = host
        self.reason = reason
        self.way_out = way_out  # how to open the address (see policy.way_out)


class PolicyResolver(AbstractResolver):
    """Wrap ``inner`` and keep only the addresses ``policy`` allows.

    A lookup that fails, times out or returns nothing fails closed (``OSError``); when every
    address is refused, :class:`AddressBlocked` names the first reason. ``host_policies``
    judges the names it lists by their own policy instead (a proxy's name).
    """

    def __init__(self, policy: NetworkPolicy, inner: AbstractResolver | None = None,
                 timeout: float | None = None,
                 host_policies: Mapping[str, NetworkPolicy] | None = None) -> None:
        self.policy = policy
        self._inner = inner
        self._timeout = timeout
        self._host_policies = dict(host_policies or {})

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        if self._inner is None:  # created lazily: it needs the running loop
            self._inner = DefaultResolver()
        try:
            results = await asyncio.wait_for(self._inner.resolve(host, port, family),
                                             self._timeout)
        except TimeoutError as exc:  # temporary, as the resolver's own EAI_AGAIN
            raise socket.gaierror(socket.EAI_AGAIN, f"DNS lookup timed out for {host}") from exc
        allowed: list[ResolveResult] = []
        first_reason: str | None = None
        first_way_out = ""
        policy = self._host_policies.get(host, self.policy) if self._host_policies else self.policy
        for result in results:
            reason = policy.refusal(result["host"])
            if reason is None:
                allowed.append(result)
            elif first_reason is None:
                first_reason = f"{reason} {result['host']}"
                first_way_out = way_out(result["host"])
        if allowed:
            return allowed
        if first_reason is not None:
            raise AddressBlocked(host, first_reason, first_way_out)
        raise OSError(f"DNS lookup returned no address for {host}")

    async def close(self) -> None:
        if self._inner is not None:
            await self._inner.close()
