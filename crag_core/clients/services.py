"""The external clients a run needs, bundled so they can be handed to nodes in one value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from crag_core.clients.answer_cache import AnswerCache
from crag_core.clients.knowledge_base import Retriever
from crag_core.clients.small_talk import SmallTalk
from crag_core.clients.table_store import TableStore
from crag_core.clients.web_providers import WebSearch


@dataclass(frozen=True)
class Services:
    """The clients one run talks to; nodes receive them, they never build them."""

    llm: BaseChatModel
    retriever: Retriever
    web_search: WebSearch | None
    embeddings: Embeddings | None = None
    """Sentence embeddings for knowledge refinement and the answer cache (None: neither)."""
    cache: AnswerCache | None = None
    """Stored answers (None: no answer cache)."""
    collection_version: Callable[[], int] | None = None
    """The knowledge base's current version: stored answers of older versions are not used."""
    grader: BaseChatModel | None = None
    """The model of the graders and checks (None: ``llm``)."""
    small_talk: SmallTalk | None = None
    """Recognises small talk the rules do not list, by its examples (None: the rules alone)."""
    tables: TableStore | None = None
    """The collection's tables, for questions SQL answers (None: text search only)."""
    documents: Callable[[], list[dict[str, Any]]] | None = None
    """The collection's documents, one entry each (stored metadata: ``label``, ``type``,
    ``modified``…), for questions about the collection (None: not answered)."""
    document_chunks: Callable[[str], list[Document]] | None = None
    """One document's chunks in order, by its id, for reading it whole (None: not read)."""

    @property
    def judge(self) -> BaseChatModel:
        """The model that grades documents and checks answers."""
        return self.grader or self.llm
