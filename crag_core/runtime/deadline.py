"""The question's deadline, kept by every model call made for it.

``until(seconds)`` holds a deadline that many seconds away for the code inside it;
``graph.factory.ledgered`` opens one for each node run, at the end of the question's
``answer_seconds`` (``nodes.shared.common.seconds_left``; the agent loop's
``loop_seconds`` only decide whether another round begins, so its answer is still asked for
after them). The chat model's HTTP client (``http_clients``) reads it for every request it
sends: a request gets at most the seconds left as its timeouts, a reply's body stops at the
deadline (a streamed answer too, however its tokens trickle), and a request past it fails
before it is sent, so the client's own retries of it fail at once as well. A call is never
longer than the deadline plus the client's backoff between retries (about a second and a half
for two). The one wait it does not cut is a first request's for the embedded model server this
process starts (``crag_core.clients.llm``): a start is waited for whatever the deadline.

``crag_core.clients.llm`` turns a call that failed past the deadline into the reply of a call
not made (no text, no tool call, a "no" verdict) and names its prompt here (``missed``), so the
node's run can say which step the time ran out in. Outside ``until`` there is no deadline:
only each request's own ``llm_timeout_s``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class Kept:
    """A block's deadline, and the prompts its time ran out on."""

    ends: float | None
    """The deadline (``time.monotonic()`` seconds); None: none."""
    missed: list[str] = field(default_factory=list)


_current: ContextVar[Kept | None] = ContextVar("crag_deadline", default=None)


@contextmanager
def until(seconds: float | None) -> Iterator[Kept]:
    """Keep a deadline ``seconds`` from now (None: none) for the model calls in the block.

    A block inside another's keeps the earlier deadline of the two, and what it missed is the
    outer block's too.
    """
    ends = None if seconds is None else time.monotonic() + seconds
    outer = _current.get()
    if outer is not None and outer.ends is not None:
        ends = outer.ends if ends is None else min(ends, outer.ends)
    kept = Kept(ends)
    token = _current.set(kept)
    try:
        yield kept
    finally:
        _current.reset(token)
        if outer is not None:
            outer.missed.extend(kept.missed)


def seconds_left() -> float | None:
    """Seconds until the current deadline (negative past it); None without one."""
    kept = _current.get()
    return None if kept is None or kept.ends is None else kept.ends - time.monotonic()


def passed() -> bool:
    """Whether the current deadline has passed (False without one)."""
    left = seconds_left()
    return left is not None and left <= 0


def missed(prompt: str) -> None:
    """Note that the model's reply to ``prompt`` was lost to the deadline."""
    kept = _current.get()
    if kept is not None:
        kept.missed.append(prompt)


class PastDeadline(httpx.TimeoutException):
    """A request not sent, or a reply's body not read further: the question's time is up."""


def _request(request: httpx.Request) -> None:
    """Shorten the request's timeouts to the seconds left; refuse it past the deadline."""
    left = seconds_left()
    if left is None:
        return
    if left <= 0:
        raise PastDeadline("the question's deadline has passed", request=request)
    timeouts = request.extensions.get("timeout") or {}
    request.extensions["timeout"] = {
        key: left if timeouts.get(key) is None else min(timeouts[key], left)
        for key in ("connect", "read", "write", "pool")
    }


class _Until(httpx.SyncByteStream):
    """A reply's body that stops at ``ends``."""

    def __init__(self, inner: Any, ends: float, request: httpx.Request) -> None:
        self._inner, self._ends, self._request = inner, ends, request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if time.monotonic() >= self._ends:
                raise PastDeadline("the question's deadline has passed", request=self._request)
            yield chunk

    def close(self) -> None:
        self._inner.close()


def _response(response: httpx.Response) -> None:
    """Make the reply's body stop at the deadline, when there is one."""
    kept = _current.get()
    if kept is not None and kept.ends is not None:
        response.stream = _Until(response.stream, kept.ends, response.request)


async def _arequest(request: httpx.Request) -> None:
    _request(request)


def http_clients(
    transport: httpx.BaseTransport | None = None,
    async_transport: httpx.AsyncBaseTransport | None = None,
) -> dict[str, Any]:
    """The chat model's HTTP clients (``ChatOpenAI``'s ``http_client``s), keeping the deadline.

    ``transport``: how requests are sent (default: httpx's own, with the environment's
    proxies). The asynchronous client shortens and refuses requests the same way; its replies'
    bodies are bounded by the request's read timeout.
    """
    return {
        "http_client": httpx.Client(
            transport=transport, event_hooks={"request": [_request], "response": [_response]}
        ),
        "http_async_client": httpx.AsyncClient(
            transport=async_transport, event_hooks={"request": [_arequest]}
        ),
    }
