"""What every node needs: the question and documents of the pass, and ``@reports``."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from crag_core.schema.context import Context


def question_of(state: Mapping[str, Any]) -> str:
    """The question this turn answers: the standalone rewrite of a follow-up, else as asked."""
    return str(state.get("standalone_question") or state["question"])


def seconds_spent(state: Mapping[str, Any]) -> float:
    """Seconds since the turn began (``asked_at``); 0 for a pass run alone, which has none."""
    asked_at = state.get("asked_at")
    return max(time.time() - asked_at, 0.0) if asked_at else 0.0


def answer_deadline(state: Mapping[str, Any], ctx: Context) -> float | None:
    """When the question's ``answer_seconds`` end (``time.time()`` seconds).

    None for a pass run alone.
    """
    asked_at = state.get("asked_at")
    return asked_at + ctx.answer_seconds if asked_at else None


def seconds_left(state: Mapping[str, Any], ctx: Context) -> float | None:
    """Seconds until ``answer_deadline`` (negative past it); None for a pass run alone.

    No model call outlasts them (``graph.factory.ledgered``): a reply they cut is lost.
    """
    ends = answer_deadline(state, ctx)
    return None if ends is None else ends - time.time()


def deadline(state: Mapping[str, Any], ctx: Context) -> float | None:
    """When the question's time for another attempt ends (``time.time()`` seconds).

    ``answer_deadline``; inside the agent loop, also ``loop_seconds`` from its first step
    (``loop_started``), whichever comes first. None for a pass run alone.
    """
    loop_started = state.get("loop_started")
    ends = [
        end
        for end in (
            answer_deadline(state, ctx),
            loop_started + ctx.loop_seconds if loop_started else None,
        )
        if end is not None
    ]
    return min(ends) if ends else None


def past_deadline(state: Mapping[str, Any], ctx: Context) -> bool:
    """Whether the question's ``answer_seconds`` have run out.

    A citation correction (one generation) is not begun past them.
    """
    return seconds_spent(state) >= ctx.answer_seconds


def no_time_to_retry(state: Mapping[str, Any], ctx: Context) -> bool:
    """Whether one more retrieval pass would end past ``answer_seconds``.

    At the pace of the passes so far (``retry_count`` + 1 of them): a retry is not begun that
    would end late.
    """
    return no_time_for_another(state, ctx, int(state.get("retry_count", 0)) + 1)


def no_time_for_another(state: Mapping[str, Any], ctx: Context, passes: int) -> bool:
    """Whether one more pass would end past ``answer_seconds`` at the mean pace of ``passes``.

    False before any pass (no pace yet).
    """
    spent = seconds_spent(state)
    return passes > 0 and spent + spent / passes >= ctx.answer_seconds


def answer_documents(state: Mapping[str, Any]) -> list[Document]:
    """The documents an answer is generated from: the evidence the evaluator accepted.

    Without an evaluator (the naive pipeline, which never grades) every retrieved document.
    """
    graded = state.get("relevant_documents")
    if graded is not None:
        return list(graded)
    return list(state.get("documents") or [])


NodeT = TypeVar("NodeT", bound=Callable[..., Mapping[str, Any]])


def reports(describe: Callable[[Mapping[str, Any]], str]) -> Callable[[NodeT], NodeT]:
    """Make a node tell whoever streams the run what it did, in one line.

    After the node returns, ``describe(update)`` is written to the run's custom stream
    (``stream_mode="custom"``) as ``{"node": name, "summary": line}`` (plus ``"part"``, the
    part's index, in a part's pass), so the CLI, the API server and any UI print the same line
    without knowing the node's keys.
    """

    def decorate(node: NodeT) -> NodeT:
        def run(
            state: Mapping[str, Any], runtime: Runtime[Context], *args: Any, **kwargs: Any
        ) -> Any:
            update = node(state, runtime, *args, **kwargs)
            writer = getattr(runtime, "stream_writer", None)
            if writer is not None:
                event: dict[str, Any] = {"node": node.__name__, "summary": describe(update)}
                if "part_index" in state:  # in a part's pass: which part of the question
                    event["part"] = state["part_index"]
                writer(event)
            return update

        return cast(NodeT, functools.update_wrapper(run, node))

    return decorate
