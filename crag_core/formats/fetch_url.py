"""A web page or file as a source: fetched once, within bounds, or refused with the reason.

``fetch(url)`` gets the bytes within one deadline for the whole page: every hop's connection
and headers and the body share it (each hop's timeouts are what is left of it, and a watchdog
shuts the connection at the deadline, so a server that trickles its bytes cannot stretch it);
a caller fetching several pages passes one deadline for all of them. A size cap (the declared
length is checked before reading, the received bytes while reading),
a bounded number of redirects, each followed here (and, for an API caller, each host checked
by ``crag_core.formats.outbound``), and a content-type check: only the types crag can read are
taken (``CONTENT_TYPES``); a server that says ``application/octet-stream`` or nothing is
judged by the URL's suffix. Anything else raises ``Unextractable``, as an unreadable file does.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import PurePosixPath
from urllib.parse import urljoin, urlsplit

import httpx

from crag_core.formats.extract import FILE_TYPES, MAX_FILE_BYTES, Unextractable
from crag_core.formats.outbound import UNREACHABLE, Outbound, Refused
from crag_core.text.sources import is_url, without_userinfo

CONTENT_TYPES = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "application/pdf": "pdf",
    **dict.fromkeys(("image/png", "image/jpeg", "image/tiff", "image/webp", "image/bmp"), "image"),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/csv": "csv",
    "application/epub+zip": "epub",
    "application/x-ipynb+json": "notebook",
    "text/x-rst": "rst",
}
"""Media types read from the web, and the file type each is read as."""

URL_TIMEOUT_S = 30.0
MAX_REDIRECTS = 5


@dataclass(frozen=True)
class Fetched:
    """What a URL gave: its final address, bytes, type and last modification (epoch s)."""

    url: str
    data: bytes
    kind: str
    modified: int


def fetch(
    url: str,
    timeout_s: float = URL_TIMEOUT_S,
    max_bytes: int = MAX_FILE_BYTES,
    max_redirects: int = MAX_REDIRECTS,
    outbound: Outbound | None = None,
    deadline: float | None = None,
) -> Fetched:
    """Download ``url`` within the bounds; ``Unextractable`` says why it cannot be used.

    The page's time is ``timeout_s`` for all its hops and its body, and never past
    ``deadline`` (``time.monotonic()``; the deadline of a request's pages together).
    Redirects are followed here, hop by hop, each to an http(s) address. With ``outbound``
    (a fetch made for an API caller) every hop's host is checked and connected to at the
    address checked, userinfo is dropped, proxies in the environment are not used, and every
    failure to connect reads ``UNREACHABLE``. Without it (the CLI), userinfo is sent as basic
    auth and the environment's proxies apply. The returned ``url`` never carries userinfo.
    """
    ends = min(time.monotonic() + timeout_s, deadline if deadline is not None else float("inf"))
    budget = max(ends - time.monotonic(), 0.0)
    limit = f"{timeout_s:g}" if budget >= timeout_s - 0.01 else f"{budget:.1f}"
    late = f"no answer within {limit} s"
    slow = f"took longer than {limit} s to download"
    try:
        with httpx.Client(timeout=timeout_s, trust_env=outbound is None) as client:
            for _hop in range(max_redirects + 1):
                left = ends - time.monotonic()
                if left <= 0:
                    raise httpx.TimeoutException("deadline")
                request = _request(client, url, outbound, left)
                request.extensions["timeout"] = httpx.Timeout(left).as_dict()
                with closing(client.send(request, stream=True)) as reply, _watchdog(reply, ends):
                    if not reply.is_redirect:
                        return _read(reply, url, max_bytes, slow, ends)
                    url = _redirected(url, reply.headers.get("location", ""))
    except Refused as exc:
        raise Unextractable(UNREACHABLE) from exc
    except httpx.TimeoutException as exc:
        raise Unextractable(UNREACHABLE if outbound else late) from exc
    except httpx.HTTPError as exc:
        if time.monotonic() >= ends:  # the watchdog shut the connection
            raise Unextractable(UNREACHABLE if outbound else slow) from exc
        raise Unextractable(UNREACHABLE if outbound else f"cannot fetch: {exc}") from exc
    raise Unextractable(f"more than {max_redirects} redirects")


@contextmanager
def _watchdog(reply: httpx.Response, ends: float) -> Iterator[None]:
    """Shut ``reply``'s connection at ``ends``: a read blocked on it returns at once."""
    stream = reply.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None

    def shut() -> None:
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    timer = threading.Timer(max(ends - time.monotonic(), 0.0), shut)
    timer.daemon = True
    if sock is not None:
        timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _request(
    client: httpx.Client, url: str, outbound: Outbound | None, timeout_s: float
) -> httpx.Request:
    """The GET of one hop: with ``outbound``, to the checked address of the URL's host.

    An address that does not parse (``http://0177.0.0.1/``, ``http://[::1/``) is refused
    with the reason, as a page that cannot be used.
    """
    problem = url_problem(url)
    if problem:
        raise Unextractable(problem)
    target = httpx.URL(without_userinfo(url))
    headers = {"Accept": ", ".join(CONTENT_TYPES)}
    if outbound is None:
        return client.build_request("GET", url, headers=headers)
    port = target.port or (443 if target.scheme == "https" else 80)
    address = outbound.address(target.host, port, timeout_s)
    headers["Host"] = target.netloc.decode("ascii")
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    return client.build_request(
        "GET", target.copy_with(host=address), headers=headers, extensions=extensions
    )


def url_problem(url: str) -> str | None:
    """Why ``url`` is not a web address that can be fetched (it does not parse), or None."""
    try:
        parts = urlsplit(url)
        httpx.URL(without_userinfo(url))
        host = parts.hostname
    except (httpx.InvalidURL, ValueError) as exc:
        return f"not a valid web address ({str(exc)[:80]})"
    if not is_url(url) or not host:
        return "not a web address (no host)"
    return None


def _redirected(url: str, location: str) -> str:
    """Where a redirect from ``url`` leads: an http(s) address, else ``Unextractable``."""
    following = urljoin(url, location.strip())
    if not location.strip() or not is_url(following):
        raise Unextractable("redirected to something that is not a web page")
    return following


def _read(reply: httpx.Response, url: str, max_bytes: int, slow: str, ends: float) -> Fetched:
    """The reply's bytes, within the size cap and the deadline (``slow``: the refusal past it)."""
    if reply.status_code >= 400:
        raise Unextractable(f"the server answered {reply.status_code} {reply.reason_phrase}")
    kind = _kind(reply.headers.get("content-type", ""), url)
    declared = reply.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise Unextractable(f"larger than {_mib(max_bytes)} ({_mib(int(declared))})")
    received = bytearray()
    for piece in reply.iter_bytes():
        received += piece
        if len(received) > max_bytes:
            raise Unextractable(f"larger than {_mib(max_bytes)}")
        if time.monotonic() > ends:
            raise Unextractable(slow)
    if time.monotonic() > ends:  # the watchdog cut the body short: it is not the page
        raise Unextractable(slow)
    return Fetched(without_userinfo(url), bytes(received), kind, _modified(reply.headers))


def _kind(content_type: str, url: str) -> str:
    media = content_type.split(";")[0].strip().lower()
    if media in CONTENT_TYPES:
        return CONTENT_TYPES[media]
    by_suffix = FILE_TYPES.get(PurePosixPath(urlsplit(url).path).suffix.lower())
    if media in ("", "application/octet-stream", "binary/octet-stream") and by_suffix:
        return by_suffix
    raise Unextractable(f"unsupported content type {media or '(none)'!r}")


def _modified(headers: httpx.Headers) -> int:
    try:
        return int(parsedate_to_datetime(headers["last-modified"]).timestamp())
    except (KeyError, TypeError, ValueError):
        return int(time.time())


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MiB" if size >= 1024 * 1024 else f"{size} bytes"
