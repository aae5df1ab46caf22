"""check_hallucination: is the generation supported by the documents it was generated from?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from crag_core.clients.llm import yes_probability
from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.answer_text import is_no_answer
from crag_core.text.documents import containing
from crag_core.text.support import support_sentences, unsupported_terms
from nodes.shared.common import answer_documents, question_of, reports
from nodes.shared.prompting import render, score_on_evidence

UNPARSABLE_WARNING = (
    "The hallucination check's reply was neither yes nor no; the answer was not verified "
    "against its documents."
)
GROUNDED_SCORE = 0.5
"""The judge's P(yes) at or above which an answer counts as grounded."""


def support_score(
    state: PassState, ctx: Context, judge: BaseChatModel, answer: str, docs: list[Document]
) -> tuple[float | None, PassUpdate]:
    """P(yes) that the first sentence holding ``answer`` gives it as this question's answer.

    The sentence is read with the one before it (which often names what a pronoun means).
    None when no sentence holds the answer or the judge's reply is neither yes nor no.
    """
    supports = support_sentences(answer, docs)
    if not supports:
        return None, {}
    sentence = f"{supports[0].context} {supports[0].sentence}".strip()
    prompt, versions = render(
        state, ctx, "check_support", sentence=sentence, question=question_of(state), answer=answer
    )
    score = yes_probability(judge, prompt)
    return (round(score, 4) if score is not None else None), {"prompt_versions": versions}


def describe(update: Mapping[str, Any]) -> str:
    """The verdict, and the copied sentence's score when it was judged."""
    line = f"grounded: {update.get('grounded')}"
    if update.get("support_score") is not None:
        line += f" (its sentence answers the question: {update['support_score']:.2f})"
    return line


@reports(describe)
def check_hallucination(
    state: PassState, runtime: Runtime[Context], services: Services
) -> PassUpdate:
    """Judge whether the answer is grounded in the context documents.

    Decided without the model when the answer declines ("I don't know" claims nothing), when
    the whole answer appears verbatim in the documents (a copied span is grounded by
    definition), or when the answer names a number or a capitalised term found in no document
    (see docs/decisions.md, "Lexical guards"). Otherwise a judge that reuses the pass's
    evidence message decides. An unusable reply: ``unknown`` plus a warning, and the run goes
    on.

    A copied span may still answer a neighbouring question (another game's score), so the
    judge is asked about the one sentence it was copied from (``support_score``): that score
    goes into the answer's confidence, not into the verdict.
    """
    ctx = context_of(runtime)
    answer = state.get("generation", "")
    docs = answer_documents(state)
    if is_no_answer(answer):
        return {"grounded": "yes"}
    if containing(answer, docs):
        score, update = support_score(state, ctx, services.judge, answer, docs)
        return {**update, "grounded": "yes", "support_score": score}
    missing = unsupported_terms(answer, docs)
    if missing:
        return {
            "grounded": "no",
            "feedback": f"the answer states {', '.join(missing)}, which no document contains.",
        }
    score, versions = score_on_evidence(
        state, ctx, services.judge, "check_hallucination", docs, answer=answer
    )
    if score is None:
        return {
            "prompt_versions": versions,
            "grounded": "unknown",
            "warnings": [UNPARSABLE_WARNING],
        }
    scored: PassUpdate = {"prompt_versions": versions, "grounding_score": round(score, 4)}
    if score >= GROUNDED_SCORE:
        return {**scored, "grounded": "yes"}
    return {
        **scored,
        "grounded": "no",
        "feedback": f"the documents do not support {answer!r}.",
    }
