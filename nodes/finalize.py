"""finalize: choose the answer to return and fill the output keys."""

from __future__ import annotations

from langgraph.runtime import Runtime

from nodes.answers import NO_ANSWER, current_attempt, is_no_answer
from nodes.common import question_of
from schema.context import Context
from schema.state import Attempt, RAGState, Turn, Update


def passed(attempt: Attempt) -> bool:
    """Whether a pass cleared both checks (``unknown`` does not block)."""
    return attempt["grounded"] != "no" and attempt["answers_question"] != "no"


def score(attempt: Attempt) -> int:
    """How good a failed pass is: grounded counts most, then relevant, then saying anything."""
    return (
        2 * (attempt["grounded"] != "no")
        + 2 * (attempt["answers_question"] not in ("no", None))
        + (not is_no_answer(attempt["generation"]))
    )


def finalize(state: RAGState, runtime: Runtime[Context]) -> Update:
    """Return the current answer if it passed its checks; else say the answer is unknown.

    An answer that no check confirmed is a guess, so it is not returned as the answer: the
    reply is the no-answer reply, and a warning names the best unverified attempt (grounded
    counts most, then relevant) so the caller can still see it. The turn is appended to
    ``history``, which a thread's next turn resolves follow-ups against (its reducer keeps
    the last ``MAX_HISTORY_TURNS``).
    """
    current = current_attempt(state)
    warnings: list[str] = []
    answer, sources = current["generation"], current["sources"]
    # Latest first, so among equally good passes the one with the most context wins.
    best = max([current, *reversed(state.get("attempts") or [])], key=score)
    if is_no_answer(answer) or not passed(current):
        answer, sources = NO_ANSWER, []
    if is_no_answer(answer) and not is_no_answer(best["generation"]):
        retries = state.get("retry_count", 0)
        warnings = [
            f"No answer passed both checks after {retries} "
            f"{'retry' if retries == 1 else 'retries'}, so none is given; the best unverified "
            f"answer was {best['generation']!r}. Last feedback: {state.get('feedback') or 'none'}"
        ]
    turn = Turn(question=state["question"], standalone_question=question_of(state), answer=answer)
    return {
        "history": [turn],
        "standalone_question": question_of(state),
        "answer": answer,
        "sources": [] if is_no_answer(answer) else sources,
        "warnings": warnings,
        "retry_count": state.get("retry_count", 0),
        "web_search_used": bool(state.get("web_search_used")),
        "prompt_versions": {},  # nothing new: present in the output even if no prompt ran
    }
