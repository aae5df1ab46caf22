"""The knowledge base: a Chroma collection on disk holding embedded chunks.

Chunks are stored with ids ``<doc_id>__c0000`` and metadata ``doc_id``, ``source``,
``chunk``, ``chunks`` (how many the document has) and ``content_hash`` (of the whole file),
which is what makes ingestion idempotent: an unchanged file is skipped, a changed one replaces
its chunks. Embeddings are computed by crag and passed in, never by Chroma (whose default
embedding function would try to download a model).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from crag.errors import KnowledgeBaseError


class Retriever(Protocol):
    """What the graph needs from a knowledge base."""

    def search(self, query: str, k: int) -> list[Document]:
        """Return up to ``k`` documents, most similar first."""
        ...


def chunk_id(doc_id: str, index: int) -> str:
    """The stable id of chunk ``index`` of document ``doc_id``."""
    return f"{doc_id}__c{index:04d}"


@cache
def _client(path: str) -> Any:
    import chromadb
    from chromadb.config import Settings

    try:
        Path(path).mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=path, settings=Settings(anonymized_telemetry=False))
    except Exception as exc:  # permission errors, a corrupt store, ...
        raise KnowledgeBaseError(f"Cannot open the vector store at {path}: {exc}") from exc


class KnowledgeBase:
    """One Chroma collection plus the embedding model that fills and queries it."""

    def __init__(
        self,
        store_dir: Path,
        collection: str,
        embeddings: Embeddings | Callable[[], Embeddings],
    ):
        if len(collection) < 3 or not collection.replace("-", "").replace("_", "").isalnum():
            raise KnowledgeBaseError(
                f"Collection name {collection!r} is invalid: use 3+ letters, digits, '-' or '_'."
            )
        self.name = collection
        # A factory is called on first use: counting or opening the store needs no model.
        self._embeddings = embeddings
        self._store_dir = str(store_dir)
        self._collection: Any = None

    @property
    def embeddings(self) -> Embeddings:
        """The embedding model (loaded on first use when given as a factory)."""
        if not isinstance(self._embeddings, Embeddings):
            self._embeddings = self._embeddings()
        return self._embeddings

    @property
    def collection(self) -> Any:
        """The Chroma collection, created on first use (cosine distance)."""
        if self._collection is None:
            try:
                self._collection = _client(self._store_dir).get_or_create_collection(
                    self.name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
                )
            except KnowledgeBaseError:
                raise
            except Exception as exc:
                raise KnowledgeBaseError(f"Cannot open collection {self.name!r}: {exc}") from exc
        return self._collection

    def count(self) -> int:
        """Number of chunks stored."""
        return int(self.collection.count())

    def search(self, query: str, k: int) -> list[Document]:
        """Dense search: the ``k`` chunks closest to ``query``."""
        if self.count() == 0:
            return []
        result = self.collection.query(
            query_embeddings=[self.embeddings.embed_query(query)],
            n_results=k,
            include=["documents", "metadatas", "distances"],
        )
        docs = []
        rows = zip(
            result["ids"][0],
            result["documents"][0],
            result["metadatas"][0],
            result["distances"][0],
            strict=True,
        )
        for cid, text, meta, dist in rows:
            metadata = dict(meta or {}) | {"id": cid, "score": round(1.0 - float(dist), 4)}
            docs.append(Document(id=cid, page_content=text or "", metadata=metadata))
        return docs

    def stored_hash(self, doc_id: str) -> str | None:
        """``content_hash`` of a fully stored document, or None if absent or incomplete."""
        got = self.collection.get(where={"doc_id": doc_id}, include=["metadatas"])
        metas = got["metadatas"] or []
        if not metas:
            return None
        hashes = {m.get("content_hash") for m in metas}
        expected = metas[0].get("chunks")
        if len(hashes) != 1 or expected != len(metas):
            return None  # a partial or mixed write: treat as absent so it is rewritten
        return str(hashes.pop())

    def replace_document(
        self, doc_id: str, source: str, content_hash: str, chunks: list[str]
    ) -> None:
        """Store ``chunks`` as document ``doc_id``, replacing whatever it had before."""
        ids = [chunk_id(doc_id, i) for i in range(len(chunks))]
        metadatas: list[dict[str, Any]] = [
            {
                "doc_id": doc_id,
                "source": source,
                "chunk": i,
                "chunks": len(chunks),
                "content_hash": content_hash,
            }
            for i in range(len(chunks))
        ]
        vectors = self.embeddings.embed_documents(chunks)
        self.collection.upsert(ids=ids, embeddings=vectors, documents=chunks, metadatas=metadatas)
        current = set(ids)
        stored = self.collection.get(where={"doc_id": doc_id}, include=[])["ids"]
        stale = [cid for cid in stored if cid not in current]
        if stale:
            self.collection.delete(ids=stale)
