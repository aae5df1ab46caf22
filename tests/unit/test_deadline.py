"""The question's deadline as the chat model's HTTP client keeps it (``runtime.deadline``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from crag_core.runtime import deadline
from crag_core.runtime.deadline import PastDeadline, http_clients, until


def client(handler: Any) -> httpx.Client:
    """The deadline's HTTP client, its requests answered by ``handler`` (no socket)."""
    made: httpx.Client = http_clients(httpx.MockTransport(handler))["http_client"]
    return made


def recording(seen: list[httpx.Request]) -> Any:
    """A handler that keeps each request it is sent and answers 200."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    return handle


def test_without_a_deadline_requests_keep_their_own_timeouts():
    seen: list[httpx.Request] = []
    with client(recording(seen)) as c:
        c.get("http://model.test/", timeout=30.0)
    assert seen[0].extensions["timeout"] == dict.fromkeys(
        ["connect", "read", "write", "pool"], 30.0
    )
    assert deadline.seconds_left() is None and not deadline.passed()


def test_a_request_gets_at_most_the_seconds_left():
    seen: list[httpx.Request] = []
    with until(5), client(recording(seen)) as c:
        c.get("http://model.test/", timeout=30.0)
    assert all(4 < v <= 5 for v in seen[0].extensions["timeout"].values())


def test_a_request_past_the_deadline_is_not_sent():
    sent: list[httpx.Request] = []
    with until(-1), client(recording(sent)) as c:
        with pytest.raises(PastDeadline):
            c.get("http://model.test/")
        assert deadline.passed()
    assert sent == []


def test_a_replys_body_stops_at_the_deadline():
    def trickle() -> Iterator[bytes]:
        for _ in range(50):
            time.sleep(0.1)
            yield b"data: token\n\n"

    started = time.monotonic()
    with until(0.5), client(lambda r: httpx.Response(200, content=trickle())) as c:
        with pytest.raises(PastDeadline), c.stream("POST", "http://model.test/") as reply:
            for _ in reply.iter_bytes():
                pass
    assert time.monotonic() - started < 1.5  # not the five seconds the body would take


def test_an_inner_block_keeps_the_earlier_deadline_and_its_misses_are_the_outers():
    with until(10) as outer:
        with until(60) as inner:
            left = deadline.seconds_left()
            deadline.missed("judge_sql")
        with until(None):
            assert deadline.seconds_left() is not None  # no deadline inside still keeps 10 s
    assert left is not None and left <= 10
    assert inner.missed == ["judge_sql"] and outer.missed == ["judge_sql"]
    assert deadline.seconds_left() is None
