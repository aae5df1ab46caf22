"""grade_documents: CRAG's retrieval evaluator - do the documents state the answer?

The light evaluator scores the documents first, without the model (``nodes.shared.evaluator``:
P(their best chunk states the answer) from the encoder and the question's words). At or above
``light_correct`` they state the answer (correct), under ``light_incorrect`` they do not
(incorrect), and that decides. In between (the grey zone), ``light_grey`` says what happens:

- ``model``: the model grades, one yes/no call on the pass's documents, read as a score (the
  probability the model gives "yes", from its log-probabilities); its read of the evidence is
  the prefix the generator reuses. Two thresholds turn the score into CRAG's decision on
  knowledge-base documents - correct, ambiguous, incorrect - and, after web search, the
  evidence (knowledge-base documents kept as ambiguous plus the web results) must reach the
  evidence threshold to be answered from. When it does not, an ambiguous retrieval that
  scored higher on its own than with the web results is answered from alone (the web added
  nothing better); otherwise nothing states the answer and the run says so.
- ``ambiguous``: no model call, as the CRAG paper's evaluator: the knowledge base's documents
  are ambiguous (kept, and the web searched), and evidence with web results is answered from.

The pass's score (``retrieval_score``, ``evidence_score``) is the model's where it graded and
the light one where that decided.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate, RetrievalVerdict
from crag_core.text.documents import dedupe
from crag_core.text.read_around import within_budget
from crag_core.text.words import plural
from nodes.shared.common import question_of, reports
from nodes.shared.evaluator import light_score
from nodes.shared.prompting import score_on_evidence

UNPARSABLE_WARNING = (
    "The retrieval evaluator's reply was neither yes nor no; the documents were kept as relevant."
)


def decide(score: float, ctx: Context) -> RetrievalVerdict:
    """CRAG's three-way decision from the evaluator's score and the two thresholds."""
    if score >= ctx.correct_threshold:
        return "correct"
    return "incorrect" if score < ctx.incorrect_threshold else "ambiguous"


def marked(docs: list[Document], relevant: bool) -> list[Document]:
    """``docs`` with ``metadata["relevant"]`` set (the retry skips rejected chunks)."""
    grade = "yes" if relevant else "no"
    return [
        Document(id=d.id, page_content=d.page_content, metadata={**d.metadata, "relevant": grade})
        for d in docs
    ]


@dataclass(frozen=True)
class Graded:
    """The evaluator's outcome on some documents."""

    score: float
    """The pass's score: the model's where it graded, else the light one."""
    light: float | None
    """The light evaluator's score (None: no encoder)."""
    decided: RetrievalVerdict | None
    """The light evaluator's verdict where it decided (None: the model's score decides)."""
    update: PassUpdate
    """What the model's call adds to the state (its prompt version, a warning)."""


def _score(state: PassState, ctx: Context, services: Services, docs: list[Document]) -> Graded:
    """The evaluator's outcome on ``docs`` (see the module docstring).

    The light score decides outside the grey zone (no call), and inside it with ``light_grey``
    ``ambiguous``; otherwise the model's score does, an unusable reply counting as yes, with a
    warning. Without an encoder the model grades.
    """
    light = None
    if services.embeddings is not None:
        light = round(light_score(services.embeddings, question_of(state), docs), 4)
        if light >= ctx.light_correct:
            return Graded(light, light, "correct", {})
        if light < ctx.light_incorrect:
            return Graded(light, light, "incorrect", {})
        if ctx.light_grey == "ambiguous":
            return Graded(light, light, "ambiguous", {})
    score, versions = score_on_evidence(state, ctx, services.judge, "grade_documents", docs)
    if score is None:
        return Graded(
            1.0, light, None, {"prompt_versions": versions, "warnings": [UNPARSABLE_WARNING]}
        )
    return Graded(score, light, None, {"prompt_versions": versions})


def describe(update: Mapping[str, Any]) -> str:
    """The evaluator's outcome: its score (the light one's or the model's) and decision."""
    kept = len(update.get("relevant_documents") or [])
    by = "model" if "prompt_versions" in update else "light"
    if "evidence_score" in update:
        verdict = f"kept {plural(kept, 'document')}" if kept else "nothing states the answer"
        if update.get("kb_fallback"):
            verdict = f"the knowledge base's {plural(kept, 'document')} scored higher, kept alone"
        return f"with web results, {by} score {update['evidence_score']:.2f}: {verdict}"
    if "retrieval_score" in update:
        return f"{update['retrieval_verdict']} ({by} score {update['retrieval_score']:.2f})"
    return str(update.get("retrieval_verdict") or "")


@reports(describe)
def grade_documents(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Score the knowledge-base documents, or after web search the whole evidence.

    Knowledge base: the score decides correct / ambiguous / incorrect, and the documents are
    kept unless incorrect. After web search: the kept documents plus the web results are
    scored together (the prompt the answer will reuse), and kept only at or above
    ``evidence_threshold``; below it, ambiguous knowledge-base documents that scored higher
    alone are kept alone (``kb_fallback``). Nothing to score costs no call.
    """
    ctx = context_of(runtime)
    docs = list(state.get("documents") or [])
    if not state.get("web_searched"):
        if not docs:
            return {"retrieval_verdict": "incorrect", "relevant_documents": []}
        graded = _score(state, ctx, services, docs)
        verdict = graded.decided or decide(graded.score, ctx)
        relevant = verdict != "incorrect"
        return {
            **graded.update,
            "light_score": graded.light,
            "retrieval_score": round(graded.score, 4),
            "retrieval_verdict": verdict,
            "documents": marked(docs, relevant),
            "relevant_documents": marked(docs, True) if relevant else [],
        }
    web = list(state.get("web_results") or [])
    if not web:  # the web failed or is off: the knowledge-base decision stands
        return {}
    return _grade_evidence(state, ctx, services, web)


def _grade_evidence(
    state: PassState, ctx: Context, services: Services, web: list[Document]
) -> PassUpdate:
    """Score the kept documents plus ``web``; keep them, the documents alone, or nothing."""
    kept = list(state.get("relevant_documents") or [])
    evidence = within_budget(dedupe([*kept, *web]), ctx.context_tokens)
    graded = _score(state, ctx, services, evidence)
    result: PassUpdate = {
        **graded.update,
        "evidence_light_score": graded.light,
        "evidence_score": round(graded.score, 4),
    }
    if graded.decided in ("correct", "ambiguous") or (
        graded.decided is None and graded.score >= ctx.evidence_threshold
    ):
        return {**result, "relevant_documents": evidence}
    if ctx.kb_fallback and kept and (state.get("retrieval_score") or 0.0) > graded.score:
        return {**result, "relevant_documents": kept, "kb_fallback": True}
    return {**result, "relevant_documents": []}
