"""Fakes the tests inject: a chat model scripted by prompt name, a retriever, web search,
embeddings, and the services bundle that carries them."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from crag_core.clients.services import Services
from crag_core.clients.table_store import TableStore
from crag_core.errors import WebSearchError
from crag_core.formats.table_rows import table_from_rows
from crag_core.schema.state import RAGState

Responder = Callable[[str, str], Any]
"""(prompt name, prompt text) -> reply: a str, a dict sent as JSON, or a float: a verdict whose
log-probabilities give P(yes) that value (the reply is "yes" from 0.5 up, else "no")."""


def _verdict(p_yes: float) -> AIMessage:
    """A one-token yes/no reply carrying log-probabilities, as llama.cpp and OpenAI send them."""
    p = min(max(p_yes, 1e-6), 1 - 1e-6)
    alternatives = [
        {"token": "yes", "logprob": math.log(p)},
        {"token": "no", "logprob": math.log(1 - p)},
    ]
    word = "yes" if p_yes >= 0.5 else "no"
    logprobs = {"content": [{"token": word, "top_logprobs": alternatives}]}
    return AIMessage(content=word, response_metadata={"logprobs": logprobs})


def tokens(text: str) -> int:
    """A deterministic token count: one token per four characters (OpenAI's rule of thumb)."""
    return math.ceil(len(text) / 4)


def usage(prompt: str, reply: str, previous: str) -> UsageMetadata:
    """What a one-slot llama.cpp server reports: the prompt's tokens, of which those it shares
    with the previous prompt from the start came from its prompt cache."""
    shared = len(os.path.commonprefix([prompt, previous]))
    return UsageMetadata(
        input_tokens=tokens(prompt),
        output_tokens=tokens(reply),
        total_tokens=tokens(prompt) + tokens(reply),
        input_token_details={"cache_read": shared // 4},
    )


class FakeChatModel(BaseChatModel):
    """Answers by prompt name (from the call's metadata) and records every call.

    Each reply carries usage metadata as a one-slot llama.cpp server reports it (``usage``).
    """

    responder: Any
    calls: list[dict[str, Any]] = []
    last_prompt: str = ""

    @property
    def _llm_type(self) -> str:
        return "fake-crag"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        prompt = (run_manager.metadata or {}).get("prompt", "") if run_manager else ""
        text = "\n".join(str(m.content) for m in messages)
        self.calls.append(
            {
                "prompt": prompt,
                "text": text,
                "kwargs": kw,
                "messages": [m.content for m in messages],
            }
        )
        reply = self.responder(prompt, text)
        message: AIMessage = (
            _verdict(reply)
            if isinstance(reply, float)
            else AIMessage(content=reply if isinstance(reply, str) else json.dumps(reply))
        )
        message.usage_metadata = usage(text, str(message.content), self.last_prompt)
        self.last_prompt = text
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        """The generator's reply, word by word (as a streaming server sends it).

        LangChain calls ``_stream`` without the run's metadata, so the prompt is not known
        here: only the generator's calls ask to be streamed, so it is taken to be "generate"
        (a wrongly streamed verdict would then get an answer for a reply, and fail its test).
        """
        [generation] = self._generate(messages, stop, _Named("generate"), **kw).generations
        self.calls[-1]["streamed"] = True
        words = str(generation.message.content).split(" ")
        for n, word in enumerate(words):
            text = word if n == len(words) - 1 else word + " "
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
            if run_manager:
                run_manager.on_llm_new_token(text, chunk=chunk)
            yield chunk
        reported = cast(AIMessage, generation.message).usage_metadata
        usage_chunk = AIMessageChunk(content="", usage_metadata=reported)
        yield ChatGenerationChunk(message=usage_chunk)  # as a server sends it: last, on its own

    def prompts_called(self) -> list[str]:
        return [c["prompt"] for c in self.calls]


class _Named:
    """Stands in for a run manager whose metadata names the prompt."""

    def __init__(self, prompt: str):
        self.metadata = {"prompt": prompt}


def make_llm(responder: Responder) -> FakeChatModel:
    return FakeChatModel(responder=responder, calls=[])


def doc(doc_id: str, text: str, score: float = 0.8, source: str | None = None) -> Document:
    return Document(
        id=doc_id,
        page_content=text,
        metadata={"id": doc_id, "source": source or f"/kb/{doc_id}.md", "score": score},
    )


def matches(metadata: dict[str, Any], where: dict[str, Any] | None) -> bool:
    """Whether ``metadata`` passes a Chroma filter (``$and``, ``$eq``, ``$ne``, ``$in``, ``$gte``,
    ``$lt``: what ``crag_core.text.filters`` writes)."""
    if not where:
        return True
    if "$and" in where:
        return all(matches(metadata, w) for w in where["$and"])
    ((key, test),) = where.items()
    ((op, value),) = test.items()
    have = metadata.get(key)
    checks = {
        "$eq": lambda: have == value,
        "$ne": lambda: have != value,
        "$in": lambda: have in value,
        "$nin": lambda: have not in value,
        "$gte": lambda: have is not None and have >= value,
        "$gt": lambda: have is not None and have > value,
        "$lte": lambda: have is not None and have <= value,
        "$lt": lambda: have is not None and have < value,
    }
    return bool(checks[op]())


class FakeRetriever:
    """Returns fixed documents for every query and records the queries."""

    def __init__(self, docs: list[Document]):
        self.docs = docs
        self.queries: list[str] = []
        self.wheres = []

    def search(self, query: str, k: int, where: dict[str, Any] | None = None) -> list[Document]:
        self.queries.append(query)
        self.wheres.append(where)
        return [d for d in self.docs if matches(d.metadata, where)][:k]

    wheres: list[dict[str, Any] | None]

    def chunks(self, ids: list[str]) -> list[Document]:
        return [d for d in self.docs if d.id in ids]

    def unfilled(self) -> str | None:
        return self.unfilled_reason

    unfilled_reason: str | None = None


class FakeWebSearch:
    name = "fake-web"

    def __init__(self, docs: list[Document] | None = None, error: str | None = None):
        self.docs = docs or []
        self.error = error
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list[Document]:
        self.queries.append(query)
        if self.error:
            raise WebSearchError(self.error)
        return self.docs[:k]


KB_DOCS = [
    doc("sb50__c0000", "Super Bowl 50: the Denver Broncos defeated the Carolina Panthers 24–10."),
    doc("sb50__c0001", "The Panthers defeated the Arizona Cardinals 49–15 earlier.", score=0.6),
]
WEB_DOCS = [
    doc(
        "web:Mona_Lisa",
        "The Mona Lisa is a portrait painting by Leonardo da Vinci.",
        source="https://en.wikipedia.org/wiki/Mona_Lisa",
    ),
]


KB_PATH = [
    "contextualize_question",
    "analyze_query",
    "check_cache",
    "choose_tool",
    "retrieve",
    "grade_documents",
    "generate",
    "validate_citations",
    "check_hallucination",
    "check_relevance",
    "choose_answer",
    "finalize",
]
"""Nodes of a run answered from the knowledge base on the first pass."""


def happy_responder(prompt: str, text: str) -> Any:
    """A model that grades, answers and judges like a good one would."""
    if prompt == "rewrite_query":
        return "Super Bowl 50 winner"
    if prompt == "grade_documents":
        return "yes" if "Broncos" in text else "no"
    if prompt == "generate":
        return "The Denver Broncos won, 24–10. [S1]"
    if prompt in ("check_hallucination", "check_relevance", "check_support", "judge_sql"):
        return "yes"
    if prompt == "check_history":  # a follow-up is a new question unless a test says otherwise
        return "no"
    raise AssertionError(f"unexpected prompt {prompt!r}")


def make_services(
    llm: BaseChatModel | None = None,
    retriever: Any = None,
    web: Any = "default",
    tables: TableStore | None = None,
) -> Services:
    """Fake services: the happy-path model, the knowledge-base and web documents above."""
    return Services(
        llm=llm or make_llm(happy_responder),
        retriever=retriever or FakeRetriever(KB_DOCS),
        web_search=FakeWebSearch(WEB_DOCS) if web == "default" else web,
        tables=tables,
    )


def make_table_store(path: Path, files: dict[str, list[list[Any]]]) -> TableStore:
    """A real table store at ``path`` holding one table per file label (header row first)."""
    store = TableStore(path)
    for label, rows in files.items():
        table = table_from_rows(Path(label).stem, "", rows)
        assert table is not None
        store.replace_document(label, label, [table])
    return store


def as_state(values: Mapping[str, Any]) -> Any:
    """``values`` as the state a node is given, the turn's or a pass's (tests build partial
    states by hand)."""
    return dict(values)


def applied(state: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` after a node's ``update``, through the graph state's own reducers.

    Node updates hold only what a node adds to an accumulating key (or an ``Overwrite``);
    LangGraph applies them. This runs one step of a graph over the state the keys belong to
    (the turn's ``RAGState``, else a pass's ``PartState``) to do the same.
    """
    from typing import get_type_hints

    from langgraph.graph import END, START, StateGraph

    from crag_core.schema.state import PartState

    turn_keys = set(get_type_hints(RAGState))
    schema: Any = RAGState if {*state, *update} <= turn_keys else PartState

    def step(state: Any) -> Any:  # a node's signature; it returns the given update
        return update

    builder = StateGraph(schema)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    return dict(builder.compile().invoke(as_state(state)))


class HashEmbeddings(Embeddings):
    """Bag-of-words hashed into 64 dims: deterministic, fast, similarity-preserving enough."""

    def _vec(self, text: str) -> list[float]:
        v = [0.0] * 64
        for word in text.lower().split():
            v[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        norm = sum(x * x for x in v) ** 0.5 or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts):
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)
