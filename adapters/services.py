"""The external clients a run needs, bundled so they can be handed to nodes in one value."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from adapters.knowledge_base import Retriever
from adapters.web_search import WebSearch


@dataclass(frozen=True)
class Services:
    """The clients one run talks to; nodes receive them, they never build them."""

    llm: BaseChatModel
    retriever: Retriever
    web_search: WebSearch | None
    embeddings: Embeddings | None = None
    """Sentence embeddings for knowledge refinement (None: refinement passes documents on)."""
