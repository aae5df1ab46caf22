"""The turn: where every question starts and every answer ends.

``contextualize_question`` (the question from the input or the newest message, the turn's
keys reset, a follow-up made standalone), ``analyze_query`` (the route: small talk, an earlier
turn's answer, one question, or parts), ``respond_small_talk``, ``answer_from_history`` and
``finalize`` (the turn's answer as an AI message). ``chat`` (the messages convention) and
``history`` (which earlier turn a follow-up repeats) are theirs.
"""

from nodes.turn.analyze_query import analyze_query
from nodes.turn.answer_from_history import answer_from_history
from nodes.turn.contextualize_question import contextualize_question
from nodes.turn.finalize import finalize
from nodes.turn.respond_small_talk import respond_small_talk

__all__ = [
    "analyze_query",
    "answer_from_history",
    "contextualize_question",
    "finalize",
    "respond_small_talk",
]
