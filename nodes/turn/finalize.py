"""finalize: the turn as the caller gets it, whichever route answered it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.schema.context import Context, context_of
from crag_core.schema.state import RAGState, Turn, Update
from crag_core.text.answer_text import NO_ANSWER
from nodes.shared.answers import answer_summary
from nodes.shared.common import question_of, reports
from nodes.shared.confidence import gate, held_back
from nodes.turn.chat import turn_messages


def _summary(update: Mapping[str, Any]) -> str:
    return (
        "a reply, not an answer" if update.get("route") == "small_talk" else answer_summary(update)
    )


@reports(_summary)
def finalize(state: RAGState, runtime: Runtime[Context]) -> Update:
    """Format the turn: the output keys, the AI message and the turn kept in ``history``.

    The answer, its sources and confidence are the ones the route's own last node wrote
    (``respond_small_talk``, ``answer_from_history``, ``check_cache``, ``query_catalog``,
    ``read_document``, ``query_table``, ``combine_parts`` or ``choose_answer``), through the
    one gate every answer passes (``nodes.shared.confidence.gate``): an answer under
    ``min_confidence`` is not given, whichever route wrote it (a cached answer, a catalog's,
    combined parts'), and the one warning says so. The turn is appended to ``history``, which
    a thread's next turn resolves follow-ups against (its reducer keeps the last
    ``MAX_HISTORY_TURNS``).
    """
    answer = state.get("answer", "")
    sources = list(state.get("sources") or [])
    given = state.get("confidence")
    warnings = list(state.get("warnings") or [])
    min_confidence = context_of(runtime).min_confidence
    if withheld := gate(answer, given, min_confidence):  # a route's answer its pass did not gate
        answer, sources, given = NO_ANSWER, [], None
        warnings.append(held_back(withheld, min_confidence))
    turn = Turn(
        question=state["question"],
        standalone_question=question_of(state),
        answer=answer,
        sources=sources,
        confidence=given,
    )
    return {
        "history": [turn],
        "messages": turn_messages(state, answer, sources, given),
        "standalone_question": question_of(state),
        "route": state.get("route") or "single",
        "answer": answer,
        "sources": sources,
        "confidence": given,
        # The turn's warnings again (the reducer keeps one of each), so the update that ends the
        # turn carries all of them, and the key is in the output even when nothing warned.
        "warnings": warnings,
        "retry_count": state.get("retry_count", 0),
        "web_search_used": bool(state.get("web_search_used")),
        "prompt_versions": {},  # nothing new: present in the output even if no prompt ran
    }
