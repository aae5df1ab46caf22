"""retrieve: search the knowledge base with the question and the rewritten query."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from crag.documents import reciprocal_rank_fusion
from crag.services import services_for
from graph.context import Context
from graph.state import RAGState
from nodes.common import context_of, question_of


def retrieve(state: RAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Top ``top_k`` chunks for the question and the rewritten query, fused by reciprocal rank.

    Searching with both means a rewrite that drifts from the question cannot lose the
    documents the question itself finds. Chunks less similar than ``min_similarity`` are
    dropped here: grading them would cost an LLM call each, and the small grader was seen
    calling such off-topic chunks relevant.
    """
    ctx = context_of(runtime)
    retriever = services_for(ctx).retriever
    candidates = (question_of(state), state.get("rewritten_query"))
    queries = list(dict.fromkeys(q for q in candidates if q))
    rankings = [retriever.search(q, ctx.top_k) for q in queries]
    fused = reciprocal_rank_fusion(rankings)
    kept = [d for d in fused if d.metadata.get("score", 1.0) >= ctx.min_similarity]
    return {"documents": kept[: ctx.top_k]}
