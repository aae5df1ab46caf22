"""Answers: their sources, a node's line for one, and a pass as an attempt to fall back on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document

from crag_core.schema.state import Attempt, PassState, Source, Verdict
from crag_core.text.answer_text import is_no_answer
from crag_core.text.documents import body, doc_id, doc_location, doc_source
from crag_core.text.regions import parse_box, quote_region
from crag_core.text.support import quote
from nodes.shared.common import answer_documents, question_of

FINDINGS = "findings"
"""A query result's metadata: what the table checks found wrong with it ("" or absent: nothing).
The loop reads such a result as feedback; an answer that rests on nothing else is not given
(``faulted_tables``)."""


def faulted_tables(state: PassState) -> list[str]:
    """What the checks found in the table results the answer cites, when it cites only those.

    [] when it cites a document, or a result that passed. The loop's answers given on the
    text's confidence that rested on results a check had found fault with were right 7 times
    and wrong 12 on the calibration records (keys returned, refused for good since, left
    out); resting on results that passed, 12 right and 1 wrong.
    """
    cited = set(state.get("citations") or [])
    docs = [d for d in answer_documents(state) if doc_id(d) in cited]
    found = [str(d.metadata.get(FINDINGS) or "") for d in docs]
    return list(dict.fromkeys(found)) if docs and all(found) else []


def sources_of(docs: list[Document], answer: str = "", question: str = "") -> list[Source]:
    """Sources (id and origin) of ``docs``; with an answer, each with the sentence it stands on.

    A source on a page carries its region (``box``): the lines of that sentence where the
    chunk keeps its lines' places, else the chunk's.
    """
    sources = []
    for d in docs:
        source = Source(id=doc_id(d), source=doc_source(d))
        if location := doc_location(d):
            source["location"] = location
        if sql := d.metadata.get("sql"):  # a query's result the agent loop read
            source["sql"] = str(sql)
        if box := parse_box(d.metadata.get("box")):
            source["box"] = list(box)
        if answer and (sentence := quote(body(d), answer, question)):
            source["quote"] = sentence
            if on := quote_region(body(d), d.metadata.get("lines"), sentence):
                source["box"] = list(on)  # the sentence's lines, not the whole chunk
        sources.append(source)
    return sources


def answer_summary(update: Mapping[str, Any]) -> str:
    """A node's line for the answer it wrote: its confidence, or whether there is one."""
    given = update.get("confidence")
    if given is not None:
        return f"confidence {given:.2f}"
    return "no answer" if is_no_answer(str(update.get("answer", ""))) else "answer given"


def current_attempt(state: PassState) -> Attempt:
    """The pass that just ran, as an ``Attempt``.

    A pass that ended on "I don't know" ran no check: it counts as not grounded (it states
    nothing), so it never outranks a real answer as the best attempt.
    """
    generation = state.get("generation") or ""
    grounded: Verdict = state.get("grounded") or ("no" if is_no_answer(generation) else "unknown")
    cited = set(state.get("citations") or [])
    return Attempt(
        query=state.get("rewritten_query") or question_of(state),
        generation=generation,
        sources=sources_of(
            [d for d in answer_documents(state) if doc_id(d) in cited],
            generation,
            question_of(state),
        ),
        grounded=grounded,
        answers_question=state.get("answers_question") if grounded != "no" else None,
    )
