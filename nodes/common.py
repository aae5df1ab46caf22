"""Small helpers shared by several nodes."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar, cast

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

import prompts
from adapters.citations import citation_keys
from adapters.documents import doc_id, doc_source, format_documents, normalize
from adapters.llm import yes_probability
from schema.context import Context
from schema.state import Attempt, RAGState, Source, Update, Verdict

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


def render(
    state: RAGState, ctx: Context, name: str, **values: str
) -> tuple[prompts.RenderedPrompt, Update]:
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
    return rendered, Update(prompt_versions={rendered.name: rendered.version})


def render_on_evidence(
    state: RAGState, ctx: Context, name: str, docs: list[Document], **values: str
) -> tuple[prompts.RenderedPrompt, Update]:
    """Prompt ``name`` as a second message after the evidence message (documents, question).

    Every call of a pass that reads documents starts with the same evidence message, so the
    model server processes it once and each later call adds only its short task (llama.cpp's
    prompt cache; OpenAI caches long shared prefixes too).
    """
    evidence, _ = render(
        state,
        ctx,
        "evidence",
        documents=format_documents(docs, citation_keys(len(docs))),
        question=question_of(state),
    )
    task, _ = render(state, ctx, name, **values)
    recorded = Update(prompt_versions={evidence.name: evidence.version, task.name: task.version})
    metadata = {**task.metadata, "evidence_version": evidence.version}
    messages = [*evidence.messages, *task.messages]
    return replace(task, messages=messages, metadata=metadata), recorded


def score_on_evidence(
    state: RAGState,
    ctx: Context,
    llm: BaseChatModel,
    name: str,
    docs: list[Document],
    **values: str,
) -> tuple[float | None, Update]:
    """The yes/no prompt ``name``'s P(yes) on ``docs``, plus the state update recording it."""
    prompt, recorded = render_on_evidence(state, ctx, name, docs, **values)
    return yes_probability(llm, prompt), recorded


def context_documents(state: RAGState) -> list[Document]:
    """The documents an answer is generated from: the evidence the evaluator accepted.

    Without an evaluator (the naive pipeline, which never grades) every retrieved document.
    """
    if "relevant_documents" in state:
        return list(state["relevant_documents"])
    return list(state.get("documents") or [])


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
        query=state.get("rewritten_query") or question_of(state),
        generation=state.get("generation", ""),
        sources=sources_of([d for d in context_documents(state) if doc_id(d) in cited]),
        grounded=grounded,
        answers_question=state.get("answers_question") if grounded != "no" else None,
    )


NodeT = TypeVar("NodeT", bound=Callable[..., Mapping[str, Any]])


def reports(describe: Callable[[Mapping[str, Any]], str]) -> Callable[[NodeT], NodeT]:
    """Make a node tell whoever streams the run what it did, in one line.

    After the node returns, ``describe(update)`` is written to the run's custom stream
    (``stream_mode="custom"``) as ``{"node": name, "summary": line}``, so the CLI, the API
    server and any UI print the same line without knowing the node's keys.
    """

    def decorate(node: NodeT) -> NodeT:
        def run(state: RAGState, runtime: Runtime[Context], *args: Any, **kwargs: Any) -> Any:
            update = node(state, runtime, *args, **kwargs)
            writer = getattr(runtime, "stream_writer", None)
            if writer is not None:
                writer({"node": node.__name__, "summary": describe(update)})
            return update

        return cast(NodeT, functools.update_wrapper(run, node))

    return decorate
