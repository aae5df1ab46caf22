"""decompose: a described question asked whole: keep its answer, or ask it in its look-ups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.schema.context import Context
from crag_core.schema.state import RAGState, Update
from crag_core.text.answer_text import is_no_answer
from crag_core.text.support import question_terms, subject_overlap
from nodes.shared.common import answer_documents, reports

MISSING_WORDS = 1
"""How many of the first look-up's words (the description: "the team that won Super Bowl
50") the answer's own sentence may lack for the answer asked whole to stand: one (a spelling,
a synonym). Half was too loose: "15–1" stood on "…six teams to have acquired a 15–1 record,
while the Denver Broncos … eight appearances in the Super Bowl" (team, super, bowl; not won,
50), the other team's record."""


def _summary(update: Mapping[str, Any]) -> str:
    if update.get("route") == "multi_step":
        return f"asked in {len(update.get('subquestions') or [])} steps"
    return "answered whole: its sentence states what the question describes"


@reports(_summary)
def decompose(state: RAGState, runtime: Runtime[Context]) -> Update:
    """Keep the answer of a described question asked whole, or ask it again in its steps.

    A question that describes a thing instead of naming it ("Who coached the team that lost
    Super Bowl 50?") is first asked as it is: most such questions are one look-up, the
    description in the very sentence that holds the answer. That answer stands when its
    sentence states the description: every word of the first look-up but ``MISSING_WORDS``.
    Otherwise (no answer, or an answer found beside something else: "15–1", the other team's
    record) the steps (``analyze_query``'s ``subquestions``) are asked in order
    (``multi_step``), each later one with the earlier answer in it.
    """
    steps = list(state.get("subquestions") or [])
    answer = state.get("answer") or ""
    if steps and not is_no_answer(answer):
        words = len(question_terms(steps[0], answer))
        stated = subject_overlap(steps[0], answer, answer_documents(state), with_before=False)
        if stated is not None and stated * words >= words - MISSING_WORDS - 1e-9:
            return {}
    return {"route": "multi_step", "subquestions": steps}
