"""validate_citations: check the answer's citations against this run's documents."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from crag.citations import citation_keys, parse_citations, strip_citations
from crag.documents import containing, doc_id
from graph.context import Context
from graph.state import RAGState
from nodes.common import context_documents, is_no_answer, with_warning

MAX_CITATION_CORRECTIONS = 1
"""Times per pass the generator is sent back to fix its citations."""


def validate_citations(state: RAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Map cited keys to chunk ids; send the answer back once if a key is unknown or missing.

    An answer that cites nothing but appears word for word in some documents is attributed
    to those documents, with no second generation: asking the 1.5B model again got a
    citation for 1 of 11 uncited SQuAD answers, and sometimes changed the answer. After
    the one correction, unknown keys are dropped with a warning. The answer goes on without
    its citation markers; ``citations`` holds the validated chunk ids, which become the
    run's sources.
    """
    raw = state.get("generation", "")
    docs = context_documents(state)
    if is_no_answer(raw):
        return {"generation": strip_citations(raw), "citations": [], "citation_feedback": ""}
    keys = citation_keys(len(docs))
    cited = parse_citations(raw)
    if not cited:
        cited = [keys[i] for i in containing(strip_citations(raw), docs)]
    unknown = [k for k in cited if k not in keys]
    corrections = state.get("citation_corrections", 0)
    if (unknown or not cited) and corrections < MAX_CITATION_CORRECTIONS:
        problem = (
            f"it cited {', '.join(f'[{k}]' for k in unknown)}, which is not a document id"
            if unknown
            else "it cited no document"
        )
        return {
            "citation_corrections": corrections + 1,
            "citation_feedback": (
                f"Your previous answer was: {strip_citations(raw)!r}, but {problem}. "
                f"Cite only these ids: {', '.join(f'[{k}]' for k in keys)}."
            ),
        }
    update: dict[str, Any] = {
        "generation": strip_citations(raw),
        "citations": [doc_id(docs[keys.index(k)]) for k in cited if k in keys],
        "citation_feedback": "",
    }
    if unknown:
        update["warnings"] = with_warning(
            state, f"Removed citations of unknown documents: {', '.join(unknown)}."
        )
    elif not cited:
        update["warnings"] = with_warning(state, "The answer cites none of its documents.")
    return update
