"""combine_parts: one answer for a question asked in parts, from every part's answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.schema.context import Context
from crag_core.schema.state import RAGState, Update
from nodes.answers import is_no_answer
from nodes.common import reports
from nodes.parts import combined, combined_confidence


def _summary(update: Mapping[str, Any]) -> str:
    given = update.get("confidence")
    if given is not None:
        return f"confidence {given:.2f}"
    return "no answer" if is_no_answer(str(update.get("answer", ""))) else "answer given"


@reports(_summary)
def combine_parts(state: RAGState, runtime: Runtime[Context]) -> Update:
    """Join the parts' answers (``nodes.parts.combined``); each part's pass checked its own.

    The confidence is ``nodes.parts.combined_confidence``; the web and the retries count if
    any part used them.
    """
    parts = state.get("parts") or []
    answer, sources = combined(state)
    return {
        "answer": answer,
        "sources": sources,
        "confidence": combined_confidence(state, answer),
        "web_search_used": any(p["web_search_used"] for p in parts),
        "retry_count": max((p["retry_count"] for p in parts), default=0),
    }
