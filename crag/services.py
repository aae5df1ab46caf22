"""The one place that builds the graph's external clients, and hands them to nodes.

Nodes call ``services_for(context)``; they never construct a client. Clients are built once
per process and cached by the context fields that shape them, so every run with the same
configuration shares one LLM client (and one embedded model server), one embedding model, one
Chroma client and one web-search index.

``use_services(...)`` swaps in other clients for the current context (tests, notebooks):
it is a context variable, so concurrent runs in other threads or tasks are not affected.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from crag.knowledge_base import KnowledgeBase, ModeRetriever, Retriever
from crag.web_search import WebSearch
from graph.context import Context


@dataclass(frozen=True)
class Services:
    """The external clients a run needs."""

    llm: BaseChatModel
    retriever: Retriever
    web_search: WebSearch | None
    embeddings: Embeddings | None = None
    """Sentence embeddings for knowledge refinement (None: refinement passes documents on)."""


_override: ContextVar[Services | None] = ContextVar("crag_services", default=None)
_cache: dict[tuple[object, ...], object] = {}
_lock = threading.Lock()


@contextmanager
def use_services(services: Services) -> Iterator[Services]:
    """Run the enclosed code with ``services`` instead of the ones built from the context."""
    token = _override.set(services)
    try:
        yield services
    finally:
        _override.reset(token)


def _cached(key: tuple[object, ...], build):  # type: ignore[no-untyped-def]
    with _lock:
        if key not in _cache:
            _cache[key] = build()
        return _cache[key]


def knowledge_base(collection: str) -> KnowledgeBase:
    """The process's knowledge base for ``collection`` (Chroma under the data dir)."""
    from crag.embeddings import default_embeddings
    from crag.settings import data_dir

    return _cached(  # type: ignore[no-any-return]
        ("kb", str(data_dir()), collection),
        lambda: KnowledgeBase(data_dir() / "chroma", collection, default_embeddings),
    )


def services_for(ctx: Context) -> Services:
    """The clients for a run configured by ``ctx``."""
    override = _override.get()
    if override is not None:
        return override
    from crag.llm import build_chat_model
    from crag.web_search import build_web_search

    llm = _cached(
        (
            "llm",
            ctx.model,
            ctx.base_url,
            ctx.temperature,
            ctx.max_tokens,
            ctx.llm_timeout_s,
            ctx.llm_max_retries,
        ),
        lambda: build_chat_model(ctx),
    )
    has_tavily_key = bool(os.environ.get("TAVILY_API_KEY"))
    web = _cached(
        ("web", ctx.web_search, ctx.web_timeout_s, has_tavily_key),
        lambda: build_web_search(ctx.web_search, timeout_s=ctx.web_timeout_s),
    )
    retriever = ModeRetriever(knowledge_base(ctx.collection), ctx.retrieval_mode)
    from crag.embeddings import LazyEmbeddings

    return Services(llm=llm, retriever=retriever, web_search=web, embeddings=LazyEmbeddings())  # type: ignore[arg-type]
