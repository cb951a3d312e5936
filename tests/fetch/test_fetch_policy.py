"""The address policy: what is refused by default, what the switches open, what never opens."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.core.errors import PipelineError
from pipeline.core.settings import Settings
from pipeline.fetch import NetworkPolicy


@pytest.mark.parametrize("address, label", [
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"),
    ("fd12:3456::1", "private"), ("127.0.0.1", "loopback"), ("127.255.0.1", "loopback"),
    ("::1", "loopback"), ("169.254.169.254", "metadata"), ("169.254.1.1", "metadata"),
    ("fe80::1", "link-local"), ("fe80::1%eth0", "link-local"), ("100.64.0.1", "CGNAT"),
    ("100.127.255.254", "CGNAT"), ("100.100.100.200", "metadata"),
    ("fd00:ec2::254", "metadata"), ("224.0.0.1", "multicast"), ("239.1.1.1", "multicast"),
    ("ff02::1", "multicast"), ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("240.0.0.1", "reserved"), ("255.255.255.255", "broadcast"), ("192.0.2.1", "reserved"),
    ("2001:db8::1", "reserved"), ("198.18.0.1", "reserved"),
    ("::ffff:10.0.0.1", "embedded"), ("::ffff:127.0.0.1", "embedded"),
    ("::ffff:8.8.8.8", "embedded"),
    ("::ffff:169.254.169.254", "metadata"), ("64:ff9b::a00:1", "embedded"),
    ("64:ff9b::a9fe:a9fe", "metadata"), ("2002:7f00:1::", "embedded"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "embedded"), ("::127.0.0.1", "embedded"),
    ("not-an-ip", "not an IP"),
])
def test_refused_by_default(address, label):
    reason = NetworkPolicy().refusal(address)
    assert reason is not None and label in reason


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700::1111",
                                     "1.1.1.1", "100.128.0.1"])
def test_public_addresses_allowed(address):
    assert NetworkPolicy().refusal(address) is None


def test_allow_net_opens_exactly_the_ranges_given():
    policy = NetworkPolicy(["127.0.0.1/32", "10.0.0.0/8"])
    assert policy.refusal("127.0.0.1") is None
    assert policy.refusal("::ffff:127.0.0.1") is not None  # not a range that was given
    assert policy.refusal("10.200.0.1") is None
    assert policy.refusal("127.0.0.2") is not None
    assert policy.refusal("192.168.0.1") is not None
    assert policy.refusal("::1") is not None


def test_allow_private_opens_rfc1918_rfc4193_and_loopback_only():
    policy = NetworkPolicy(allow_private=True)
    for address in ["10.0.0.1", "172.31.255.255", "192.168.0.1", "fd00::1", "127.0.0.1", "::1"]:
        assert policy.refusal(address) is None, address
    for address in ["100.64.0.1", "fe80::1", "224.0.0.1", "0.0.0.0", "240.0.0.1"]:
        assert policy.refusal(address) is not None, address


@pytest.mark.parametrize("address", ["169.254.169.254", "169.254.0.1", "fd00:ec2::254",
                                     "100.100.100.200", "::ffff:169.254.169.254",
                                     "64:ff9b::a9fe:a9fe"])
def test_metadata_is_never_allowed(address):
    policy = NetworkPolicy(["0.0.0.0/0", "::/0"], allow_private=True)
    assert "metadata" in (policy.refusal(address) or "")


def test_check_raises_blocked_and_settings_build_the_policy():
    policy = NetworkPolicy.from_settings(Settings(allow_net=["127.0.0.1/32"]))
    policy.check("127.0.0.1")
    with pytest.raises(PipelineError) as info:
        policy.check("10.0.0.1")
    assert info.value.kind == "blocked" and "10.0.0.1" in info.value.message


def test_invalid_cidr_is_a_config_error():
    with pytest.raises(PipelineError) as info:
        NetworkPolicy(["10.0.0.0/33"])
    assert info.value.kind == "config"


_ipv4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)
_ipv6 = st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address)
_REFUSED_V4 = [ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4")]


@given(st.sampled_from(_REFUSED_V4).flatmap(
    lambda net: st.integers(0, net.num_addresses - 1).map(lambda n: net[n])))
def test_every_address_of_a_refused_range_is_refused(address):
    assert NetworkPolicy().refusal(address) is not None


@given(_ipv4, st.sampled_from(["::ffff:{}", "64:ff9b::{}", "2002:{}::"]))
def test_ipv4_embedded_in_ipv6_is_refused_by_default(address, template):
    packed = address.packed.hex()
    embedded = template.format(f"{packed[:4]}:{packed[4:]}")
    assert NetworkPolicy().refusal(embedded) is not None


@given(st.one_of(_ipv4, _ipv6))
def test_with_everything_open_only_metadata_stays_refused(address):
    policy = NetworkPolicy(["0.0.0.0/0", "::/0"], allow_private=True)
    reason = policy.refusal(address)
    assert reason is None or "metadata" in reason


@pytest.mark.parametrize("address, way_out", [
    ("127.0.0.1", "--allow-net 127.0.0.1/32 or --allow-private"),
    ("::1", "--allow-net ::1/128 or --allow-private"),
    ("192.168.1.20", "--allow-net 192.168.1.20/32 or --allow-private"),
    ("100.64.0.1", "--allow-net 100.64.0.1/32"),  # not private: only allow_net opens it
])
def test_a_refusal_names_the_way_out(address, way_out):
    with pytest.raises(PipelineError) as info:
        NetworkPolicy().check(address)
    assert info.value.kind == "blocked"
    assert info.value.message.startswith(f"{NetworkPolicy().refusal(address)} refused: {address}")
    assert f" (allow with {way_out}; " in info.value.message
    assert "allow_net" in info.value.message.split(";")[1]  # the library's names for the same


@pytest.mark.parametrize("address", ["169.254.169.254", "::ffff:169.254.169.254"])
def test_cloud_metadata_refusals_offer_no_way_out(address):
    with pytest.raises(PipelineError) as info:
        NetworkPolicy(allow_private=True).check(address)
    assert "allow" not in info.value.message
