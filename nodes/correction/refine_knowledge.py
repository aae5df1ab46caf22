"""refine_knowledge: keep the parts of each web result that bear on the question.

CRAG's decompose-then-recompose step, applied to web results before they are graded and
answered from. Knowledge-base chunks are short and stay whole: they are the shared prefix of
the pass's calls, and rewriting them would make the model server process them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from crag_core.clients.embeddings import cosine
from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.sentences import split_sentences
from nodes.shared.common import question_of, reports

GAP = " … "
"""Joins kept strips that were not adjacent in the document."""


def refine_document(doc: Document, scores: list[float], strips: list[str], keep: int) -> Document:
    """``doc`` reduced to its ``keep`` best-scoring strips, recomposed in document order."""
    best = sorted(sorted(range(len(strips)), key=lambda i: -scores[i])[:keep])
    text = strips[best[0]]
    for prev, cur in zip(best, best[1:], strict=False):
        text += (" " if cur == prev + 1 else GAP) + strips[cur]
    metadata = {**doc.metadata, "refined": f"{len(best)}/{len(strips)} strips"}
    return Document(id=doc.id, page_content=text, metadata=metadata)


def _summary(update: Mapping[str, Any]) -> str:
    refined = [d.metadata.get("refined") for d in update.get("web_results") or []]
    if not any(refined):
        return "web results kept whole"
    return "strips kept: " + ", ".join(r or "whole" for r in refined)


@reports(_summary)
def refine_knowledge(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Decompose each web result into strips, keep the best ones, recompose in order.

    Strips are sentences, scored by cosine similarity to the question with the retrieval
    embeddings (no LLM call); ``refine_top_strips`` are kept per result (see
    docs/decisions.md for how the default was measured). Results with no more strips than
    that pass unchanged; so does everything when ``refine`` is off.
    """
    ctx = context_of(runtime)
    docs = list(state.get("web_results") or [])
    keep = ctx.refine_top_strips
    split = [split_sentences(d.page_content) for d in docs]
    if not ctx.refine or all(len(s) <= keep for s in split):
        return {}
    embeddings = services.embeddings
    if embeddings is None:
        return {}
    query = embeddings.embed_query(question_of(state))
    flat = [strip for strips in split if len(strips) > keep for strip in strips]
    vectors = iter(embeddings.embed_documents(flat))
    refined = []
    for doc, strips in zip(docs, split, strict=True):
        if len(strips) <= keep:
            refined.append(doc)
            continue
        scores = [cosine(query, next(vectors)) for _ in strips]
        refined.append(refine_document(doc, scores, strips, keep))
    return {"web_results": refined}
