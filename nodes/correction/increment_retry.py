"""increment_retry: record the failed pass and count the retry."""

from __future__ import annotations

from langgraph.runtime import Runtime

from crag_core.schema.context import Context
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.documents import doc_id
from nodes.shared.answers import current_attempt
from nodes.shared.common import reports


@reports(lambda u: f"retry {u.get('retry_count')}")
def increment_retry(state: PassState, runtime: Runtime[Context]) -> PassUpdate:
    """Keep the failed pass (to fall back on its answer) and bump ``retry_count``.

    What makes the retry different from the pass that failed: the pass's feedback stays in
    the state for the next rewrite and generation, and the chunks the grader rejected are
    recorded so the next retrieval searches past them.
    """
    rejected = [
        doc_id(d) for d in state.get("documents") or [] if d.metadata.get("relevant") == "no"
    ]
    return {
        "retry_count": state.get("retry_count", 0) + 1,
        "attempts": [current_attempt(state)],
        "rejected_chunks": rejected,
    }
