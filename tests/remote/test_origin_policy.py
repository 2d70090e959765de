"""The Origin and Host rules alone (:mod:`acp_runtime.remote._origin_policy`); the servers'
answers to them are in ``test_network_safety``."""

from __future__ import annotations

from typing import Any

import pytest

from acp_runtime.remote._admission import Admission
from acp_runtime.remote._origin_policy import OriginPolicy, on_loopback

LOOPBACK = ("127.0.0.1", 8765)
PUBLIC = ("203.0.113.7", 443)


@pytest.mark.parametrize(
    ("server", "loopback"),
    [
        (LOOPBACK, True),
        (("127.9.9.9", 1), True),
        (("::1", 1, 0, 0), True),
        (("::ffff:127.0.0.1", 1), True),
        (PUBLIC, False),
        (("0.0.0.0", 80), False),
        (("fe80::1%eth0", 80), False),
        (None, True),  # unknown: the stricter rules
        (("/run/agent.sock", None), True),  # a Unix socket
        ((), True),
    ],
)
def test_where_a_request_came_in(server: Any, loopback: bool) -> None:
    assert on_loopback(server) is loopback


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),
        ("http://localhost", True),
        ("https://LOCALHOST:8443", True),
        ("http://127.1.2.3:9", True),
        ("http://[::1]:3000", True),
        ("http://localhost.", True),
        ("ws://localhost", False),  # an origin is a page's: http or https
        ("http://localhost.evil.example", False),
        ("http://127.0.0.1.evil.example", False),
        ("http://evil.example", False),
        ("null", False),
        ("", False),
        ("http://[::1", False),  # unparsable
    ],
)
def test_origins_on_a_loopback_address(origin: str | None, allowed: bool) -> None:
    assert OriginPolicy().allows(origin, "localhost", LOOPBACK) is allowed


def test_on_another_address_only_listed_origins_pass_and_every_host_unless_listed() -> None:
    default = OriginPolicy()
    assert default.allows(None, "agent.example", PUBLIC)
    assert not default.allows("http://localhost:3000", "agent.example", PUBLIC)
    listed = OriginPolicy(["https://ide.example"], ["agent.example"])
    assert listed.allows("https://ide.example", "Agent.Example:443", PUBLIC)
    assert not listed.allows(None, "other.example", PUBLIC)
    assert not listed.allows(None, "localhost", PUBLIC)  # the list is the list off loopback


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("localhost", True),
        ("localhost:8765", True),
        ("LOCALHOST.", True),
        ("127.0.0.1:80", True),
        ("[::1]:8765", True),
        ("[::ffff:127.0.0.1]", True),
        (None, True),  # no browser leaves it out
        ("evil.example", False),
        ("evil.example:8765", False),
        ("[::2]", False),
        ("10.0.0.1", False),
        ("", False),
    ],
)
def test_hosts_on_a_loopback_address(host: str | None, allowed: bool) -> None:
    assert OriginPolicy().allows(None, host, LOOPBACK) is allowed


def test_star_lets_every_value_through() -> None:
    anyone = OriginPolicy(["*"], ["*"])
    assert anyone.allows("http://evil.example", "evil.example", LOOPBACK)
    assert anyone.allows("null", "x", PUBLIC)


def test_the_head_limits_count_bytes_and_lines() -> None:
    admission = Admission(max_header_bytes=100, max_headers=3)
    assert admission.refusal([(b"host", b"localhost")], LOOPBACK) is None
    too_many = [(b"x-a", b"1")] * 4
    refused = admission.refusal(too_many, LOOPBACK)
    assert refused is not None and refused.status == 431
    too_big = [(b"x-a", b"a" * 100)]
    refused = admission.refusal(too_big, LOOPBACK)
    assert refused is not None and refused.status == 431
    foreign = admission.refusal([(b"Origin", b"http://evil.example")], LOOPBACK)
    assert foreign is not None and foreign.status == 403


def test_the_connection_slots_count_in_and_out() -> None:
    admission = Admission(max_connections=2)
    assert admission.take_slot() and admission.take_slot()
    assert not admission.take_slot()
    admission.release_slot()
    assert admission.take_slot()
    unlimited = Admission(max_connections=None)
    assert all(unlimited.take_slot() for _ in range(10_000))


@pytest.mark.parametrize(
    "options",
    [
        {"max_connections": 0},
        {"initialize_timeout": 0},
        {"initialize_timeout": float("nan")},
        {"max_header_bytes": 0},
        {"max_headers": 0},
    ],
)
def test_nonsense_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Admission(**options)
