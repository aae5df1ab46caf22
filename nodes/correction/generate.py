"""generate: answer the user's question from the evidence the evaluator accepted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from crag_core.clients.llm import complete
from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.answer_text import NO_ANSWER
from crag_core.text.citations import strip_citations
from crag_core.text.documents import containing
from crag_core.text.words import normalize
from nodes.shared.common import answer_documents, reports
from nodes.shared.prompting import render_on_evidence


def describe(update: Mapping[str, Any]) -> str:
    """The answer, on one line, shortened."""
    text = " ".join(str(update.get("generation", "")).split())
    return text if len(text) <= 70 else text[:67] + "..."


@reports(describe)
def generate(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Answer the original question (not the rewrite) from the accepted evidence.

    With no evidence nothing states the answer, so the node says so without calling the
    model. The prompt starts with the same evidence message the evaluator just read, so only
    the task is new to the model server. On a retry the checks' feedback is part of the
    prompt, and on a citation correction, what was wrong with the citations. Documents are
    shown with the short ids ``S1``..``Sn`` that the answer cites.
    """
    ctx = context_of(runtime)
    docs = answer_documents(state)
    if not docs:
        return {"generation": NO_ANSWER}
    notes = []
    if state.get("feedback"):
        notes.append(f"A previous answer was rejected: {state['feedback']}")
    if state.get("citation_feedback"):
        notes.append(state["citation_feedback"])
    feedback = "\n".join(notes)
    prompt, versions = render_on_evidence(
        state, ctx, "generate", docs, feedback=feedback, no_answer=NO_ANSWER
    )
    answer = complete(services.llm, prompt, streamed=True)
    # The task's own words, without the feedback (which quotes the previous answer).
    instructions = prompt.messages[-1].text.replace(feedback, "")
    if copies_instructions(answer, instructions, docs):
        return {"generation": NO_ANSWER, "prompt_versions": versions}
    return {"generation": answer or NO_ANSWER, "prompt_versions": versions}


def copies_instructions(answer: str, instructions: str, docs: list[Document]) -> bool:
    """Whether the answer repeats the prompt's own words and no document's.

    A small model asked for "a name, number, date, place or short phrase" was seen answering
    exactly that on a question its documents did not answer: an echo claims nothing.
    """
    span = normalize(strip_citations(answer))
    return (
        bool(span) and f" {span} " in f" {normalize(instructions)} " and not containing(span, docs)
    )
