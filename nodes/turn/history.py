"""A follow-up an earlier turn of the thread already answered: which turn, and whether it did."""

from __future__ import annotations

from crag_core.clients.llm import yes_probability
from crag_core.clients.services import Services
from crag_core.schema.context import Context
from crag_core.schema.state import RAGState, Turn, Update
from crag_core.text.answer_text import is_no_answer
from crag_core.text.words import content_words
from nodes.shared.common import question_of
from nodes.shared.prompting import render


def _words(text: str) -> set[str]:
    return set(content_words(text))


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


def answered_earlier(state: RAGState, ctx: Context, services: Services) -> Update:
    """The ``history`` route's keys when an earlier turn's answer answers this question.

    A question that repeats the earlier one (the follow-up rewrite of "Who won it, again?")
    is answered by it, with no call. Otherwise, when ``history_threshold`` is below 1, one
    yes/no call asks the judge, and a P(yes) at or above the threshold is an answer. Then the
    update names the turn (``earlier_turn``) and its score; else it is empty (or holds only
    the judge's score and prompt version), and the question takes its single pass.
    """
    turn = earlier_answer(state)
    if turn is None:
        return {}
    if repeats(question_of(state), turn):
        return {"route": "history", "earlier_turn": turn, "history_score": 1.0}
    if ctx.history_threshold >= 1.0:
        return {}
    prompt, versions = render(
        state,
        ctx,
        "check_history",
        earlier_question=turn["standalone_question"],
        earlier_answer=turn["answer"],
        question=question_of(state),
    )
    score = yes_probability(services.judge, prompt) or 0.0
    if score < ctx.history_threshold:
        return {"prompt_versions": versions, "history_score": score}
    return {
        "prompt_versions": versions,
        "route": "history",
        "earlier_turn": turn,
        "history_score": score,
    }
