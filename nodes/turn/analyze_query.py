"""analyze_query: choose the turn's route before any retrieval."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import RAGState, Update
from crag_core.text.query_analysis import is_dependent, nested_steps, split_parts
from nodes.shared.common import question_of, reports
from nodes.turn.history import answered_earlier


def describe(update: Mapping[str, Any]) -> str:
    """The route, and the parts (or a chain's steps) when there are several.

    With the judge's score when an earlier turn was weighed.
    """
    parts = update.get("subquestions") or []
    listed = "".join(f" | {p}" for p in parts)
    kind = "steps" if update.get("route") == "multi_step" else "parts"
    if update.get("route") == "single" and parts:
        kind = "steps if it finds nothing whole"
    judged = (
        f" (earlier answer: score {update['history_score']:.2f})"
        if "history_score" in update
        else ""
    )
    return (
        f"route: {update.get('route')}{judged}{f' ({len(parts)} {kind}){listed}' if parts else ''}"
    )


@reports(describe)
def analyze_query(state: RAGState, runtime: Runtime[Context], services: Services) -> Update:
    """Decide the turn's whole route: the one node that does.

    ``small_talk`` when the whole message is a greeting, thanks, farewell, reaction or a
    question about the assistant, as ``contextualize_question`` judged it (``small_talk``:
    once, before any rewrite). A question with several parts, at most ``max_subquestions``
    (``crag_core.text.query_analysis.split_parts``), is ``multi_step`` when a later part asks
    about the first one's answer ("Who directed Titanic, and when was he born?"), else
    ``multi_part``: plainly separate questions. A single question that describes a thing
    instead of naming it is ``single`` first, its two look-ups kept
    (``crag_core.text.query_analysis.nested_steps``: "Who coached the team that lost Super Bowl
    50?" -> "Which team lost Super Bowl 50?", "Who coached #1?"): asked whole it is most often
    answered by one sentence, and ``nodes.parts.decompose`` asks it in steps only when that pass's
    answer does not stand on a sentence that states the description. ``max_subquestions`` = 1
    turns both splits off.

    A single question that an earlier answered turn of the thread already answers is
    ``history`` (``nodes.turn.history.answered_earlier``: a repeat, with no call, or with the
    judge on (``history_threshold`` < 1) one yes/no call). Anything else is ``single``: one
    retrieval pass. Only that judge calls a model here; the routers only read ``route``.
    """
    if state.get("small_talk"):
        return {"route": "small_talk"}
    ctx = context_of(runtime)
    parts = split_parts(question_of(state), ctx.max_subquestions)
    if len(parts) == 1:
        steps = nested_steps(parts[0]) if ctx.max_subquestions > 1 else []
        if not steps:
            return {"route": "single", **answered_earlier(state, ctx, services)}
        return {"route": "single", "subquestions": steps, "nested": True}
    return {"route": "multi_step" if is_dependent(parts) else "multi_part", "subquestions": parts}
