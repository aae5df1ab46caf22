"""check_hallucination: is the generation supported by the documents it was generated from?"""

from __future__ import annotations

import re

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from adapters.documents import containing, fold_numbers, normalize
from adapters.keyword_index import STOPWORDS
from adapters.services import Services
from nodes.answers import is_no_answer
from nodes.common import answer_documents, reports
from nodes.prompting import score_on_evidence
from schema.context import Context, context_of
from schema.state import RAGState, Update

UNPARSABLE_WARNING = (
    "The hallucination check's reply was neither yes nor no; the answer was not verified "
    "against its documents."
)
GROUNDED_SCORE = 0.5
"""The judge's P(yes) at or above which an answer counts as grounded."""


# Numbers, and capitalised words (names, places, titles): the claims a small model invents.
_KEY_TERM = re.compile(r"\d+(?:[.,]\d+)*|\b[A-Z][\w'-]*\w")
# Answer words that are no claim: a yes/no answer is left to the judge.
_NOT_CLAIMS = frozenset({"yes", "no"})


def _variants(word: str) -> set[str]:
    """``word`` and its plural or singular: "Forces" is supported by "force"."""
    return {word, word + "s", word.removesuffix("s"), word.removesuffix("es")}


def unsupported_terms(answer: str, docs: list[Document]) -> list[str]:
    """Numbers and capitalised words of the answer that appear in none of the documents.

    A number the documents spell out counts as present ("6" against "six-time winner"), and a
    word in its plural or singular. Capitalised function words ("They", "The" opening a
    sentence) and "yes"/"no" are no claims.
    """
    words = normalize(" ".join(d.page_content for d in docs)).split()
    known = set(words) | set(fold_numbers(words))
    missing = []
    for term in dict.fromkeys(_KEY_TERM.findall(answer)):
        parts = [w for w in normalize(term).split() if w not in STOPWORDS | _NOT_CLAIMS]
        if parts and not all(_variants(w) & known for w in parts):
            missing.append(term)
    return missing


@reports(lambda u: f"grounded: {u.get('grounded')}")
def check_hallucination(state: RAGState, runtime: Runtime[Context], services: Services) -> Update:
    """Judge whether the answer is grounded in the context documents.

    Decided without the model when the answer declines ("I don't know" claims nothing), when
    the whole answer appears verbatim in the documents (a copied span is grounded by
    definition), or when the answer names a number or a capitalised term found in no document
    (see docs/decisions.md, "Lexical guards"). Otherwise a judge that reuses the pass's
    evidence message decides. An unusable reply: ``unknown`` plus a warning, and the run goes
    on.
    """
    ctx = context_of(runtime)
    answer = state.get("generation", "")
    docs = answer_documents(state)
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
    score, update = score_on_evidence(
        state, ctx, services.judge, "check_hallucination", docs, answer=answer
    )
    if score is None:
        return {
            **update,
            "grounded": "unknown",
            "warnings": [UNPARSABLE_WARNING],
        }
    update["grounding_score"] = round(score, 4)
    if score >= GROUNDED_SCORE:
        return {**update, "grounded": "yes"}
    return {
        **update,
        "grounded": "no",
        "feedback": f"the documents do not support {answer!r}.",
    }
