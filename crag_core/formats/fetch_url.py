"""A web page or file as a source: fetched once, within bounds, or refused with the reason.

``fetch(url)`` gets the bytes with a time limit for the whole download (not only per read),
a size cap (the declared length is checked before reading, the received bytes while reading),
a bounded number of redirects and a content-type check: only the types crag can read are
taken (``CONTENT_TYPES``); a server that says ``application/octet-stream`` or nothing is
judged by the URL's suffix. Anything else raises ``Unextractable``, as an unreadable file does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import PurePosixPath
from urllib.parse import urlsplit

import httpx

from crag_core.formats.extract import FILE_TYPES, MAX_FILE_BYTES, Unextractable

CONTENT_TYPES = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "application/pdf": "pdf",
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


def is_url(source: str) -> bool:
    """Whether ``source`` names a web address rather than a path."""
    return source.lower().startswith(("http://", "https://"))


def fetch(
    url: str,
    timeout_s: float = URL_TIMEOUT_S,
    max_bytes: int = MAX_FILE_BYTES,
    max_redirects: int = MAX_REDIRECTS,
) -> Fetched:
    """Download ``url`` within the bounds; ``Unextractable`` says why it cannot be used."""
    if not urlsplit(url).hostname:
        raise Unextractable("not a web address (no host)")
    deadline = time.monotonic() + timeout_s
    try:
        with (
            httpx.Client(
                follow_redirects=True, max_redirects=max_redirects, timeout=timeout_s
            ) as client,
            client.stream("GET", url, headers={"Accept": ", ".join(CONTENT_TYPES)}) as reply,
        ):
            if reply.status_code >= 400:
                raise Unextractable(
                    f"the server answered {reply.status_code} {reply.reason_phrase}"
                )
            kind = _kind(reply.headers.get("content-type", ""), str(reply.url))
            declared = reply.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise Unextractable(f"larger than {_mib(max_bytes)} ({_mib(int(declared))})")
            received = bytearray()
            for piece in reply.iter_bytes():
                received += piece
                if len(received) > max_bytes:
                    raise Unextractable(f"larger than {_mib(max_bytes)}")
                if time.monotonic() > deadline:
                    raise Unextractable(f"took longer than {timeout_s:g} s to download")
            return Fetched(str(reply.url), bytes(received), kind, _modified(reply.headers))
    except httpx.TooManyRedirects as exc:
        raise Unextractable(f"more than {max_redirects} redirects") from exc
    except httpx.TimeoutException as exc:
        raise Unextractable(f"no answer within {timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        raise Unextractable(f"cannot fetch: {exc}") from exc


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
