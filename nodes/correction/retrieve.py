"""retrieve: search the knowledge base with the question and the rewritten query."""

from __future__ import annotations

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate, pass_reset, scope_of
from crag_core.text.documents import above_floor
from crag_core.text.filters import parse_where
from crag_core.text.read_around import read_around, within_budget
from crag_core.text.words import plural
from nodes.shared.common import question_of, reports


@reports(lambda u: plural(len(u.get("documents") or []), "document"))
def retrieve(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Top ``top_k`` chunks for the question and the rewritten query, fused by reciprocal rank.

    Searching with both means a rewrite that drifts from the question cannot lose the
    documents the question itself finds. Chunks under the similarity floor are dropped here,
    before the evaluator reads them (docs/benchmarks/floor.md). On a retry the chunks already
    graded irrelevant are skipped and the search goes that much deeper, so the retry grades
    chunks it has not seen. A chunk cut mid-sentence gets that sentence completed from its
    neighbour (``read_around``), and the documents are held to ``context_tokens``
    (``crag_core.text.read_around``). A question that names the documents to search (the
    plan's ``where``, from ``choose_tool``) searches only those; none matching is said
    (``unfilled``). A new pass starts from the zero of every per-pass key: no web results, no
    scores of the pass before (``crag_core.schema.state.pass_reset``).
    """
    ctx = context_of(runtime)
    retriever = services.retriever
    rejected = set(state.get("rejected_chunks") or [])
    candidates = (question_of(state), state.get("rewritten_query"))
    queries = list(dict.fromkeys(q for q in candidates if q))
    where = parse_where(scope_of(state))
    rankings = [retriever.search(q, ctx.top_k + len(rejected), where) for q in queries]
    kept = above_floor(rankings, ctx.min_similarity, ctx.keyword_min_similarity, rejected)
    docs = kept[: ctx.top_k]
    if ctx.read_around:
        docs = read_around(docs, retriever.chunks)
    return {
        **pass_reset(),  # type: ignore[typeddict-item]
        "documents": within_budget(docs, ctx.context_tokens),
        "queries": [state.get("rewritten_query") or question_of(state)],
        "unfilled": "" if any(rankings) else _unfilled(retriever.unfilled(), state),
    }


def _unfilled(unfilled: str | None, state: PassState) -> str:
    """Why nothing was found: an empty collection, or no document the question named."""
    if unfilled or not scope_of(state):
        return unfilled or ""
    return f"No document in the collection matches what the question names ({scope_of(state)})."
