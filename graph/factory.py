"""The one place that builds the graph's clients from a run's context.

``build_graph(services=...)`` takes a factory ``Context -> Services`` and hands each node the
clients for its run; nodes never build a client. ``default_services`` is the factory used
when none is given (the exported graph, the CLI, the eval harness). It builds clients once
per process, cached by the context fields that shape them, so every run with the same
configuration shares one LLM client (and one embedded model server), one embedding model,
one Chroma client and one web-search index.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from crag_core.clients import embeddings
from crag_core.clients.answer_cache import AnswerCache
from crag_core.clients.chroma import collection_names
from crag_core.clients.knowledge_base import KnowledgeBase, ModeRetriever
from crag_core.clients.llm import build_chat_model
from crag_core.clients.services import Services
from crag_core.clients.small_talk import SmallTalk
from crag_core.clients.web_providers import build_web_search
from crag_core.runtime.deadline import until
from crag_core.runtime.model_pool import LazyChatModel
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import costed
from crag_core.settings import data_dir, settings
from crag_core.text.filters import parse_where
from nodes.shared.common import seconds_left

ServiceFactory = Callable[[Context], Services]
"""What ``build_graph`` is given: the clients for a run configured by a context."""

T = TypeVar("T")
S = TypeVar("S", bound=Mapping[str, object])
"""A node's state: the turn's (``RAGState``) or a question's pass's (``PassState``)."""

S_contra = TypeVar("S_contra", bound=Mapping[str, object], contravariant=True)

ServiceNode = Callable[[S, Runtime[Context], Services], Mapping[str, Any]]
_cache: dict[tuple[object, ...], object] = {}
_lock = threading.Lock()


def _cached(key: tuple[object, ...], build: Callable[[], T]) -> T:
    with _lock:
        if key not in _cache:
            _cache[key] = build()
        return _cache[key]  # type: ignore[return-value]


def collections() -> list[str]:
    """The knowledge-base collections (on the Chroma server if one is set, else local)."""
    env = settings()
    location = env.chroma_url or data_dir() / "chroma"
    return collection_names(location, env.service_timeout_s, chroma_token())


def chroma_token() -> str:
    """The token the Chroma server's proxy requires (``CRAG_CHROMA_TOKEN``), or ""."""
    token = settings().chroma_token
    return token.get_secret_value() if token else ""


def store_dir() -> Path:
    """Where the knowledge base's local files live.

    The Chroma store and its keyword index; with a Chroma server, this process's keyword copy
    of the server's collections.
    """
    url = settings().chroma_url
    if not url:
        return data_dir() / "chroma"
    return data_dir() / "chroma-shared" / re.sub(r"[^A-Za-z0-9.]+", "-", url.split("://")[-1])


def knowledge_base(collection: str) -> KnowledgeBase:
    """The process's knowledge base for ``collection`` (Chroma under the data dir or a server)."""
    env = settings()
    return _cached(
        ("kb", str(data_dir()), env.chroma_url, collection),
        # The model is looked up when first needed (not bound at import): loading it is slow,
        # and whoever replaces ``crag_core.clients.embeddings.default_embeddings`` must be obeyed.
        lambda: KnowledgeBase(
            store_dir(),
            collection,
            lambda: embeddings.default_embeddings(),
            server_url=env.chroma_url,
            server_token=chroma_token(),
            timeout_s=env.service_timeout_s,
        ),
    )


def chat_model_for(ctx: Context, model: str | None = None) -> BaseChatModel:
    """A new chat model configured by ``ctx``: ``model``, else ``ctx.model``.

    ``default_services`` keeps one per setting.
    """
    return build_chat_model(
        model or ctx.model,
        base_url=ctx.base_url,
        temperature=ctx.temperature,
        max_tokens=ctx.max_tokens,
        timeout_s=ctx.llm_timeout_s,
        max_retries=ctx.llm_max_retries,
    )


