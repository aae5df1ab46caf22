"""Run one question through the graph, node by node, and collect what callers report."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from crag.threads import thread_config, thread_graph
from crag_core.clients import usage
from crag_core.schema.context import Context
from crag_core.schema.state import scope_of, tool_of


@dataclass
class Step:
    """One node that ran: its name, the keys it returned, how long it took, what it did."""

    node: str
    update: dict[str, Any]
    seconds: float
    summary: str = ""
    """The node's own one-line account of its outcome (its custom stream event)."""


@dataclass
class RunResult:
    """The outcome of one question."""

    question: str
    thread_id: str | None = None
    state: dict[str, Any] = field(default_factory=dict)
    """The turn's state as the run ended (``RAGState``)."""
    pass_state: dict[str, Any] = field(default_factory=dict)
    """The question's pass as it ended (``PassState``: its documents, scores, attempts); empty
    when the turn ran none (small talk, a history answer, a question in parts)."""
    steps: list[Step] = field(default_factory=list)
    seconds: float = 0.0
    first_token_s: float | None = None
    """Seconds to the answer's first streamed token (None: not streamed, or no token)."""

    @property
    def path(self) -> list[str]:
        """Node names in the order they ran."""
        return [s.node for s in self.steps]

    def to_json(self) -> dict[str, Any]:
        """The ``crag ask --json`` object."""
        return {
            "question": self.question,
            "standalone_question": self.state.get("standalone_question", self.question),
            "thread_id": self.thread_id,
            "route": self.state.get("route", "single"),
            "answer": self.state.get("answer", ""),
            "confidence": self.state.get("confidence"),
            "sources": self.state.get("sources", []),
            "parts": sorted(self.state.get("parts") or [], key=lambda p: p["index"]),
            "path": self.path,
            "tool": tool_of(self.state),
            "plan": self.state.get("plan"),
            "where": scope_of(self.state),
            "retries": self.state.get("retry_count", 0),
            "web_search_used": bool(self.state.get("web_search_used")),
            "cache_hit": bool(self.pass_state.get("cache_hit")),
            "warnings": self.state.get("warnings", []),
            "prompt_versions": self.state.get("prompt_versions", {}),
            "seconds": round(self.seconds, 2),
            "first_token_s": self.first_token_s,
            "cost": usage.totals(self.state.get("cost") or [])
            | {"ledger": self.state.get("cost") or []},
        }


def run_config(ctx: Context, thread_id: str | None = None) -> dict[str, Any]:
    """The run's config: trace name, tags and metadata, recursion limit, and thread if any."""
    from graph.graph import step_limit

    metadata = ctx.trace_metadata()
    tags = ["crag", f"model:{metadata['provider']}:{metadata['model']}"]
    config: dict[str, Any] = {
        "run_name": "crag",
        "tags": tags,
        "metadata": metadata,
        "recursion_limit": step_limit(
            ctx.max_retries, ctx.max_citation_corrections, ctx.max_tool_calls
        ),
    }
    if thread_id is not None:
        config["configurable"] = thread_config(thread_id)["configurable"]
        metadata["thread_id"] = thread_id
    return config


