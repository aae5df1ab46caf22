"""The knowledge base: a Chroma collection on disk holding embedded chunks.

Dense search is Chroma (cosine, MiniLM embeddings computed by crag); keyword search is BM25 in
SQLite FTS5 (``adapters.keyword_index``) over the same chunk ids; hybrid fuses the two rankings by
Reciprocal Rank Fusion (k=60). Every hit carries its cosine similarity to the query as
``score`` (keyword-only hits too, from their stored embedding), so one similarity floor applies
whatever found the chunk; keyword hits also carry ``bm25`` and ``keyword_rank`` (1 = best).

Chunks are stored with ids ``<doc_id>__c0000`` and metadata ``doc_id``, ``source``,
``chunk``, ``chunks`` (how many the document has), ``ingested`` (epoch seconds) and
``content_hash`` (of the whole file),
which is what makes ingestion idempotent: an unchanged file is skipped, a changed one replaces
its chunks. Embeddings are computed by crag and passed in, never by Chroma (whose default
embedding function would try to download a model).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from adapters.documents import reciprocal_rank_fusion
from adapters.errors import ConfigError, KnowledgeBaseError
from adapters.keyword_index import KeywordIndex

RetrievalMode = Literal["dense", "keyword", "hybrid"]
RRF_K = 60
HYBRID_DEPTH = 10
"""Candidates each retriever contributes to the hybrid fusion (at least; ``k`` if larger)."""


class Retriever(Protocol):
    """What the graph needs from a knowledge base."""

    def search(self, query: str, k: int) -> list[Document]:
        """Return up to ``k`` documents, most similar first."""
        ...


Where = dict[str, Any]
"""A Chroma metadata filter, e.g. ``{"type": "pdf"}`` (see ``adapters.filters``)."""


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


def collection_names(store_dir: Path) -> list[str]:
    """The collections stored under ``store_dir``."""
    if not Path(store_dir).exists():
        return []
    return sorted(c.name for c in _client(str(store_dir)).list_collections())


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
        keyword_path = Path(store_dir) / "keyword" / f"{collection}.sqlite3"
        self.keywords = KeywordIndex(keyword_path, collection)

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

    @contextmanager
    def write_lock(self, timeout_s: float = 900) -> Iterator[None]:
        """Hold the collection's inter-process write lock (one writer process at a time).

        Chroma's local store is not safe for writers in several processes at once; ingests
        of the same collection take turns. Raises ``KnowledgeBaseError`` after ``timeout_s``.
        """
        from filelock import FileLock, Timeout

        path = Path(self._store_dir) / "locks" / f"{self.name}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(str(path), timeout=timeout_s):
                yield
        except Timeout as exc:
            raise KnowledgeBaseError(
                f"Collection {self.name!r} is locked by another ingest for over {timeout_s:.0f}s."
            ) from exc

    def count(self) -> int:
        """Number of chunks stored."""
        return int(self.collection.count())

    def version(self) -> int:
        """Changes of the collection so far: any write or removal makes it larger."""
        return self.keywords.version()

    def documents(self) -> list[dict[str, Any]]:
        """One entry per stored document: its first chunk's metadata (id, source, title…)."""
        got = self.collection.get(where={"chunk": 0}, include=["metadatas"])
        docs = [dict(m) for m in got["metadatas"] or []]
        return sorted(docs, key=lambda m: (str(m.get("source")), str(m.get("doc_id"))))

    def chunk(self, chunk_id: str) -> Document | None:
        """The stored chunk ``chunk_id`` (its text and metadata), or None when there is none."""
        got = self.collection.get(ids=[chunk_id], include=["documents", "metadatas"])
        rows = list(zip(got["ids"], got["documents"], got["metadatas"], strict=True))
        return _document(*rows[0], 0.0) if rows else None

    def chunks_of(self, doc_id: str) -> list[Document]:
        """Document ``doc_id``'s chunks, in order."""
        got = self.collection.get(where={"doc_id": doc_id}, include=["documents", "metadatas"])
        rows = zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        chunks = [_document(cid, text, meta, 0.0) for cid, text, meta in rows]
        return sorted(chunks, key=lambda d: int(d.metadata.get("chunk", 0)))

    def remove_document(self, doc_id: str) -> int:
        """Remove document ``doc_id`` from Chroma and the keyword index; the chunks removed.

        Chroma first: a removal cut short leaves keyword entries whose chunks are gone, which
        search never serves and the next removal or ``--sync`` deletes.
        """
        ids = self.collection.get(where={"doc_id": doc_id}, include=[])["ids"]
        if ids:
            self.collection.delete(ids=ids)
        self.keywords.remove_document(doc_id)
        return len(ids)

    def doc_ids(self) -> set[str]:
        """Every document in Chroma or the keyword index (a removal cut short included)."""
        return {str(m["doc_id"]) for m in self.documents()} | set(self.keywords.doc_ids())

    def matching(self, where: Where) -> set[str]:
        """The ids of the chunks whose metadata match ``where`` (a Chroma filter)."""
        return set(self.collection.get(where=where, include=[])["ids"])

    def search(
        self, query: str, k: int, mode: RetrievalMode = "dense", where: Where | None = None
    ) -> list[Document]:
        """The ``k`` best chunks for ``query`` by ``mode``; ``metadata["score"]`` is the cosine.

        ``where`` (a Chroma metadata filter) limits dense and keyword search alike.
        """
        if k <= 0 or self.count() == 0:
            return []
        only = self.matching(where) if where else None
        if only is not None and not only:
            return []
        vector = self.embeddings.embed_query(query)
        if mode == "dense":
            return self._dense(vector, k, where)
        if mode == "keyword":
            return self._keyword(query, vector, k, only)
        depth = max(k, HYBRID_DEPTH)
        keyword = self._keyword(query, vector, depth, only)
        fused = reciprocal_rank_fusion([self._dense(vector, depth, where), keyword], k=RRF_K)
        keyword_meta = {d.id: d.metadata for d in keyword}
        for doc in fused:  # a chunk both found keeps the dense copy: add its keyword rank
            if doc.id in keyword_meta:
                doc.metadata["bm25"] = keyword_meta[doc.id]["bm25"]
                doc.metadata["keyword_rank"] = keyword_meta[doc.id]["keyword_rank"]
        return fused[:k]

    def _dense(self, vector: list[float], k: int, where: Where | None = None) -> list[Document]:
        result = self.collection.query(
            query_embeddings=[vector],
            n_results=k,
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        rows = zip(
            result["ids"][0],
            result["documents"][0],
            result["metadatas"][0],
            result["distances"][0],
            strict=True,
        )
        return [_document(cid, text, meta, 1.0 - float(dist)) for cid, text, meta, dist in rows]

    def _keyword(
        self, query: str, vector: list[float], k: int, only: set[str] | None = None
    ) -> list[Document]:
        hits = self.keywords.search(query, k, only)
        if not hits:
            return []
        got = self.collection.get(
            ids=[cid for cid, _text, _bm25 in hits],
            include=["documents", "metadatas", "embeddings"],
        )
        stored = {
            cid: (text, meta, emb)
            for cid, text, meta, emb in zip(
                got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True
            )
        }
        docs: list[Document] = []
        for cid, _text, bm25 in hits:
            if cid not in stored:  # indexed but not (or no longer) in Chroma: never served
                continue
            text, meta, emb = stored[cid]
            cosine = float(sum(a * b for a, b in zip(vector, emb, strict=True)))
            doc = _document(cid, text, meta, cosine)
            doc.metadata["bm25"] = round(bm25, 4)
            doc.metadata["keyword_rank"] = len(docs) + 1
            docs.append(doc)
        return docs

    def stored_hash(self, doc_id: str) -> str | None:
        """``content_hash`` of a document fully stored in both Chroma and the keyword index.

        None if it is absent or incomplete in either (a crash between the two writes), so the
        next ingest rewrites it.
        """
        keyword_hash = self.keywords.stored_hash(doc_id)
        if keyword_hash is None:
            return None
        got = self.collection.get(where={"doc_id": doc_id}, include=["metadatas"])
        return _complete_hash(got["metadatas"] or [], keyword_hash)

    def stored_hashes(self) -> dict[str, str]:
        """``stored_hash`` of every complete document, read in two queries (for ingests)."""
        keyword = self.keywords.hashes()
        by_doc: dict[str, list[Any]] = {}
        for meta in self.collection.get(include=["metadatas"])["metadatas"] or []:
            by_doc.setdefault(str(meta.get("doc_id")), []).append(meta)
        complete = {d: _complete_hash(metas, keyword.get(d)) for d, metas in by_doc.items()}
        return {d: h for d, h in complete.items() if h is not None}

    def replace_document(
        self,
        doc_id: str,
        source: str,
        content_hash: str,
        chunks: list[str],
        about: list[dict[str, str | int]] | None = None,
    ) -> None:
        """Store ``chunks`` as document ``doc_id``, replacing whatever it had before.

        ``about`` adds metadata per chunk (title, type, page, heading…).
        """
        self.replace_documents([NewDocument(doc_id, source, content_hash, chunks, about)])

    def replace_documents(self, docs: list[NewDocument]) -> None:
        """Store several documents, replacing what they had: one embedding batch, one upsert.

        Chroma first, the keyword index last, document by document: the index's hash is the
        commit mark that ``stored_hash`` checks, so a write cut short anywhere leaves the
        documents it had not marked to be rewritten in full by the next ingest.
        """
        if not docs:
            return
        ingested = int(time.time())
        ids: list[str] = []
        texts: list[str] = []
        metadatas: list[dict[str, Any]] = []
        for doc in docs:
            extra = doc.about or [{} for _ in doc.chunks]
            for i, text in enumerate(doc.chunks):
                ids.append(chunk_id(doc.doc_id, i))
                texts.append(text)
                metadatas.append(
                    extra[i]
                    | {
                        "doc_id": doc.doc_id,
                        "source": doc.source,
                        "chunk": i,
                        "chunks": len(doc.chunks),
                        "content_hash": doc.content_hash,
                        "ingested": ingested,
                    }
                )
        vectors = self.embeddings.embed_documents(texts)
        self.collection.upsert(ids=ids, embeddings=vectors, documents=texts, metadatas=metadatas)
        doc_ids = [d.doc_id for d in docs]
        stored = self.collection.get(where={"doc_id": {"$in": doc_ids}}, include=[])["ids"]
        current = set(ids)
        stale = [cid for cid in stored if cid not in current]
        if stale:
            self.collection.delete(ids=stale)
        for doc in docs:
            doc_chunk_ids = [chunk_id(doc.doc_id, i) for i in range(len(doc.chunks))]
            self.keywords.replace_document(doc.doc_id, doc.content_hash, doc_chunk_ids, doc.chunks)


@dataclass(frozen=True)
class NewDocument:
    """A document to store: its id, source, content hash, chunks and per-chunk metadata."""

    doc_id: str
    source: str
    content_hash: str
    chunks: list[str]
    about: list[dict[str, str | int]] | None = None


def _complete_hash(metas: list[Any], keyword_hash: str | None) -> str | None:
    """The document's hash if its chunks are all there, agree, and match the keyword index."""
    if not metas or keyword_hash is None:
        return None
    hashes = {m.get("content_hash") for m in metas}
    if len(hashes) != 1 or metas[0].get("chunks") != len(metas):
        return None  # a partial or mixed write: treat as absent so it is rewritten
    chroma_hash = str(hashes.pop())
    return chroma_hash if chroma_hash == keyword_hash else None


def _document(cid: str, text: str | None, meta: Any, cosine: float) -> Document:
    metadata = dict(meta or {}) | {"id": cid, "score": round(cosine, 4)}
    return Document(id=cid, page_content=text or "", metadata=metadata)


class ModeRetriever:
    """A knowledge base searched in one retrieval mode (what the graph's ``retrieve`` uses)."""

    def __init__(self, kb: KnowledgeBase, mode: RetrievalMode, where: Where | None = None):
        self.kb = kb
        self.mode = mode
        self.where = where

    def search(self, query: str, k: int) -> list[Document]:
        """The ``k`` best chunks for ``query`` (among those matching ``where``).

        A filter that matches no chunk at all is an error, not an empty result: the graph
        would otherwise search the web as if the knowledge base lacked the answer. Only an
        empty result needs that check (``search`` already looked the matches up once).
        """
        docs = self.kb.search(query, k, self.mode, self.where)
        if not docs and self.where and not self.kb.matching(self.where):
            raise ConfigError(
                f"No document in collection {self.kb.name!r} matches the filter {self.where}."
            )
        return docs
