"""check_relevance: do the documents state the generation as the answer to the question?"""

from __future__ import annotations

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.answer_text import is_no_answer
from crag_core.text.answer_type import choice, names_one
from nodes.shared.common import answer_documents, question_of, reports
from nodes.shared.prompting import score_on_evidence

UNPARSABLE_WARNING = (
    "The answer check's reply was neither yes nor no; the answer was not verified against "
    "the question."
)
NO_ANSWER_FEEDBACK = "the documents did not contain the answer."


@reports(lambda u: f"answers the question: {u.get('answers_question')}")
def check_relevance(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Judge whether the documents give the answer as the answer to *this* question.

    A span copied from a related document passes the grounding check yet may answer another
    question (a city named in another city's history); this check reads the documents, the
    question and the answer together, and its score must reach ``answer_threshold`` (0 turns
    the check off: no call). It reuses the pass's evidence message. "I don't know" fails
    without asking the model; an unusable reply gives ``unknown`` plus a warning, and the run
    goes on. So does, whatever ``answer_threshold``, an answer to a choice that names neither
    of its alternatives ("442" to "Which has more instances: diabetes or iris?",
    ``crag_core.text.answer_type.names_one``): the feedback names the two.
    """
    ctx = context_of(runtime)
    answer = state.get("generation", "")
    if is_no_answer(answer):
        return {"answers_question": "no", "feedback": NO_ANSWER_FEEDBACK}
    pair = choice(question_of(state))
    if pair is not None and not names_one(answer, pair):
        return {
            "answers_question": "no",
            "feedback": f"the question asks which of {pair[0]!r} or {pair[1]!r}; {answer!r} "
            "names neither.",
        }
    if ctx.answer_threshold <= 0:  # every score passes: the check is off, nothing to ask
        return {"answers_question": "yes"}
    score, versions = score_on_evidence(
        state, ctx, services.judge, "check_relevance", answer_documents(state), answer=answer
    )
    if score is None:
        return {
            "prompt_versions": versions,
            "answers_question": "unknown",
            "warnings": [UNPARSABLE_WARNING],
        }
    if score >= ctx.answer_threshold:
        return {
            "prompt_versions": versions,
            "answers_question": "yes",
            "answer_score": round(score, 4),
        }
    return {
        "prompt_versions": versions,
        "answers_question": "no",
        "answer_score": round(score, 4),
        "feedback": f"the documents do not state {answer!r} as the answer to the question.",
    }
