"""check_relevance: does the generation actually answer the user's question?"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from graph.context import Context
from graph.state import RAGState
from nodes.common import context_of, is_no_answer, question_of, run_check

UNPARSABLE_WARNING = (
    "The answer-relevance check's reply could not be parsed; the answer was not verified "
    "against the question."
)
NO_ANSWER_FEEDBACK = "the documents did not contain the answer."


class RelevanceVerdict(BaseModel):
    """The answer-relevance judge's reply."""

    model_config = ConfigDict(extra="forbid")
    answers_question: Literal["yes", "no"] = Field(
        description="yes if the answer gives what the question asks for"
    )
    reason: str = Field(description="one short sentence")


def check_relevance(state: RAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Judge the answer against the original question.

    "I don't know" fails without asking the model. Unparsable judge reply: ``unknown`` plus a
    warning, and the run goes on.
    """
    ctx = context_of(runtime)
    answer = state.get("generation", "")
    if is_no_answer(answer):
        return {"answers_question": "no", "feedback": NO_ANSWER_FEEDBACK}
    return run_check(
        state,
        ctx,
        prompt="check_relevance",
        schema=RelevanceVerdict,
        verdict="answers_question",
        explanation="reason",
        failure="the answer did not answer the question ({detail}).",
        unparsable=UNPARSABLE_WARNING,
        question=question_of(state),
        answer=answer,
    )
