"""choose_answer: the single pass's answer, if it passed its checks and is sure enough."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import Attempt, PassState, PassUpdate, Source, Withheld
from crag_core.text.answer_text import NO_ANSWER, is_no_answer
from nodes.correction.cached import remember
from nodes.shared.answers import answer_summary, current_attempt, faulted_tables
from nodes.shared.common import no_time_to_retry, reports
from nodes.shared.confidence import confidence, gate, held_back

INGEST_HINT = (
    "Add documents (`crag ingest PATH`, the page's Documents panel or the API's indexer graph) "
    "and ask again."
)
"""What a reply says when the collection has nothing to search."""
FAULTED = (
    "The answer {answer!r} is not given: it rests only on table results the checks found "
    "fault with ({faults})."
)


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


def checked(current: Attempt) -> tuple[str, list[Source]]:
    """The pass's answer and sources if it passed both checks; else the no-answer reply."""
    if is_no_answer(current["generation"]) or not passed(current):
        return NO_ANSWER, []
    return current["generation"], current["sources"]


def unverified(state: PassState, current: Attempt, late: float | None = None) -> list[str]:
    """The warning that names the best answer no check confirmed (none: no warning).

    ``late``: the question's ``answer_seconds`` when they left no time for another retry.
    """
    # Latest first, so among equally good passes the one with the most context wins.
    best = max([current, *reversed(state.get("attempts") or [])], key=score)
    if is_no_answer(best["generation"]):
        return []
    retries = state.get("retry_count", 0)
    return [
        f"No answer passed both checks after {retries} "
        f"{'retry' if retries == 1 else 'retries'}"
        f"{f' (no time for another within answer_seconds {late:g})' if late else ''}"
        ", so none is given; the best unverified "
        f"answer was {best['generation']!r}. Last feedback: {state.get('feedback') or 'none'}"
    ]


def _summary(update: Mapping[str, Any]) -> str:
    withheld = update.get("withheld")
    if withheld:
        return f"held back {withheld['answer']!r}: confidence {withheld['confidence']:.2f}"
    return answer_summary(update)


@reports(_summary)
def choose_answer(
    state: PassState, runtime: Runtime[Context], services: Services | None = None
) -> PassUpdate:
    """The current pass's answer if it passed its checks; else the no-answer reply.

    Every answer carries its confidence (``nodes.shared.confidence``); one under ``min_confidence``
    is withheld: the answer is the no-answer reply, and a warning (and ``withheld``) keeps
    the guess. An answer that cites only table results the checks found fault with (the
    loop's, ``answers.faulted_tables``) is not given either, and a warning says what they
    found.

    An answer that no check confirmed is a guess, so it is not the answer: the answer is the
    no-answer reply, and a warning names the best unverified attempt (grounded counts most, then
    relevant) so the caller can still see it. An answer that passed is stored in the answer cache
    (``nodes.correction.cached.remember``, when ``services`` has one). When the collection had
    nothing to search, the reply says so instead of "I don't know.".
    """
    ctx = context_of(runtime)
    current = current_attempt(state)
    answer, sources = checked(current)
    given = confidence(state, answer)
    warnings: list[str] = []
    faults = faulted_tables(state) if not is_no_answer(answer) else []
    withheld: Withheld | None = None
    if faults:  # the table results it rests on did not pass their checks
        warnings = [FAULTED.format(answer=answer, faults="; ".join(faults))]
        answer, sources, given = NO_ANSWER, [], None
    elif withheld := gate(answer, given, ctx.min_confidence):
        warnings = [held_back(withheld, ctx.min_confidence)]
        answer, sources, given = NO_ANSWER, [], None
    elif is_no_answer(answer):
        retries_left = state.get("retry_count", 0) < ctx.max_retries
        late = retries_left and no_time_to_retry(state, ctx)
        warnings = unverified(state, current, ctx.answer_seconds if late else None)
    elif services is not None:
        remember(state, ctx, services, answer, sources, given)
    if state.get("unfilled"):  # nothing was searched: say so rather than "I don't know."
        warnings.append(f"{state['unfilled']} {INGEST_HINT}")
        if is_no_answer(answer):
            answer = f"{state['unfilled']} {INGEST_HINT}"
    return {
        "answer": answer,
        "sources": sources,
        "confidence": given,
        "warnings": warnings,
        "withheld": withheld,
    }
