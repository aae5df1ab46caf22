"""The parts of a question with several: what each part's pass starts from and gives back.

``analyze_query`` splits the question; the graph fans the parts out with ``Send`` to
``answer_part`` (a whole retrieve-grade-web-generate-check pass per part, see
``graph.graph.build_part_graph``); ``collect_part`` ends each pass with its ``Part``; the
``parts`` reducer gathers them and ``combine_parts`` answers every part in order, citing per
part.
"""

from __future__ import annotations

import math

from langgraph.runtime import Runtime

from crag_core.schema.context import Context
from crag_core.schema.state import Part, PartInput, PartOutput, PassState, RAGState, Source
from crag_core.text.answer_text import NO_ANSWER, STEPS_HEADING, is_no_answer
from crag_core.text.query_analysis import needs_context, subject_of, with_answer, with_subject
from nodes.shared.common import no_time_for_another, question_of, reports


def part_input(state: RAGState, index: int) -> PartInput:
    """What part ``index``'s pass answers.

    A later part that leans on the subject the parts share is asked with it named ("What was
    the final score?" -> "What was the final score of Super Bowl 50?", the first part naming
    Super Bowl 50); one whose subject cannot be told (or the first step of a nested question:
    "In which chapel are popes elected?") is answered as part of the whole question. In a
    ``multi_step`` turn a later part is asked with the earlier part's answer in place of its
    pronoun or ``#1`` ("When was he born?" -> "When was James Cameron born?").
    """
    parts = state["subquestions"]
    part = query = parts[index]
    earlier = sorted(state.get("parts") or [], key=lambda p: p["index"])
    chain = state.get("route") == "multi_step"
    subject = subject_of(parts[0]) if index > 0 and not chain else None
    if chain and index > 0 and earlier:
        part = query = with_answer(part, earlier[-1]["answer"])
    elif subject and needs_context(part) and not subject_of(part):
        query = with_subject(part, subject)
    elif (index > 0 or chain) and needs_context(part):
        query = f"{part} (asked as part of: {question_of(state)})"
    asked = PartInput(question=part, standalone_question=query, part_index=index)
    if "asked_at" in state:
        asked["asked_at"] = state["asked_at"]
    return asked


def next_step(state: RAGState) -> int | None:
    """The index of the ``multi_step`` part to answer next, or None when the chain is done.

    The chain stops at a part nobody could answer: a later part would be asked about nothing.
    """
    parts = state.get("parts") or []
    if len(parts) >= len(state.get("subquestions") or []):
        return None
    if parts and is_no_answer(max(parts, key=lambda p: p["index"])["answer"]):
        return None
    return len(parts)


def no_time_for_step(state: RAGState, ctx: Context) -> bool:
    """Whether the chain's next step would end past ``answer_seconds`` at the pace so far.

    The pace is the mean of the passes the question made: its steps so far, and a nested
    question's whole pass before them. A step is not begun that would end late: its model
    calls would be cut at the deadline (``crag_core.runtime.deadline``) and it could only
    say "I don't know".
    """
    passes = len(state.get("parts") or []) + int(bool(state.get("nested")))
    return no_time_for_another(state, ctx, passes)


NO_TIME_FOR_STEP = (
    "Step {step} of {steps} was not begun: at the pace of the passes so far it would end past "
    "answer_seconds {seconds:g}."
)


def chain_cut(state: RAGState, ctx: Context) -> list[str]:
    """The warning of a chain its time stopped (its last step answered, the next not begun)."""
    if state.get("route") != "multi_step" or not state.get("parts"):
        return []
    index = next_step(state)  # None: every step ran, or one nobody could answer ended it
    if index is None:
        return []
    steps = len(state.get("subquestions") or [])
    return [NO_TIME_FOR_STEP.format(step=index + 1, steps=steps, seconds=ctx.answer_seconds)]


@reports(lambda u: f"part {u['parts'][0]['index'] + 1}: {u['parts'][0]['answer']!r}")
def collect_part(state: PassState, runtime: Runtime[Context]) -> PartOutput:
    """End a part's pass: its answer and sources, as one ``Part`` for the whole question."""
    return {
        "parts": [
            Part(
                index=state.get("part_index", 0),
                question=state["question"],
                query=question_of(state),
                answer=state.get("answer", NO_ANSWER),
                sources=list(state.get("sources") or []),
                web_search_used=bool(state.get("web_search_used")),
                retry_count=state.get("retry_count", 0),
                confidence=state.get("confidence"),
            )
        ]
    }


def combined(state: RAGState) -> tuple[str, list[Source]]:
    """One answer for every part, in the question's order, each line citing its sources.

    Lines read "<part> <answer> [n, m]" where n, m number the combined sources (as the reply
    message lists them); a later step reads as it was asked, with the earlier answer in it. A
    part whose pass did not run (a chain stopped early) or found nothing is said to be
    unknown. When no part has an answer, the answer is the no-answer reply.

    A nested question was asked once: its answer is the last step's, first, citing what every
    step found; the steps follow under ``STEPS_HEADING``, so the reply starts with
    what was asked and still shows how it was found.
    """
    lines, sources, answered = _lines(state)
    if state.get("nested"):
        last = len(state.get("subquestions") or []) - 1
        answer = _answer_of(state, last)
        if answer is None:
            return NO_ANSWER, []
        numbers = ", ".join(str(n) for n in range(1, len(sources) + 1))
        cited = f" [{numbers}]" if sources else ""
        return f"{answer}{cited}{STEPS_HEADING}" + "\n".join(lines), sources
    return ("\n".join(lines), sources) if any(answered) else (NO_ANSWER, [])


def combined_confidence(state: RAGState, answer: str) -> float | None:
    """The confidence of ``combined``'s answer: None when it is "I don't know".

    A nested question's answer needs every step right (their product); a reply to several
    parts is as sure as its least sure answered part.
    """
    if is_no_answer(answer):
        return None
    answered = [
        p.get("confidence")
        for p in state.get("parts") or []
        if not is_no_answer(p["answer"]) and p.get("confidence") is not None
    ]
    if not answered:
        return None
    if state.get("nested"):
        return round(math.prod(c for c in answered if c is not None), 3)
    return min(c for c in answered if c is not None)


def _answer_of(state: RAGState, index: int) -> str | None:
    """Part ``index``'s answer, or None when its pass did not run or found nothing."""
    part = next((p for p in state.get("parts") or [] if p["index"] == index), None)
    return None if part is None or is_no_answer(part["answer"]) else part["answer"].strip()


def _lines(state: RAGState) -> tuple[list[str], list[Source], list[bool]]:
    """Each part's line, the sources they cite (numbered in order), and which were answered."""
    done = {p["index"]: p for p in state.get("parts") or []}
    sources: list[Source] = []
    lines, answered = [], []
    for index, question in enumerate(state.get("subquestions") or []):
        part = done.get(index)
        if part is None or is_no_answer(part["answer"]):
            lines.append(f"{part['question'] if part else question} {NO_ANSWER}")
            answered.append(False)
            continue
        numbers = []
        for source in part["sources"]:
            if source not in sources:
                sources.append(source)
            numbers.append(str(sources.index(source) + 1))
        cited = f" [{', '.join(numbers)}]" if numbers else ""
        lines.append(f"{part['question']} {part['answer'].strip()}{cited}")
        answered.append(True)
    return lines, sources, answered
