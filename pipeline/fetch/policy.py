"""Which IP addresses we may connect to.

Default: only globally routable unicast addresses. ``allow_net`` opens exactly the CIDRs given,
``allow_private`` opens RFC 1918 / RFC 4193 ranges and loopback. Cloud metadata endpoints stay
refused whatever is opened.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from pipeline.core.errors import PipelineError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_net = ipaddress.ip_network

# Never reachable, whatever the settings say.
METADATA_NETWORKS: tuple[IPNetwork, ...] = (
    _net("169.254.0.0/16"),  # link-local; AWS/GCP/Azure/OpenStack metadata live here
    _net("fd00:ec2::254/128"),  # AWS IMDS over IPv6
    _net("100.100.100.200/32"),  # Alibaba Cloud metadata
)

PRIVATE_NETWORKS: tuple[IPNetwork, ...] = (
    _net("10.0.0.0/8"),
    _net("172.16.0.0/12"),
    _net("192.168.0.0/16"),
    _net("fc00::/7"),
    _net("127.0.0.0/8"),
    _net("::1/128"),
)

# IPv6 ranges that carry (or translate to) an IPv4 address: judged as a category of their own
# because the IPv4 inside may be anything, including a private or metadata address.
_NAT64 = (_net("64:ff9b::/96"), _net("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = _net("::/96")

# Labelled refusals, checked in order; anything else not globally routable is "reserved".
_LABELLED: tuple[tuple[IPNetwork, str], ...] = (
    (_net("0.0.0.0/8"), "unspecified"),
    (_net("::/128"), "unspecified"),
    (_net("127.0.0.0/8"), "loopback"),
    (_net("::1/128"), "loopback"),
    (_net("10.0.0.0/8"), "private"),
    (_net("172.16.0.0/12"), "private"),
    (_net("192.168.0.0/16"), "private"),
    (_net("fc00::/7"), "private"),
    (_net("100.64.0.0/10"), "shared (CGNAT)"),
    (_net("fe80::/10"), "link-local"),
    (_net("224.0.0.0/4"), "multicast"),
    (_net("ff00::/8"), "multicast"),
    (_net("255.255.255.255/32"), "broadcast"),
    (_net("240.0.0.0/4"), "reserved"),
)


def parse_networks(cidrs: Iterable[str]) -> tuple[IPNetwork, ...]:
    """Parse CIDR strings (a bare address means a single host); ``config`` error if invalid."""
    networks = []
    for cidr in cidrs:
        try:
            networks.append(ipaddress.ip_network(cidr.strip(), strict=False))
        except ValueError as exc:
            raise PipelineError("config", f"invalid CIDR in allow_net: {cidr!r}") from exc
    return tuple(networks)


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address carried inside an IPv6 one (mapped, 6to4, Teredo, NAT64, compatible)."""
    if ip.version == 4:
        return None
    assert isinstance(ip, ipaddress.IPv6Address)
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client address: where the traffic ends up
    if any(ip in net for net in _NAT64) or (ip in _IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _in(ip: IPAddress, networks: Iterable[IPNetwork]) -> bool:
    return any(ip.version == net.version and ip in net for net in networks)


class NetworkPolicy:
    """Judge IP addresses: :meth:`refusal` gives the reason an address is refused, or None."""

    MEMO_SIZE = 4096  # judgements remembered (a batch meets the same addresses again and again)

    def __init__(self, allow_net: Iterable[str] = (), allow_private: bool = False) -> None:
        self.allowed = parse_networks(allow_net)
        self.allow_private = allow_private
        self._memo: dict[str | IPAddress, str | None] = {}

    @classmethod
    def from_settings(cls, settings: object) -> NetworkPolicy:
        return cls(getattr(settings, "allow_net", ()), getattr(settings, "allow_private", False))

    def refusal(self, address: str | IPAddress) -> str | None:
        """Why ``address`` may not be contacted (short text), or None when it may."""
        try:
            return self._memo[address]
        except KeyError:
            pass
        if len(self._memo) >= self.MEMO_SIZE:
            self._memo.clear()
        reason = self._memo[address] = self._judge(address)
        return reason

    def _judge(self, address: str | IPAddress) -> str | None:
        try:
            ip = ipaddress.ip_address(address) if isinstance(address, str) else address
        except ValueError:
            return "not an IP address"
        if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
            ip = ipaddress.IPv6Address(int(ip))  # a zone index does not change the judgement
        inner = embedded_ipv4(ip)
        if _in(ip, METADATA_NETWORKS) or (inner is not None and _in(inner, METADATA_NETWORKS)):
            return "cloud metadata address"
        if _in(ip, self.allowed):
            return None
        if self.allow_private and _in(ip, PRIVATE_NETWORKS):
            return None
        if inner is not None:
            return "IPv4-embedded IPv6 address"
        for net, label in _LABELLED:
            if ip.version == net.version and ip in net:
                return f"{label} address"
        if ip.is_multicast or ip.is_reserved or ip.is_unspecified or not ip.is_global:
            return "reserved address"
        return None

    def check(self, address: str | IPAddress) -> None:
        """Raise ``PipelineError('blocked')`` unless ``address`` may be contacted."""
        reason = self.refusal(address)
        if reason is not None:
            hint = way_out(address)
            raise PipelineError("blocked", f"{reason} refused: {address}"
                                + (f" ({hint})" if hint else ""))


_WAY_OUT = re.compile(r"\ballow with (--[^;)]+)")


def way_out(address: str | IPAddress) -> str:
    """How a refused ``address`` can be opened, for its refusal message: the flags, then the
    settings of the same names ("" for cloud metadata, which never opens)."""
    try:
        ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    except ValueError:
        return ""
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        ip = ipaddress.IPv6Address(int(ip))
    inner = embedded_ipv4(ip)
    if _in(ip, METADATA_NETWORKS) or (inner is not None and _in(inner, METADATA_NETWORKS)):
        return ""
    private = _in(ip, PRIVATE_NETWORKS)
    flags = f"--allow-net {ip}/{ip.max_prefixlen}" + (" or --allow-private" if private else "")
    names = "settings allow_net, allow_private" if private else "setting allow_net"
    return f"allow with {flags}; {names}"


def way_out_in(message: str) -> str | None:
    """The flags a refusal message names to open its address (see :func:`way_out`)."""
    match = _WAY_OUT.search(message)
    return match[1] if match else None
