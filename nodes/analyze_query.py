"""analyze_query: choose the turn's route before any retrieval."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from adapters.query_analysis import is_dependent, is_small_talk, split_parts
from nodes.common import question_of, reports
from schema.context import Context, context_of
from schema.state import RAGState, Update


def describe(update: Mapping[str, Any]) -> str:
    """The route, and the parts when there are several."""
    parts = update.get("subquestions") or []
    listed = "".join(f" | {p}" for p in parts)
    return f"route: {update.get('route')}{f' ({len(parts)} parts){listed}' if parts else ''}"


@reports(describe)
def analyze_query(state: RAGState, runtime: Runtime[Context]) -> Update:
    """Route the turn by rules, with no LLM call.

    ``small_talk`` when the whole message is a greeting, thanks, farewell or a question about
    the assistant (judged on the message as asked, so small talk in a thread costs no rewrite
    either). A question with several parts, at most ``max_subquestions``
    (``adapters.query_analysis.split_parts``), is ``multi_step`` when a later part asks about
    the first one's answer ("Who directed Titanic, and when was he born?"), else
    ``multi_part``. Anything else is ``single``: one retrieval pass.
    """
    if is_small_talk(state["question"]):
        return {"route": "small_talk"}
    parts = split_parts(question_of(state), context_of(runtime).max_subquestions)
    if len(parts) == 1:
        return {"route": "single"}
    return {"route": "multi_step" if is_dependent(parts) else "multi_part", "subquestions": parts}
