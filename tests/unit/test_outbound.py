"""Fetches for API callers reach public addresses only: every spelling, every hop, pinned."""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from crag_core.formats import outbound
from crag_core.formats.extract import Unextractable
from crag_core.formats.fetch_url import fetch
from crag_core.formats.outbound import UNREACHABLE, Outbound, is_public, parse_allowed

INTERNAL = [
    "127.0.0.1",
    "127.8.9.10",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # shared (carrier-grade NAT)
    "0.0.0.0",
    "224.0.0.251",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd00::1",  # unique-local
    "ff02::1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:10.0.0.1",
    "2002:7f00:1::1",  # 6to4 around 127.0.0.1
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo around 10.0.0.1
    "64:ff9b::a00:1",  # NAT64 around 10.0.0.1
]
PUBLIC = ["8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808"]


@pytest.mark.parametrize("address", INTERNAL)
def test_internal_addresses_are_not_public(address):
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are(address):
    assert is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("spelling", ["2130706433", "0x7f.1", "127.1", "0177.0.0.1", "localhost"])
def test_every_spelling_of_loopback_resolves_to_loopback(spelling):
    found = outbound.resolve(spelling, 80, timeout_s=5)
    assert found and all(a.is_loopback for a in found), found


def test_the_allow_list_reads_hosts_ports_and_networks():
    allowed = parse_allowed("wiki.internal, 10.1.0.0/16, 127.0.0.1:8080, [::1]:9000, Docs.Lan.:81")
    assert [(a.host, str(a.network), a.port) for a in allowed] == [
        ("wiki.internal", "None", None),
        ("", "10.1.0.0/16", None),
        ("", "127.0.0.1/32", 8080),
        ("", "::1/128", 9000),
        ("docs.lan", "None", 81),
    ]
    for bad in ("host:port", "127.0.0.1:0", "a/b/c", "user@host"):
        with pytest.raises(ValueError, match="not a host|no valid port"):
            parse_allowed(bad)


def test_one_internal_answer_among_public_ones_is_refused(monkeypatch):
    answers = [ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address("10.0.0.7")]
    monkeypatch.setattr(outbound, "resolve", lambda host, port, timeout_s: answers)
    with pytest.raises(outbound.Refused):
        Outbound().address("mixed.example", 80, 5)
    allowed = Outbound(parse_allowed("10.0.0.0/8"))
    assert allowed.address("mixed.example", 80, 5) == "93.184.216.34"
    only_port = Outbound(parse_allowed("mixed.example:8080"))
    with pytest.raises(outbound.Refused):
        only_port.address("mixed.example", 80, 5)
    assert only_port.address("mixed.example", 8080, 5) == "93.184.216.34"


@pytest.fixture(scope="module")
def internal() -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """A loopback "internal service": a secret page, a redirect to it; records each request."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append({"path": self.path, "headers": dict(self.headers)})
            if self.path == "/to-secret":
                self.send_response(302)
                self.send_header("Location", f"http://127.0.0.1:{port}/secret")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = b"internal secret 7731"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield port, seen
    server.shutdown()
    server.server_close()


def test_an_api_fetch_reaches_no_internal_address_in_any_spelling(internal):
    port, seen = internal
    before = len(seen)
    for host in ("127.0.0.1", "2130706433", "0x7f.1", "127.1", "[::ffff:127.0.0.1]", "localhost"):
        with pytest.raises(Unextractable) as refused:
            fetch(f"http://{host}:{port}/secret", outbound=Outbound())
        assert str(refused.value) == UNREACHABLE
    assert len(seen) == before  # nothing was sent


def test_a_closed_port_and_a_refused_address_read_the_same(internal):
    port, _ = internal
    with pytest.raises(Unextractable) as closed:  # allowed, but nothing listens there
        fetch("http://127.0.0.1:9/", outbound=Outbound(parse_allowed("127.0.0.1:9")))
    with pytest.raises(Unextractable) as refused:
        fetch(f"http://127.0.0.1:{port}/secret", outbound=Outbound())
    assert str(closed.value) == str(refused.value) == UNREACHABLE


def test_every_hop_is_checked_and_userinfo_never_sent(internal):
    port, seen = internal
    at_port = Outbound(parse_allowed(f"localhost:{port}"))
    with pytest.raises(Unextractable, match="no public web server"):  # the hop to 127.0.0.1
        fetch(f"http://localhost:{port}/to-secret", outbound=at_port)
    got = fetch(f"http://alice:pw@localhost:{port}/secret", outbound=at_port)
    assert got.data == b"internal secret 7731" and got.url == f"http://localhost:{port}/secret"
    assert "Authorization" not in seen[-1]["headers"]
    assert seen[-1]["headers"]["Host"] == f"localhost:{port}"
    cli = fetch(f"http://alice:pw@127.0.0.1:{port}/to-secret")  # the CLI: its user's fetch
    assert cli.data == b"internal secret 7731" and "alice" not in cli.url
    assert seen[-2]["headers"]["Authorization"].startswith("Basic ")


def test_the_connection_goes_to_the_address_checked(internal, monkeypatch):
    """A name is resolved once and the connection pinned to that answer: a second answer
    (DNS rebinding) is never asked for. Here the name exists in no DNS at all."""
    port, seen = internal
    monkeypatch.setattr(
        outbound, "resolve", lambda host, p, timeout_s: [ipaddress.ip_address("127.0.0.1")]
    )
    pinned = Outbound(parse_allowed("127.0.0.0/8"))
    got = fetch(f"http://rebind.invalid:{port}/secret", outbound=pinned)
    assert got.data == b"internal secret 7731"
    assert seen[-1]["headers"]["Host"] == f"rebind.invalid:{port}"
