"""check_history: answer a follow-up from the thread when an earlier turn already answered it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag.clients.keyword_index import STOPWORDS
from crag.clients.llm import yes_probability
from crag.clients.services import Services
from crag.schema.context import Context, context_of
from crag.schema.state import RAGState, Turn, Update
from nodes.answers import is_no_answer
from nodes.common import question_of, reports
from nodes.prompting import render


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS}


def earlier_answer(state: RAGState) -> Turn | None:
    """The thread's latest answered turn about what this question asks about, if any.

    Rules first: a turn that said "I don't know" answers nothing, and a question that shares
    no word (beyond stopwords) with the turn's question and answer is about something else, so
    neither needs the model.
    """
    words = _words(question_of(state))
    for turn in reversed(state.get("history") or []):
        if is_no_answer(turn["answer"]):
            continue
        if words & _words(f"{turn['standalone_question']} {turn['answer']}"):
            return turn
        return None
    return None


REPEAT_OVERLAP = 0.8
"""Share of their words (beyond stopwords) two questions need in common to be one question."""


def repeats(question: str, turn: Turn) -> bool:
    """Whether ``question`` asks again what ``turn`` asked ("Who won it, again?" rewritten)."""
    asked, earlier = _words(question), _words(turn["standalone_question"])
    return bool(asked) and len(asked & earlier) >= REPEAT_OVERLAP * len(asked | earlier)


def needs_check(state: RAGState, ctx: Context) -> bool:
    """Whether ``check_history`` has something to decide: a repeat, or a judge to ask."""
    turn = earlier_answer(state)
    if turn is None:
        return False
    return repeats(question_of(state), turn) or ctx.history_threshold < 1.0


def describe(update: Mapping[str, Any]) -> str:
    """Whether the thread answered it, with the judge's score."""
    found = "answered earlier" if update.get("route") == "history" else "not answered earlier"
    return f"{found} (score {update.get('history_score', 0.0):.2f})"


@reports(describe)
def check_history(state: RAGState, runtime: Runtime[Context], services: Services) -> Update:
    """Does the earlier turn's answer already answer this follow-up?

    A question that repeats the earlier one (the follow-up rewrite of "Who won it, again?")
    does, with no call. Otherwise, when ``history_threshold`` is below 1, one yes/no call asks
    the judge; at or above the threshold it does. Then the turn's route is ``history``: the
    earlier answer is this turn's, with the earlier turn's sources, and nothing is retrieved.
    Else (or on an unreadable reply) the question takes its single pass.
    """
    ctx = context_of(runtime)
    turn = earlier_answer(state)
    if turn is None:  # the router sends only turns that have one
        return {"history_score": 0.0}
    if repeats(question_of(state), turn):
        return _answered(turn, 1.0, {})
    if ctx.history_threshold >= 1.0:
        return {"history_score": 0.0}
    prompt, recorded = render(
        state,
        ctx,
        "check_history",
        earlier_question=turn["standalone_question"],
        earlier_answer=turn["answer"],
        question=question_of(state),
    )
    score = yes_probability(services.judge, prompt) or 0.0
    if score < ctx.history_threshold:
        return {**recorded, "history_score": score}
    return _answered(turn, score, recorded)


def _answered(turn: Turn, score: float, recorded: Update) -> Update:
    """The turn answered by ``turn``: its answer and sources, route ``history``."""
    return {
        **recorded,
        "history_score": score,
        "route": "history",
        "answer": turn["answer"],
        "sources": list(turn.get("sources") or []),
        "confidence": turn.get("confidence"),
    }
