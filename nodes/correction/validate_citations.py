"""validate_citations: check the answer's citations against this run's documents."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.answer_text import NO_ANSWER, clean_answer, is_no_answer
from crag_core.text.citations import citation_keys, parse_citations, strip_citations
from crag_core.text.documents import containing, doc_id
from crag_core.text.whole_answer import whole_answer
from nodes.shared.common import answer_documents, past_deadline, reports


@dataclass(frozen=True)
class CitationCheck:
    """What the citations of one answer come to."""

    cited: list[str]
    """Valid keys the answer is attributed to."""
    unknown: list[str]
    """Cited keys that name no document of the run."""


def check_citations(answer: str, docs: list[Document]) -> CitationCheck:
    """Attribute ``answer`` (citation markers removed) to the documents that support it.

    An answer found word for word in some documents is attributed to them when it cites none,
    or when none of the documents it cites contains it (a span copied from one document and
    cited to another; docs/decisions.md, "Citations"). Otherwise its valid cited keys stand.
    """
    keys = citation_keys(len(docs))
    cited = parse_citations(answer)
    unknown = [k for k in cited if k not in keys]
    valid = [k for k in cited if k in keys]
    span = clean_answer(answer, "")
    holders = [keys[i] for i in containing(span, docs)]
    if holders and not any(k in holders for k in valid):
        valid = holders
    return CitationCheck(cited=valid, unknown=unknown)


def _summary(update: Mapping[str, Any]) -> str:
    if update.get("citation_feedback"):
        return "sent back: " + str(update["citation_feedback"]).split(", but ", 1)[-1]
    if update.get("generation") == NO_ANSWER:
        return "no answer to cite for"
    cited = update.get("citations") or []
    return f"cites {', '.join(cited)}" if cited else "cites nothing"


@reports(_summary)
def validate_citations(state: PassState, runtime: Runtime[Context]) -> PassUpdate:
    """Map cited keys to chunk ids; send the answer back if a key is unknown or missing.

    An answer is attributed to the documents that contain it word for word when its own
    citations do not (no second generation for that). When it cites a key that names no
    document, or cites nothing and is found in no document, it is sent back with the valid
    keys listed, at most ``max_citation_corrections`` times per pass and not past the
    question's ``answer_seconds``; after that, unknown keys are dropped with a warning. The
    answer goes on as a reader should see it: without its citation markers, talk about the
    documents or bracket debris (``clean_answer``; a reply that only talks about them is no
    answer), and whole: a span cut short in the document it cites grown to its unit, the
    other side of its dash, the rest of its name (``whole_answer``: "24" -> "24–10").
    ``citations`` holds the validated chunk ids, which become the run's sources.
    """
    raw = state.get("generation", "")
    docs = answer_documents(state)
    if is_no_answer(clean_answer(raw, NO_ANSWER)):
        return {"generation": NO_ANSWER, "citations": [], "citation_feedback": ""}
    check = check_citations(raw, docs)
    corrections, ctx = state.get("citation_corrections", 0), context_of(runtime)
    may_correct = corrections < ctx.max_citation_corrections and not past_deadline(state, ctx)
    if (check.unknown or not check.cited) and may_correct:
        return {
            "citation_corrections": corrections + 1,
            "citation_feedback": _correction(raw, check, citation_keys(len(docs))),
        }
    keys = citation_keys(len(docs))
    cited = [docs[keys.index(k)] for k in check.cited]
    update: PassUpdate = {
        "generation": whole_answer(clean_answer(raw, NO_ANSWER), cited or docs),
        "citations": [doc_id(d) for d in cited],
        "citation_feedback": "",
    }
    if check.unknown:
        warning = f"Removed citations of unknown documents: {', '.join(check.unknown)}."
        update["warnings"] = [warning]
    elif not check.cited:
        update["warnings"] = ["The answer cites none of its documents."]
    return update


def _correction(raw: str, check: CitationCheck, keys: list[str]) -> str:
    problem = (
        f"it cited {', '.join(f'[{k}]' for k in check.unknown)}, which is not a document id"
        if check.unknown
        else "it cited no document"
    )
    return (
        f"Your previous answer was: {strip_citations(raw)!r}, but {problem}. "
        f"Cite only these ids: {', '.join(f'[{k}]' for k in keys)}."
    )
