"""decompose: a question asked whole found nothing; ask it again in its look-ups."""

from __future__ import annotations

from langgraph.runtime import Runtime

from crag_core.schema.context import Context
from crag_core.schema.state import RAGState, Update
from nodes.common import reports


@reports(lambda u: f"asked whole, nothing found: asked in {len(u.get('subquestions') or [])} steps")
def decompose(state: RAGState, runtime: Runtime[Context]) -> Update:
    """Turn the single pass that found no answer into the question's chain of look-ups.

    A question that describes a thing instead of naming it ("Who coached the team that lost
    Super Bowl 50?") is first asked as it is: most such questions are one look-up (the
    description is in the sentence that holds the answer). Only when that pass ends without
    an answer are its steps (``analyze_query``'s ``subquestions``) asked in order
    (``multi_step``), each later one with the earlier answer in it.
    """
    return {"route": "multi_step", "subquestions": list(state.get("subquestions") or [])}
