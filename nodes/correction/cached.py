"""The answer cache as the nodes use it: where a stored answer is valid, and storing one.

``check_cache`` looks answers up under ``scope``; ``choose_answer`` stores the one a pass gave
when it passed its checks (``remember``). Both read and write through ``services.cache``.
"""

from __future__ import annotations

from crag_core.clients.services import Services
from crag_core.schema.context import Context
from crag_core.schema.state import PassState, Source
from nodes.shared.common import question_of


def scope(ctx: Context, services: Services) -> str:
    """Where stored answers are valid: this collection, at its version, with these settings."""
    version = services.collection_version() if services.collection_version else 0
    return f"{ctx.collection}:{version}:{ctx.answer_key()}"


def remember(
    state: PassState,
    ctx: Context,
    services: Services,
    answer: str,
    sources: list[Source],
    given: float | None,
) -> None:
    """Store an answer that passed its checks, for the same question asked again."""
    if not ctx.answer_cache or services.cache is None or services.embeddings is None:
        return
    question = question_of(state)
    vector = services.embeddings.embed_query(question)
    stored = [dict(s) for s in sources]
    services.cache.store(scope(ctx, services), question, vector, answer, stored, given)
