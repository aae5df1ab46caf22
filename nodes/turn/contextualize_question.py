"""contextualize_question: start a turn; resolve a follow-up against the thread's history."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from crag_core.clients.llm import complete
from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import RAGState, Turn, turn_reset
from crag_core.text.query_analysis import is_small_talk
from crag_core.text.questions import clean_question
from nodes.shared.common import reports
from nodes.shared.prompting import first_line, render
from nodes.turn.chat import asked, earlier_turns

HISTORY_TURNS_IN_PROMPT = 3
"""How many of the latest turns the rewrite sees (older turns rarely hold the referent)."""

MAX_ANSWER_CHARS_IN_PROMPT = 400


def format_history(turns: list[Turn]) -> str:
    """The latest turns as a plain transcript for the prompt."""
    lines = []
    for turn in turns[-HISTORY_TURNS_IN_PROMPT:]:
        answer = turn["answer"].strip()[:MAX_ANSWER_CHARS_IN_PROMPT]
        lines += [f"User: {turn['standalone_question']}", f"Assistant: {answer}"]
    return "\n".join(lines)


@reports(lambda u: f"question: {u.get('standalone_question', '')!r}")
def contextualize_question(
    state: RAGState, runtime: Runtime[Context], services: Services
) -> dict[str, Any]:
    """Reset the per-turn keys and write the standalone question for this turn.

    The question is ``question``, or the newest message when it is the user's (see
    ``nodes.turn.chat``); earlier messages are the history when the thread has none.

    (Typed as a plain dict: the reset holds ``Overwrite`` values for the keys with reducers.)

    Whether the message is small talk is judged here, once (``small_talk``): a phrase the
    rules list, or a message every clause of which is nearer small-talk examples than questions
    (``crag_core.clients.small_talk``), judged on the message as asked. A thread's first turn
    (no history) needs no LLM call: the question is already standalone; nor does small talk
    ("thanks!"), which ``analyze_query`` routes past retrieval.
    Control characters are removed; an empty or overlong question fails the run with a
    ``QuestionError`` naming the problem.
    """
    asked_text, as_message = asked(state)
    question = clean_question(asked_text)
    chat = is_small_talk(question) or bool(
        services.small_talk and services.small_talk.is_small_talk(question)
    )
    start = {**turn_reset(), "question": question, "small_talk": chat, "asked_at": time.time()}
    history = state.get("history") or []
    if not history and as_message:  # a caller that keeps the conversation itself
        history = earlier_turns(list(state.get("messages") or [])[:-1])
        start["history"] = history
    if not history or chat:  # small talk needs no rewrite either
        return {**start, "standalone_question": question}
    ctx = context_of(runtime)
    turn = RAGState(question=question)  # a new turn: no retries, no web, no versions yet
    prompt, versions = render(
        turn, ctx, "contextualize_question", history=format_history(history), question=question
    )
    standalone = first_line(complete(services.llm, prompt)) or question
    return {**start, "prompt_versions": versions, "standalone_question": standalone}
