"""check_hallucination: is the generation supported by the documents it was generated from?"""

from __future__ import annotations

import re
from typing import Any, Literal

from langchain_core.documents import Document
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from crag.documents import containing, format_documents, normalize
from graph.context import Context
from graph.state import RAGState
from nodes.common import context_documents, context_of, is_no_answer, run_check

UNPARSABLE_WARNING = (
    "The hallucination check's reply could not be parsed; the answer was not verified "
    "against its documents."
)


class GroundingVerdict(BaseModel):
    """The hallucination judge's reply."""

    model_config = ConfigDict(extra="forbid")
    grounded: Literal["yes", "no"] = Field(
        description="yes if every claim in the answer is supported by the documents"
    )
    unsupported: str = Field(description="the first unsupported claim, or an empty string")


# Numbers, and capitalised words (names, places, titles): the claims a small model invents.
_KEY_TERM = re.compile(r"\d+(?:[.,]\d+)*|\b[A-Z][\w'-]*\w")


def unsupported_terms(answer: str, docs: list[Document]) -> list[str]:
    """Numbers and capitalised words of the answer that appear in none of the documents."""
    known = set(normalize(" ".join(d.page_content for d in docs)).split())
    missing = []
    for term in dict.fromkeys(_KEY_TERM.findall(answer)):
        words = normalize(term).split()
        if words and not all(w in known for w in words):
            missing.append(term)
    return missing


def check_hallucination(state: RAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Judge whether the answer is grounded in the context documents.

    Decided without the model when the answer declines ("I don't know" claims nothing), when
    the whole answer appears verbatim in the documents (a copied span is grounded by
    definition: small judges were measured rejecting such correct short answers), or when the
    answer names a number or a capitalised term found in no document (the small judge was
    seen accepting both an invented score and an answer from its own memory).
    Unparsable judge reply: ``unknown`` plus a warning, and the run goes on.
    """
    ctx = context_of(runtime)
    answer = state.get("generation", "")
    docs = context_documents(state)
    if is_no_answer(answer):
        return {"grounded": "yes"}
    if containing(answer, docs):
        return {"grounded": "yes"}
    missing = unsupported_terms(answer, docs)
    if missing:
        return {
            "grounded": "no",
            "feedback": f"the answer states {', '.join(missing)}, which no document contains.",
        }
    return run_check(
        state,
        ctx,
        prompt="check_hallucination",
        schema=GroundingVerdict,
        verdict="grounded",
        explanation="unsupported",
        failure="the answer was not supported by the documents ({detail}).",
        unparsable=UNPARSABLE_WARNING,
        documents=format_documents(docs),
        answer=answer,
    )
