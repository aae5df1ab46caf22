"""grade_documents: judge each retrieved document and decide correct / ambiguous / incorrect."""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from langchain_core.documents import Document
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field, create_model

from crag.documents import format_documents
from crag.llm import judge
from crag.services import services_for
from graph.context import Context
from graph.state import RAGState, RetrievalVerdict
from nodes.common import context_of, render, with_warning

Grade = Literal["relevant", "partial", "irrelevant"]

UNPARSABLE_WARNING = (
    "The document grader's reply could not be parsed; the retrieved documents were treated "
    "as partly relevant and web results were added."
)


@cache
def grades_schema(count: int) -> type[BaseModel]:
    """A schema with one required grade per document: ``doc_1`` ... ``doc_<count>``."""
    fields: dict[str, Any] = {
        f"doc_{i}": (Grade, Field(description=f"Grade of document {i}")) for i in range(1, count + 1)
    }
    return create_model(  # type: ignore[call-overload,no-any-return]
        "DocumentGrades", __config__=ConfigDict(extra="forbid"), **fields
    )


def decide(grades: list[Grade], min_relevant: int) -> RetrievalVerdict:
    """CRAG's three-way decision from the per-document grades."""
    relevant = grades.count("relevant")
    if relevant >= max(1, min_relevant):
        return "correct"
    if relevant or "partial" in grades:
        return "ambiguous"
    return "incorrect"


def grade_documents(state: RAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Grade all retrieved documents in one structured call and keep the useful ones.

    correct: keep the relevant documents and answer from them.
    ambiguous: keep relevant and partial documents; web results will be added.
    incorrect: keep nothing; the answer will come from web results.
    If the grader's reply is unparsable, every document counts as partial (ambiguous).
    """
    ctx = context_of(runtime)
    docs: list[Document] = list(state.get("documents") or [])
    if not docs:
        return {"relevant_documents": [], "retrieval_verdict": "incorrect"}
    prompt, recorded = render(
        state, ctx, "grade_documents", documents=format_documents(docs), question=state["question"]
    )
    result = judge(services_for(ctx).llm, prompt, grades_schema(len(docs)))
    update: dict[str, Any] = dict(recorded)
    if result is None:
        grades: list[Grade] = ["partial"] * len(docs)
        update["warnings"] = with_warning(state, UNPARSABLE_WARNING)
    else:
        grades = [getattr(result, f"doc_{i}") for i in range(1, len(docs) + 1)]
    verdict = decide(grades, ctx.min_relevant_docs)
    keep = {"relevant"} if verdict == "correct" else {"relevant", "partial"}
    graded = [
        Document(id=d.id, page_content=d.page_content, metadata={**d.metadata, "grade": g})
        for d, g in zip(docs, grades)
    ]
    update["documents"] = graded
    update["relevant_documents"] = [d for d in graded if d.metadata["grade"] in keep]
    update["retrieval_verdict"] = verdict
    return update
