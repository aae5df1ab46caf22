"""rewrite_query: turn the question into a search query (on a retry, a different one)."""

from __future__ import annotations

import re

from langgraph.runtime import Runtime

from crag_core.clients.llm import complete
from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.words import normalize
from nodes.shared.common import question_of, reports
from nodes.shared.prompting import first_line, render

_NUMBER = re.compile(r"\d+")


def usable_query(query: str, question: str, tried: list[str]) -> str:
    """``query`` if it is a search query worth running, else the question itself.

    A query is replaced by the question when it names a number the question does not (a
    guessed answer, not a query) or repeats a tried query, unless the question was itself
    tried: then the repeat stands, and the retry differs by searching past the chunks already
    rejected (see ``nodes.correction.retrieve``; why: docs/decisions.md, "Lexical guards").
    """
    seen = {normalize(q) for q in tried}
    guessed = set(_NUMBER.findall(normalize(query))) - set(_NUMBER.findall(normalize(question)))
    if query and not guessed and normalize(query) not in seen:
        return query
    return question if normalize(question) not in seen else query or question


@reports(lambda u: f"query: {u.get('rewritten_query', '')!r}")
def rewrite_query(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Write a search query for the question; on a retry, use the feedback to change it.

    The query is used for retrieval only: the question itself is what gets answered and graded.
    """
    ctx = context_of(runtime)
    question = question_of(state)
    previous = [a["query"] for a in state.get("attempts") or [] if a["query"]]
    prompt, versions = render(
        state,
        ctx,
        "rewrite_query",
        question=question,
        previous_queries="\n".join(f"- {q}" for q in previous) or "(none)",
        feedback=state.get("feedback") or "(none)",
    )
    query = first_line(complete(services.llm, prompt))
    return {"rewritten_query": usable_query(query, question, previous), "prompt_versions": versions}
