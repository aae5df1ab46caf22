"""decompose: a described question asked whole: keep its answer, or ask it in its look-ups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.schema.context import Context, context_of
from crag_core.schema.state import RAGState, Update
from crag_core.text.answer_text import is_no_answer
from crag_core.text.support import question_terms, subject_overlap
from nodes.shared.common import answer_documents, no_time_to_retry, reports

MISSING_WORDS = 1
"""How many of the first look-up's words (the description: "the team that won Super Bowl
50") the answer's own sentence may lack for the answer asked whole to stand: one (a spelling,
a synonym). Half was too loose: "15–1" stood on "…six teams to have acquired a 15–1 record,
while the Denver Broncos … eight appearances in the Super Bowl" (team, super, bowl; not won,
50), the other team's record."""


NO_TIME = (
    "The question was not asked again in its {steps} steps: one more pass would end past "
    "answer_seconds {seconds:g}."
)
"""The warning of a described question whose steps there was no time for."""


def _summary(update: Mapping[str, Any]) -> str:
    if update.get("route") == "multi_step":
        return f"asked in {len(update.get('subquestions') or [])} steps"
    if update.get("warnings"):
        return "not asked in its steps: no time left"
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

    The steps are not begun when one more pass, at the pace of the question's passes so far,
    would end past ``answer_seconds`` (``no_time_to_retry``): the whole question's answer (or
    "I don't know") stands, and a warning says so.
    """
    steps = list(state.get("subquestions") or [])
    answer = state.get("answer") or ""
    if steps and not is_no_answer(answer):
        words = len(question_terms(steps[0], answer))
        stated = subject_overlap(steps[0], answer, answer_documents(state), with_before=False)
        if stated is not None and stated * words >= words - MISSING_WORDS - 1e-9:
            return {}
    ctx = context_of(runtime)
    if no_time_to_retry(state, ctx):
        return {"warnings": [NO_TIME.format(steps=len(steps), seconds=ctx.answer_seconds)]}
    return {"route": "multi_step", "subquestions": steps}
