"""What counts as a question: printable text, bounded in length."""

from __future__ import annotations

import unicodedata

from crag_core.errors import QuestionError

MAX_QUESTION_CHARS = 4000
"""Longer input is refused: it would not fit the embedded model's context with documents."""


def check_question(text: str) -> None:
    """Refuse what ``clean_question`` would refuse, before a run starts (the CLI's early exit).

    The question is cleaned once, where the graph takes it in (``contextualize_question``);
    a caller that wants to fail fast asks here first.
    """
    clean_question(text)


def clean_question(text: str) -> str:
    """``text`` without control characters and with whitespace collapsed; refuse bad input.

    Raises ``QuestionError`` for a question that is empty once cleaned or longer than
    ``MAX_QUESTION_CHARS``.
    """
    printable = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if unicodedata.category(ch) not in ("Cc", "Cs") or ch.isspace()
    )
    question = " ".join(printable.split())
    if not question:
        raise QuestionError("The question is empty.")
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(
            f"The question is {len(question)} characters long; the limit is {MAX_QUESTION_CHARS}."
        )
    return question
