"""increment_retry: record the failed pass and count the retry."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.context import Context
from graph.state import RAGState
from nodes.common import current_attempt


def increment_retry(state: RAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Keep the failed pass (to fall back on its answer) and bump ``retry_count``.

    The pass's feedback stays in the state: the next rewrite and generation see it, which is
    what makes the retry different from the pass that failed.
    """
    attempts = [*(state.get("attempts") or []), current_attempt(state)]
    return {
        "retry_count": state.get("retry_count", 0) + 1,
        "attempts": attempts,
        "citation_corrections": 0,
    }
