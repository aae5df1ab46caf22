"""answer_from_history: the ``history`` route's answer, the earlier turn's again."""

from __future__ import annotations

from langgraph.runtime import Runtime

from crag_core.schema.context import Context
from crag_core.schema.state import RAGState, Update
from nodes.shared.common import reports


@reports(lambda u: f"answered earlier: {str(u.get('answer', ''))[:60]!r}")
def answer_from_history(state: RAGState, runtime: Runtime[Context]) -> Update:
    """The earlier turn ``analyze_query`` found answers this follow-up: its answer and sources.

    Nothing is retrieved and no model is called.
    """
    turn = state.get("earlier_turn")
    if turn is None:  # the router sends only turns analyze_query found one for
        return {}
    return {
        "answer": turn["answer"],
        "sources": list(turn.get("sources") or []),
        "confidence": turn.get("confidence"),
    }
