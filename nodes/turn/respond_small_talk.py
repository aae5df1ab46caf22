"""respond_small_talk: a short direct reply to small talk; no retrieval, web or citations."""

from __future__ import annotations

from langgraph.runtime import Runtime

from crag_core.clients.llm import complete
from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import RAGState, Update
from nodes.shared.common import reports
from nodes.shared.prompting import render


@reports(lambda u: str(u.get("answer", ""))[:60])
def respond_small_talk(state: RAGState, runtime: Runtime[Context], services: Services) -> Update:
    """Reply to a greeting, thanks or a question about the assistant in one LLM call.

    The reply streams like an answer; it is the turn's answer, with no sources or confidence,
    and never cached.
    """
    prompt, versions = render(state, context_of(runtime), "small_talk", message=state["question"])
    reply = complete(services.llm, prompt, streamed=True)
    return {"prompt_versions": versions, "answer": reply or "Hello! Ask me about your documents."}
