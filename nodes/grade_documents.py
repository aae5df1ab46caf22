"""grade_documents: judge each retrieved document and decide correct / ambiguous / incorrect."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.documents import Document
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from crag.documents import format_documents
from crag.llm import judge
from crag.services import services_for
from graph.context import Context
from graph.state import RAGState, RetrievalVerdict
from nodes.common import context_of, question_of, render, with_warning

UNPARSABLE_WARNING = (
    "The document grader's reply could not be parsed for some documents; they were kept "
    "as relevant."
)


class DocumentGrade(BaseModel):
    """The grader's reply for one document."""

    model_config = ConfigDict(extra="forbid")
    contains_answer: Literal["yes", "no"] = Field(
        description="yes if the document contains the answer to the question"
    )


def grade_inputs(doc: Document, question: str) -> dict[str, str]:
    """The ``grade_documents`` prompt's variables for one document."""
    return {"document": format_documents([doc]), "question": question}


def decide(relevant: list[Document], ctx: Context) -> RetrievalVerdict:
    """CRAG's three-way decision from the documents the grader judged relevant.

    Each relevant document's confidence is its cosine similarity to the question (the
    retriever's score; chunks under ``min_similarity``, the lower threshold, never reach the
    grader). correct: at least ``min_relevant_docs`` relevant documents scoring at least
    ``confident_similarity`` (the upper threshold); incorrect: none relevant; ambiguous:
    relevant documents, but too few confident ones (the knowledge base is kept and the web
    is searched too).
    """
    if not relevant:
        return "incorrect"
    confident = [d for d in relevant if d.metadata.get("score", 1.0) >= ctx.confident_similarity]
    return "correct" if len(confident) >= ctx.min_relevant_docs else "ambiguous"


def grade_documents(state: RAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Grade each retrieved document (one small structured call each) and keep the relevant.

    One binary question per document was measured far more reliable with the embedded 1.5B
    model than grading all documents in one call or on a three-level scale. The document
    comes first in the prompt so llama.cpp reuses it from the cache in later prompts.
    An unparsable reply keeps the document (a lost relevant document costs more than an
    extra irrelevant one) and adds a warning.
    """
    ctx = context_of(runtime)
    docs: list[Document] = list(state.get("documents") or [])
    llm = services_for(ctx).llm
    update: dict[str, Any] = {}
    graded: list[Document] = []
    for doc in docs:
        prompt, recorded = render(
            state, ctx, "grade_documents", **grade_inputs(doc, question_of(state))
        )
        update.update(recorded)
        result = judge(llm, prompt, DocumentGrade)
        if result is None:
            update["warnings"] = with_warning(state, UNPARSABLE_WARNING)
        grade = "yes" if result is None else result.contains_answer
        graded.append(
            Document(
                id=doc.id,
                page_content=doc.page_content,
                metadata={**doc.metadata, "relevant": grade},
            )
        )
    relevant = [d for d in graded if d.metadata["relevant"] == "yes"]
    update["documents"] = graded
    update["relevant_documents"] = relevant
    update["retrieval_verdict"] = decide(relevant, ctx)
    return update
