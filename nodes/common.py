"""Small helpers shared by several nodes."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime
from pydantic import BaseModel

import prompts
from crag.documents import dedupe, doc_id, doc_source, normalize
from crag.llm import judge
from crag.services import services_for
from graph.context import Context
from graph.state import Attempt, RAGState, Source, Verdict

NO_ANSWER = "I don't know."
"""What the generator says when the documents do not contain the answer."""


MAX_LINE_CHARS = 300
"""Bound on one-line model outputs (search queries, standalone questions)."""


_LABEL = re.compile(
    r"^\s*(?:(?:search|rewritten|standalone)\s+)?(?:query|question)\s*:\s*", flags=re.I
)


def question_of(state: RAGState) -> str:
    """The question this turn answers: the standalone rewrite of a follow-up, else as asked."""
    return state.get("standalone_question") or state["question"]


def first_line(text: str) -> str:
    """First non-empty line of a reply, without a ``Label:`` prefix or quotes, bounded."""
    for line in text.splitlines():
        line = _LABEL.sub("", line).strip().strip("\"'`")
        if line:
            return line[:MAX_LINE_CHARS]
    return ""


def context_of(runtime: Runtime[Context] | None) -> Context:
    """The run's context (defaults when the caller passed none)."""
    ctx = getattr(runtime, "context", None)
    if ctx is None:
        return Context()
    return ctx if isinstance(ctx, Context) else Context(**ctx)


def render(
    state: RAGState, ctx: Context, name: str, **values: str
) -> tuple[prompts.RenderedPrompt, dict[str, Any]]:
    """Render prompt ``name`` at its configured version, plus the state update recording it.

    The prompt carries the trace metadata of its LLM call: the configuration, and where in the
    run the call happens (retry count, whether web results are in play).
    """
    rendered = prompts.load(name, ctx.prompt_version(name)).render(**values)
    rendered = replace(
        rendered,
        metadata=ctx.trace_metadata()
        | {
            "retry_count": state.get("retry_count", 0),
            "web_search_used": bool(state.get("web_search_used")),
        },
    )
    versions = dict(state.get("prompt_versions") or {}) | {rendered.name: rendered.version}
    return rendered, {"prompt_versions": versions}


def run_check(
    state: RAGState,
    ctx: Context,
    *,
    prompt: str,
    schema: type[BaseModel],
    verdict: str,
    explanation: str,
    failure: str,
    unparsable: str,
    **values: str,
) -> dict[str, Any]:
    """Ask a yes/no judge and turn its reply into a state update.

    ``schema`` has a ``yes``/``no`` field ``verdict`` (also the state key written) and a text
    field ``explanation``. On "no", ``failure`` (with ``{detail}``) becomes the feedback for the
    retry. An unparsable reply gives ``unknown`` plus the ``unparsable`` warning: the run goes
    on rather than crash or loop on a parser failure.
    """
    rendered, recorded = render(state, ctx, prompt, **values)
    reply = judge(services_for(ctx).llm, rendered, schema)
    if reply is None:
        return {verdict: "unknown", "warnings": with_warning(state, unparsable), **recorded}
    update: dict[str, Any] = {verdict: getattr(reply, verdict), **recorded}
    if update[verdict] == "no":
        detail = str(getattr(reply, explanation)).strip()[:300] or "no reason given"
        update["feedback"] = failure.format(detail=detail)
    return update


def with_warning(state: RAGState, warning: str) -> list[str]:
    """The state's warnings plus ``warning`` (once)."""
    warnings = list(state.get("warnings") or [])
    return warnings if warning in warnings else [*warnings, warning]


def gathered_documents(state: RAGState) -> list[Document]:
    """The pass's knowledge: kept knowledge-base documents, then web results."""
    return dedupe(
        list(state.get("relevant_documents") or []) + list(state.get("web_results") or [])
    )


def context_documents(state: RAGState) -> list[Document]:
    """The documents an answer is generated from: the refined knowledge once refined."""
    refined = state.get("refined_documents")
    return list(refined) if refined is not None else gathered_documents(state)


def sources_of(docs: list[Document]) -> list[Source]:
    """Sources (id and origin) of ``docs``."""
    return [Source(id=doc_id(d), source=doc_source(d)) for d in docs]


def is_no_answer(text: str) -> bool:
    """Whether a generation declines to answer."""
    return not text.strip() or normalize(text).startswith(normalize(NO_ANSWER))


def current_attempt(state: RAGState) -> Attempt:
    """The pass that just ran, as an ``Attempt``."""
    grounded: Verdict = state.get("grounded", "unknown")
    cited = set(state.get("citations") or [])
    return Attempt(
        query=state.get("rewritten_query", ""),
        generation=state.get("generation", ""),
        sources=sources_of([d for d in context_documents(state) if doc_id(d) in cited]),
        grounded=grounded,
        answers_question=state.get("answers_question") if grounded != "no" else None,
    )
