"""read_document: answer a question about one whole document by reading all of it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.clients.llm import complete
from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate, Source
from crag_core.text.answer_text import NO_ANSWER, is_no_answer
from crag_core.text.documents import body
from crag_core.text.whole_document import joined, parts
from crag_core.text.words import normalize
from nodes.shared.common import question_of, reports
from nodes.shared.confidence import document_signals, tool_confidence
from nodes.shared.prompting import render

MAX_PARTS = 6
"""Parts of a long document read at most (one call each, then one to join them)."""
DECLINED = "The document does not say."
"""What ``read_document``'s prompt has the model reply when the document says nothing of it."""


def declines(reading: str) -> bool:
    """Whether a reading is the prompt's "the document does not say" (or empty)."""
    return not reading.strip() or normalize(reading).startswith(normalize(DECLINED))


def describe(update: Mapping[str, Any]) -> str:
    """Which document was read, and how."""
    (source,) = update.get("sources") or [{"source": "?", "location": "?"}]
    return f"read {source['source']} ({source.get('location')})"


@reports(describe)
def read_document(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Read the document the question names (the plan's), in order, and answer from all of it.

    Its chunks are joined back in order (overlaps once). A document that fits
    ``context_tokens`` is read in one call; a longer one in parts that each fit (at most
    ``MAX_PARTS``, one call each), whose answers one more call joins (map-reduce). The answer
    cites the document and says how much of it was read. Its confidence is fitted on what the
    reading measured (``nodes.shared.confidence.document_signals``: how much of what the
    document is mostly about the answer says, how much was read) and gated in ``finalize``. A
    part the model says nothing of (``DECLINED``) is left out, and when every part is, the
    answer is "I don't know", with a warning that the document was read and does not say.
    """
    ctx = context_of(runtime)
    question = question_of(state)
    plan = state.get("plan")
    if plan is None or plan["tool"] != "document" or services.document_chunks is None:
        raise ValueError("read_document reads choose_tool's document plan, and there is none")
    chunks = services.document_chunks(plan["doc_id"])
    text = joined([body(c) for c in chunks])
    pieces = parts(text, ctx.context_tokens)
    read = pieces[:MAX_PARTS]
    update: PassUpdate = {"prompt_versions": {}}
    readings = []
    for piece in read:
        prompt, versions = render(state, ctx, "read_document", document=piece, question=question)
        update["prompt_versions"] |= versions
        readings.append(complete(services.llm, prompt))
    declined = sum(declines(r) for r in readings)
    readings = [r for r in readings if not declines(r)]
    answer = readings[0] if readings else NO_ANSWER
    if len(readings) > 1:
        notes = "\n\n".join(f"Part {i}: {r}" for i, r in enumerate(readings, start=1))
        prompt, versions = render(state, ctx, "combine_readings", readings=notes, question=question)
        update["prompt_versions"] |= versions
        answer = complete(services.llm, prompt)
    where = (
        "the whole document"
        if len(read) == len(pieces)
        else (f"the first {len(read)} of its {len(pieces)} parts")
    )
    source = Source(id=plan["doc_id"], source=plan["name"], location=where)
    warnings = (
        []
        if len(read) == len(pieces)
        else [f"Only the first {len(read)} of {len(pieces)} parts of {source['source']} were read."]
    )
    if not readings:
        warnings.append(f"{source['source']} was read ({where}) and does not say.")
    measured = document_signals(plan["name"], text, answer, len(read), len(pieces), declined)
    return update | {
        "answer": answer,
        "sources": [source],
        "confidence": None if is_no_answer(answer) else tool_confidence("document", measured),
        "answer_kind": "document",
        "tool_signals": measured,
        "warnings": warnings,
    }
