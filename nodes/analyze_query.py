"""analyze_query: choose the turn's route before any retrieval."""

from __future__ import annotations

from langgraph.runtime import Runtime

from adapters.query_analysis import is_small_talk
from nodes.common import reports
from schema.context import Context
from schema.state import RAGState, Update


@reports(lambda u: f"route: {u.get('route')}")
def analyze_query(state: RAGState, runtime: Runtime[Context]) -> Update:
    """Route the turn by rules, with no LLM call.

    ``small_talk`` when the whole message is a greeting, thanks, farewell or a question about
    the assistant; otherwise ``single``: one retrieval pass. Judged on the message as asked,
    so small talk in a thread costs no rewrite either.
    """
    return {"route": "small_talk" if is_small_talk(state["question"]) else "single"}
