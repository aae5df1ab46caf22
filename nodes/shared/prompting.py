"""Prompting for nodes: render a prompt at its configured version, on the pass's evidence.

Every call of a pass that reads documents starts with the same text (the documents, then the
note that they are data), so the model server processes it once per pass (see
docs/architecture.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel

import prompts
from crag_core.clients.llm import yes_probability
from crag_core.schema.context import Context
from crag_core.text.citations import citation_keys
from crag_core.text.documents import format_documents
from nodes.shared.common import question_of

MAX_LINE_CHARS = 300
"""Bound on one-line model outputs (search queries, standalone questions)."""


_LABEL = re.compile(
    r"^\s*(?:(?:search|rewritten|standalone)\s+)?(?:query|question)\s*:\s*", flags=re.I
)


def first_line(text: str) -> str:
    """First non-empty line of a reply, without a ``Label:`` prefix or quotes, bounded."""
    for line in text.splitlines():
        line = _LABEL.sub("", line).strip().strip("\"'`")
        if line:
            return line[:MAX_LINE_CHARS]
    return ""


def render(
    state: Mapping[str, Any], ctx: Context, name: str, **values: str
) -> tuple[prompts.RenderedPrompt, dict[str, str]]:
    """Render prompt ``name`` at its configured version, plus its ``prompt_versions`` entry.

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
    return rendered, {rendered.name: rendered.version}


def render_on_evidence(
    state: Mapping[str, Any], ctx: Context, name: str, docs: list[Document], **values: str
) -> tuple[prompts.RenderedPrompt, dict[str, str]]:
    """Prompt ``name`` on the pass's documents, starting with the pass's shared prefix.

    Every call of a pass that reads documents starts with the same text: the documents and the
    note that they are data. The model server processes it once and each later call adds only
    its own task (llama.cpp's prompt cache; OpenAI caches long shared prefixes too). A prompt
    that takes ``documents`` and ``question`` itself is one message that starts with that text
    and asks its question last; any other follows the evidence message (documents, note,
    question) as a second message.
    """
    documents = format_documents(docs, citation_keys(len(docs)))
    version = ctx.prompt_version(name)
    if {"documents", "question"} <= prompts.load(name, version).variables:
        return render(state, ctx, name, documents=documents, question=question_of(state), **values)
    evidence, _ = render(state, ctx, "evidence", documents=documents, question=question_of(state))
    task, _ = render(state, ctx, name, **values)
    versions = {evidence.name: evidence.version, task.name: task.version}
    metadata = {**task.metadata, "evidence_version": evidence.version}
    messages = [*evidence.messages, *task.messages]
    return replace(task, messages=messages, metadata=metadata), versions


def score_on_evidence(
    state: Mapping[str, Any],
    ctx: Context,
    llm: BaseChatModel,
    name: str,
    docs: list[Document],
    **values: str,
) -> tuple[float | None, dict[str, str]]:
    """The yes/no prompt ``name``'s P(yes) on ``docs``, plus its ``prompt_versions`` entries."""
    prompt, versions = render_on_evidence(state, ctx, name, docs, **values)
    return yes_probability(llm, prompt), versions
