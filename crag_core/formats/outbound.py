"""Where a fetch made for someone else may connect: public addresses, and what the operator allows.

The API server fetches web pages for its callers (``POST …/sources``, the indexer's ``urls``, a
later sync). Those callers are not the server's users, so a fetch made for them must not reach
what only the server can reach: its own loopback services, the private network around it, a
cloud metadata address. ``Outbound`` decides that for one host:

- the host is resolved here, once per hop, and **every** address it resolves to must be public
  (not loopback, private, link-local, unique-local, shared, multicast, reserved or unspecified,
  nor an IPv4 address inside an IPv6 one); whatever spelling the URL used (``2130706433``,
  ``0x7f.1``, ``[::ffff:127.0.0.1]``, ``localhost.``), the check is on the address it names;
- the connection then goes to the address that was checked (the URL's host stays in ``Host``
  and in TLS's SNI and certificate check), so a second, different DNS answer cannot slip in
  between the check and the connection (DNS rebinding);
- the operator may let some internal hosts or networks through (``CRAG_API_FETCH_ALLOW``:
  ``wiki.internal``, ``10.1.2.0/24``, ``127.0.0.1:8080``).

A refusal says nothing about what is there: the same words as a connection that failed.
The CLI fetches without an ``Outbound``: it is the operator, and may fetch what its user can.
"""

from __future__ import annotations

import ipaddress
import socket
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

UNREACHABLE = "could not be fetched: no public web server answered at that address"
"""The one text for a refused address and a failed connection alike (no port or host oracle)."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_resolver = ThreadPoolExecutor(max_workers=4, thread_name_prefix="crag-resolve")


class Refused(Exception):
    """The host may not be fetched for this caller (the message is ``UNREACHABLE``)."""

    def __init__(self) -> None:
        super().__init__(UNREACHABLE)


def is_public(address: IPAddress) -> bool:
    """Whether ``address`` is a public unicast address, checked through any IPv4 it embeds."""
    if isinstance(address, ipaddress.IPv6Address):
        if address in _NAT64:  # a gateway's way to an IPv4 address: that address decides
            return is_public(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is not None and not is_public(embedded):
            return False
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_unspecified
    )


@dataclass(frozen=True)
class Allowed:
    """An internal destination the operator allows: a host name, or a network; maybe a port."""

    host: str = ""
    network: Network | None = None
    port: int | None = None

    def admits(self, host: str, address: IPAddress, port: int) -> bool:
        """Whether a connection to ``host`` (resolved to ``address``) on ``port`` is allowed."""
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            return address in self.network
        return host.rstrip(".").lower() == self.host


def parse_allowed(text: str) -> tuple[Allowed, ...]:
    """``CRAG_API_FETCH_ALLOW``: comma-separated ``host``, ``host:port``, ``CIDR`` or ``IP:port``.

    A malformed item raises ``ValueError`` naming it.
    """
    allowed = []
    for raw in (item.strip() for item in text.split(",")):
        if not raw:
            continue
        host, port = raw, None
        if raw.startswith("["):  # [v6]:port
            inside, _, rest = raw[1:].partition("]")
            host, port = inside, _port(rest.removeprefix(":"), raw) if rest else None
        elif raw.count(":") == 1:
            host, _, given = raw.partition(":")
            port = _port(given, raw)
        try:
            allowed.append(Allowed(network=ipaddress.ip_network(host, strict=False), port=port))
        except ValueError:
            name = host.rstrip(".").lower()
            if not name or any(c in name for c in "/@ "):
                raise ValueError(f"{raw!r} is not a host, host:port or network") from None
            allowed.append(Allowed(host=name, port=port))
    return tuple(allowed)


def _port(text: str, raw: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{raw!r} has no valid port")
    return int(text)


@dataclass(frozen=True)
class Outbound:
    """Where fetches for an API caller may connect: public addresses and ``allowed``."""

    allowed: tuple[Allowed, ...] = field(default_factory=tuple)

    def address(self, host: str, port: int, timeout_s: float) -> str:
        """The address to connect to for ``host``: checked, else ``Refused``.

        Every address ``host`` resolves to must be public or allowed; the first is returned.
        """
        found = resolve(host, port, timeout_s)
        if not found:
            raise Refused()
        for address in found:
            if not (is_public(address) or any(a.admits(host, address, port) for a in self.allowed)):
                raise Refused()
        return str(found[0])


def resolve(host: str, port: int, timeout_s: float) -> list[IPAddress]:
    """The addresses ``host`` resolves to (``[]``: none, or not within ``timeout_s``).

    An IP literal in any form the system resolver reads (``127.1``, ``0x7f.0.0.1``) comes back
    as the address it means.
    """
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return [literal]
    future = _resolver.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        infos = future.result(timeout=timeout_s)
    except (OSError, UnicodeError, FutureTimeout):
        return []
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        try:
            address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        except ValueError:
            continue
        if address not in addresses:
            addresses.append(address)
    return addresses
