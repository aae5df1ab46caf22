"""check_history: answer a follow-up from the thread when an earlier turn already answered it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from adapters.keyword_index import STOPWORDS
from adapters.llm import yes_probability
from adapters.services import Services
from nodes.answers import is_no_answer
from nodes.common import question_of, reports
from nodes.prompting import render
from schema.context import Context, context_of
from schema.state import RAGState, Turn, Update


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


def describe(update: Mapping[str, Any]) -> str:
    """Whether the thread answered it, with the judge's score."""
    found = "answered earlier" if update.get("route") == "history" else "not answered earlier"
    return f"{found} (score {update.get('history_score', 0.0):.2f})"


@reports(describe)
def check_history(state: RAGState, runtime: Runtime[Context], services: Services) -> Update:
    """One yes/no call: does the earlier turn's answer already answer this follow-up?

    At or above ``history_threshold`` the turn's route is ``history``: the earlier answer is
    this turn's, with the earlier turn's sources, and nothing is retrieved. Below it (or an
    unreadable reply) the question takes its single pass.
    """
    ctx = context_of(runtime)
    turn = earlier_answer(state)
    if turn is None:  # the router sends only turns that have one
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
    return {
        **recorded,
        "history_score": score,
        "route": "history",
        "answer": turn["answer"],
        "sources": list(turn.get("sources") or []),
    }
