"""What a node's model calls cost, as the model server reports them.

Calls, prompt tokens (and of those, the prompt cache's), generated tokens and seconds.

``complete`` and ``yes_probability`` (``crag_core.clients.llm``) record each call into the
meter of the code that runs them; ``graph.factory.ledgered`` opens one meter per node run, so
every node's calls are counted without the node knowing (``metered``). Outside a meter
nothing is recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass
class Meter:
    """The calls of one node run so far."""

    calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0

    def add(self, usage: dict[str, int], seconds: float) -> None:
        """Count one finished call."""
        self.calls += 1
        self.prompt_tokens += usage["prompt_tokens"]
        self.cached_tokens += usage["cached_tokens"]
        self.completion_tokens += usage["completion_tokens"]
        self.llm_seconds += seconds


_current: ContextVar[Meter | None] = ContextVar("crag_meter", default=None)


@contextmanager
def metered() -> Iterator[Meter]:
    """Count the model calls made inside the block (this thread's, and what it awaits).

    A block inside another's (a step of the table graph inside the node that runs it) counts
    its calls in both: the outer meter misses none.
    """
    meter = Meter()
    outer = _current.get()
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)
        if outer is not None:
            outer.calls += meter.calls
            outer.prompt_tokens += meter.prompt_tokens
            outer.cached_tokens += meter.cached_tokens
            outer.completion_tokens += meter.completion_tokens
            outer.llm_seconds += meter.llm_seconds


def usage_of(reply: Any) -> dict[str, int]:
    """Prompt, cached prompt and generated tokens of a chat reply (0 for what it lacks).

    LangChain's ``usage_metadata`` first (``input_token_details.cache_read`` is the server's
    ``prompt_tokens_details.cached_tokens``), else the raw ``token_usage`` it was read from.
    """
    meta = getattr(reply, "usage_metadata", None) or {}
    if meta:
        details = meta.get("input_token_details") or {}
        return {
            "prompt_tokens": int(meta.get("input_tokens") or 0),
            "cached_tokens": int(details.get("cache_read") or 0),
            "completion_tokens": int(meta.get("output_tokens") or 0),
        }
    raw = (getattr(reply, "response_metadata", None) or {}).get("token_usage") or {}
    cached = (raw.get("prompt_tokens_details") or {}).get("cached_tokens")
    return {
        "prompt_tokens": int(raw.get("prompt_tokens") or 0),
        "cached_tokens": int(cached or 0),
        "completion_tokens": int(raw.get("completion_tokens") or 0),
    }


def record(reply: Any, seconds: float) -> None:
    """Count one call's ``reply`` in the current meter, if any."""
    meter = _current.get()
    if meter is not None:
        meter.add(usage_of(reply), seconds)


COUNTS = ("calls", "prompt_tokens", "cached_tokens", "completion_tokens")
"""The ledger's counts, summed over a turn's entries by ``totals``."""


def totals(entries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """A turn's ledger (its ``cost`` entries) in sums.

    Calls, tokens, uncached prompt tokens, model seconds, and the same per node (a part's
    nodes counted with the whole's).
    """
    whole: dict[str, Any] = dict.fromkeys(COUNTS, 0) | {"llm_seconds": 0.0}
    nodes: dict[str, dict[str, Any]] = {}
    for entry in entries:
        row = nodes.setdefault(entry["node"], dict.fromkeys(COUNTS, 0) | {"seconds": 0.0})
        for key in COUNTS:
            whole[key] += entry[key]
            row[key] += entry[key]
        whole["llm_seconds"] += entry["llm_seconds"]
        row["seconds"] += entry["seconds"]
    whole["uncached_tokens"] = whole["prompt_tokens"] - whole["cached_tokens"]
    whole["llm_seconds"] = round(whole["llm_seconds"], 3)
    for row in nodes.values():
        row["seconds"] = round(row["seconds"], 3)
    return whole | {"by_node": nodes}