def _chat_model(ctx: Context, model: str) -> BaseChatModel:
    """The process's chat model ``model`` with ``ctx``'s call settings (one per setting)."""
    key = (
        "llm",
        model,
        ctx.base_url,
        ctx.temperature,
        ctx.max_tokens,
        ctx.llm_timeout_s,
        ctx.llm_max_retries,
    )
    # Built by its first call: an answer from the cache never imports the client library.
    return _cached(key, lambda: LazyChatModel(build=lambda: chat_model_for(ctx, model)))


def default_services(ctx: Context) -> Services:
    """The clients for a run configured by ``ctx``."""
    llm = _chat_model(ctx, ctx.model)
    grader = _chat_model(ctx, ctx.grader_model) if ctx.grader_model else None
    has_tavily_key = settings().tavily_api_key is not None
    web = _cached(
        ("web", ctx.web_search, ctx.web_timeout_s, has_tavily_key),
        lambda: build_web_search(ctx.web_search, timeout_s=ctx.web_timeout_s),
    )
    kb = knowledge_base(ctx.collection)
    retriever = ModeRetriever(kb, ctx.retrieval_mode, parse_where(ctx.where))
    cache = _cached(("cache", str(data_dir())), lambda: AnswerCache(data_dir() / "answers.sqlite"))
    return Services(
        llm=llm,
        retriever=retriever,
        web_search=web,
        embeddings=embeddings.LazyEmbeddings(),
        cache=cache,
        collection_version=kb.version,
        grader=grader,
        small_talk=_cached(("small_talk",), lambda: SmallTalk(embeddings.LazyEmbeddings())),
        tables=kb.tables,
        documents=kb.documents,
        document_chunks=kb.chunks_of,
    )


class GraphNode(Protocol[S_contra]):
    """A node as LangGraph calls it."""

    __name__: str

    def __call__(self, state: S_contra, runtime: Runtime[Context]) -> Mapping[str, Any]:
        """Run the node on ``state``; return the keys it changes."""
        ...


def bind(node: ServiceNode[S], services: ServiceFactory | None) -> GraphNode[S]:
    """``node`` as LangGraph calls it: ``(state, runtime)``, its clients from ``services``.

    ``None`` means ``default_services``, looked up when the node runs.
    """

    def run(state: S, runtime: Runtime[Context]) -> Mapping[str, Any]:
        factory = services or default_services
        return node(state, runtime, factory(context_of(runtime)))

    run.__name__ = run.__qualname__ = node.__name__
    run.__doc__ = node.__doc__
    return run


def out_of_time(prompts: list[str]) -> str:
    """The warning of a node whose model replies the question's deadline cut (their prompts)."""
    names = ", ".join(dict.fromkeys(prompts))
    return (
        f"The question's time ran out before the model's reply to {names}; "
        "the answer is the best checked one so far, or none."
    )


def ledgered(node: ServiceNode[S], services: ServiceFactory | None) -> GraphNode[S]:
    """``bind(node, services)`` whose update adds the run's entry to the turn's cost ledger.

    The entry (``cost``) holds the model calls the node made, their tokens and the node's
    seconds (``crag_core.clients.usage``); the graph wires every node that uses a client so.
    Its model calls keep the question's deadline (``nodes.shared.common.seconds_left``,
    ``crag_core.runtime.deadline``); a reply lost to it adds a warning naming the step.
    """
    bound = bind(node, services)

    def run(state: S, runtime: Runtime[Context]) -> Mapping[str, Any]:
        part = state.get("part_index")
        left = seconds_left(state, context_of(runtime))
        with (
            until(left) as kept,
            costed(node.__name__, part if isinstance(part, int) else None) as measured,
        ):
            update = dict(bound(state, runtime))
        if kept.missed:
            update["warnings"] = [*update.get("warnings", []), out_of_time(kept.missed)]
        (entry,) = measured
        ledger = update.get("cost")  # a turn's first node starts the ledger anew (Overwrite)
        if isinstance(ledger, Overwrite):
            update["cost"] = Overwrite([*ledger.value, entry])
        else:
            update["cost"] = [*(ledger or []), entry]
        return update

    run.__name__ = run.__qualname__ = node.__name__
    run.__doc__ = node.__doc__
    return run
