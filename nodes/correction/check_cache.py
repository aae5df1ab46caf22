"""check_cache: reuse the answer to an equal or nearly equal question asked before."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate, Source
from nodes.correction.cached import scope
from nodes.shared.common import question_of, reports


def describe(update: Mapping[str, Any]) -> str:
    """Hit (with the similarity) or miss."""
    if update.get("cache_hit"):
        return f"cache hit (similarity {update['cache_similarity']:.3f})"
    return "no stored answer" if "cache_similarity" in update else "cache off"


@reports(describe)
def check_cache(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Look the standalone question up in the answer cache; a hit is this turn's answer.

    Only answers that passed their checks are stored (by ``choose_answer``), and only for the
    same collection version, settings and prompt versions, so a hit is what a full run would
    have answered. Off when ``answer_cache`` is false or there is no cache.
    """
    ctx = context_of(runtime)
    if not ctx.answer_cache or services.cache is None or services.embeddings is None:
        return {"cache_hit": False}
    question = question_of(state)
    vector = services.embeddings.embed_query(question)
    hit = services.cache.lookup(scope(ctx, services), question, vector, ctx.cache_threshold)
    if hit is None:
        return {"cache_hit": False, "cache_similarity": 0.0}
    return {
        "cache_hit": True,
        "cache_similarity": hit.similarity,
        "answer": hit.answer,
        "sources": cast(list[Source], hit.sources),
        "confidence": hit.confidence,
    }