def run_question(
    question: str,
    ctx: Context,
    on_step: Callable[[Step], None] | None = None,
    graph: Any = None,
    thread_id: str | None = None,
    callbacks: list[Any] | None = None,
    on_token: Callable[[str], None] | None = None,
) -> RunResult:
    """Stream ``question`` through the graph; call ``on_step`` as each node finishes.

    With ``thread_id`` (and no ``graph``), the run is a turn of that thread, kept by the
    configured checkpointer (``crag.threads``: SQLite or PostgreSQL), so a follow-up can
    refer to earlier turns. ``on_token`` receives the answer's text as the model writes it (a
    draft: the checks may still reject it, and its citation markers are resolved afterwards).
    """
    if graph is None and thread_id is not None:
        with thread_graph() as threaded:
            return run_question(question, ctx, on_step, threaded, thread_id, callbacks, on_token)
    if graph is None:
        from graph.graph import graph as default_graph

        graph = default_graph
    config = run_config(ctx, thread_id)
    if callbacks:
        config["callbacks"] = callbacks
    result = RunResult(question=question, thread_id=thread_id)
    started = time.perf_counter()
    if on_token is not None:
        on_token = _first_timed(on_token, result, started)
    stream = graph.stream(
        {"question": question},
        config=config,
        context=ctx,
        stream_mode=["custom", "updates", "values", *(["messages"] if on_token else [])],
        subgraphs=True,
    )
    for step in _steps(stream, result, on_token):
        result.steps.append(step)
        if on_step:
            on_step(step)
    result.seconds = time.perf_counter() - started
    return result


QUESTION_PASS = "answer_question"
"""The turn's node that runs a single question's pass (``graph.graph.build_pass_graph``)."""


def _in_question_pass(namespace: tuple[str, ...]) -> bool:
    """Whether a subgraph's event comes from the question's pass (not from a part's)."""
    return namespace[0].split(":", 1)[0] == QUESTION_PASS


def _first_timed(
    on_token: Callable[[str], None], result: RunResult, started: float
) -> Callable[[str], None]:
    """``on_token`` that also records when the first token came (``first_token_s``)."""

    def timed(text: str) -> None:
        if result.first_token_s is None:
            result.first_token_s = round(time.perf_counter() - started, 2)
        on_token(text)

    return timed


def _steps(
    stream: Iterable[tuple[tuple[str, ...], str, Any]],
    result: RunResult,
    on_token: Callable[[str], None] | None = None,
) -> Iterator[Step]:
    """The steps of a ``["custom", "updates", "values"]`` stream; the state goes to ``result``.

    A node's custom event (its one-line summary) arrives before its update; the values event
    after each step is the whole state with the reducers applied. With ``"messages"`` too,
    the generator's tokens go to ``on_token``. The stream includes the subgraphs: the
    question's pass (``answer_question``) reports its nodes as the turn's own, in order, and
    its last values are ``result.pass_state`` (its update of the turn, the keys the two share,
    is not a step of its own); a part's pass reports its nodes as ``part N/<node>`` (N: the
    part's place in the question; parallel parts interleave). Generator tokens are kept of the
    question's pass only, not of its parts. A graph run inside a node (the table graph of
    ``query_table``) is part of that node's step.
    """
    summaries: dict[tuple[tuple[str, ...], str], str] = {}
    parts: dict[str, int] = {}
    last = time.perf_counter()
    for namespace, mode, chunk in stream:
        if len(namespace) > 1 and mode != "messages":
            continue  # a graph a node runs (the table graph inside query_table): its node's step
        in_part = bool(namespace) and not _in_question_pass(namespace)
        if mode == "messages":  # the generator's tokens, and the messages nodes return
            message, meta = chunk
            if on_token and not in_part and meta.get("langgraph_node") == "generate":
                if message.text:
                    on_token(message.text)
        elif mode == "custom":
            summaries[(namespace, chunk["node"])] = chunk["summary"]
            if in_part and "part" in chunk:  # a part's node: which part it is
                parts.setdefault(namespace[0], chunk["part"] + 1)
        elif mode == "values":
            if not namespace:
                result.state = dict(chunk)
            elif not in_part:
                result.pass_state = dict(chunk)
        else:
            prefix = ""
            if in_part:
                prefix = f"part {parts.setdefault(namespace[0], len(parts) + 1)}/"
            for node, update in chunk.items():
                if not namespace and node == QUESTION_PASS:
                    continue  # its nodes were the steps; this is what it gave the turn
                now = time.perf_counter()
                summary = summaries.pop((namespace, node), "")
                yield Step(prefix + node, dict(update or {}), now - last, summary)
                last = now
