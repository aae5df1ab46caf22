"""The knowledge base: a Chroma collection on disk holding embedded chunks.

Dense search is Chroma (cosine, MiniLM embeddings computed by crag); keyword search is BM25 in
SQLite FTS5 (``crag_core.clients.keyword_index``) over the same chunk ids; hybrid fuses the two
rankings by Reciprocal Rank Fusion (k=60). Every hit carries its cosine similarity to the query as
``score`` (keyword-only hits too, from their stored embedding), so one similarity floor applies
whatever found the chunk; keyword hits also carry ``bm25`` and ``keyword_rank`` (1 = best).

Chunks are stored with ids ``<doc_id>__c0000`` and metadata ``doc_id``, ``source``,
``chunk``, ``chunks`` (how many the document has), ``ingested`` (epoch seconds) and
``content_hash`` (of the whole file),
which is what makes ingestion idempotent: an unchanged file is skipped, a changed one replaces
its chunks. Embeddings are computed by crag and passed in, never by Chroma (whose default
embedding function would try to download a model).

**Shared store.** Given a ``server_url`` (``CRAG_CHROMA_URL``), the collection lives on a Chroma
server that several crag processes share; each keeps its keyword index and tables as local
copies that ``crag_core.clients.keyword_copy.SharedCopy`` keeps in step with the server.

**Tables.** The tables of a document (a CSV file, a workbook's sheets) are also kept as SQL
tables (``crag_core.clients.table_store``, ``store_dir/tables``), replaced and removed with the
document's chunks and cleared by ``drop``. Queries always run on the local SQLite copy, behind
its guards. Opening Chroma and what a stored document is: ``crag_core.clients.chroma``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Protocol

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from crag_core.clients.chroma import (
    MISSING,
    WRITE_BATCH,
    NewDocument,
    chroma_client,
    complete_hash,
    metadata_by_document,
    open_lock,
    stored_document,
)
from crag_core.clients.embeddings import cosine
from crag_core.clients.keyword_copy import SharedCopy
from crag_core.clients.keyword_index import KeywordIndex
from crag_core.clients.table_store import TableStore
from crag_core.errors import ConfigError, KnowledgeBaseError
from crag_core.text.documents import RetrievalMode, chunk_id, reciprocal_rank_fusion

RRF_K = 60
HYBRID_DEPTH = 10
"""Candidates each retriever contributes to the hybrid fusion (at least; ``k`` if larger)."""
EMBED_SLICE = 256
"""Chunks embedded per call when storing: large enough to batch well (64 cost a quarter of the
throughput, the encoder sorts a call by length), small enough to report
progress on a big file."""


class Retriever(Protocol):
    """What the graph needs from a knowledge base."""

    def search(self, query: str, k: int, where: Where | None = None) -> list[Document]:
        """Return up to ``k`` documents, most similar first (only those matching ``where``)."""
        ...

    def chunks(self, ids: list[str]) -> list[Document]:
        """The stored chunks with these ids (those that exist), for reading around a hit."""
        ...

    def unfilled(self) -> str | None:
        """Why there is nothing to search ("Collection 'x' is empty."), or None."""
        ...


Where = dict[str, Any]
"""A Chroma metadata filter, e.g. ``{"type": "pdf"}`` (see ``crag_core.text.filters``)."""


def valid_collection_name(name: str) -> bool:
    """Whether ``name`` is one Chroma and every store of crag's take: checked before any write.

    3 to 63 ASCII letters, digits, ``-`` or ``_``, starting and ending with a letter or digit.
    """
    return (
        3 <= len(name) <= 63
        and name.isascii()
        and name.replace("-", "").replace("_", "").isalnum()
        and name[0].isalnum()
        and name[-1].isalnum()
    )


class KnowledgeBase:
    """One Chroma collection plus the embedding model that fills and queries it.

    ``store_dir`` holds the keyword index and the write locks, and the Chroma store itself
    unless ``server_url`` names a Chroma server (then the keyword index is a synced copy).
    """

    def __init__(
        self,
        store_dir: Path,
        collection: str,
        embeddings: Embeddings | Callable[[], Embeddings],
        *,
        server_url: str = "",
        server_token: str = "",
        timeout_s: float = 30.0,
    ):
        if not valid_collection_name(collection):
            raise KnowledgeBaseError(
                f"Collection name {collection[:80]!r} is invalid: use 3 to 63 letters, digits, "
                "'-' or '_' (ASCII), starting and ending with a letter or digit."
            )
        self.name = collection
        # A factory is called on first use: counting or opening the store needs no model.
        self._embeddings = embeddings
        self._store_dir = str(store_dir)
        self._location = server_url or self._store_dir
        self._timeout_s = timeout_s
        self._token = server_token
        self._collection: Any = None
        keyword_path = Path(store_dir) / "keyword" / f"{collection}.sqlite3"
        self.keywords = KeywordIndex(keyword_path, collection)
        self.tables = TableStore(
            Path(store_dir) / "tables" / f"{collection}.sqlite3",
            refresh=self.sync if server_url else None,
        )
        self.copy: SharedCopy | None = None
        """A shared store's keyword and table copies on this host (None: a local store)."""
        if server_url:
            self.copy = SharedCopy(
                collection,
                self.keywords,
                self.tables,
                client=self._client,
                collection=lambda: self.collection,
                writable=lambda: self.writable,
            )

    def _client(self) -> Any:
        return chroma_client(self._location, self._timeout_s, self._token)

    @property
    def embeddings(self) -> Embeddings:
        """The embedding model (loaded on first use when given as a factory)."""
        if not isinstance(self._embeddings, Embeddings):
            self._embeddings = self._embeddings()
        return self._embeddings

    @property
    def collection(self) -> Any:
        """The Chroma collection to read: an empty stand-in while it does not exist.

        Reading never creates a collection (a mistyped name must not leave an empty one).
        """
        with open_lock:
            return self._open_collection(create=False)

    @property
    def writable(self) -> Any:
        """The Chroma collection to write, created on first use (cosine distance)."""
        with open_lock:
            return self._open_collection(create=True)

    def exists(self) -> bool:
        """Whether the collection is in the store."""
        return self.collection is not MISSING

    def status(self) -> Literal["missing", "empty", "filled"]:
        """Whether the collection is missing, empty, or holds documents.

        A local store's keyword index (the commit mark of every ingest) answers "filled"
        without opening Chroma, which a start-up cannot afford; the rest asks Chroma.
        """
        keywords = self.keywords
        if self.copy is None and keywords.path.exists() and keywords.doc_ids():
            return "filled"
        if not self.exists():
            return "missing"
        return "filled" if self.count() else "empty"

    def _open_collection(self, create: bool) -> Any:
        if self._collection is None:
            from chromadb.errors import NotFoundError

            client = self._client()
            try:
                if create:
                    self._collection = client.get_or_create_collection(
                        self.name,
                        embedding_function=None,
                        configuration={"hnsw": {"space": "cosine"}},
                    )
                else:
                    self._collection = client.get_collection(self.name, embedding_function=None)
            except NotFoundError:
                return MISSING
            except KnowledgeBaseError:
                raise
            except Exception as exc:
                raise KnowledgeBaseError(f"Cannot open collection {self.name!r}: {exc}") from exc
        return self._collection

    def drop(self) -> int:
        """Delete the collection from Chroma and the keyword index; the chunks it held.

        The keyword index keeps its change counter (bumped), so answers cached for the old
        contents never match a new collection of the same name.
        """
        with self.write_lock():
            chunks = self.count()
            if self.copy:
                self.copy.drop_tables()
            if self.exists():
                self._client().delete_collection(self.name)
            self._collection = None
            self.tables.clear()
            self.keywords.clear()
            return chunks

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
        """Changes of the collection so far, as this process has seen them.

        Any write or removal makes it larger.
        """
        self.sync()
        return self.keywords.version()

    def sync(self) -> int:
        """Bring a shared store's copies up to date; the documents re-indexed (0: local)."""
        return self.copy.sync() if self.copy else 0

    def documents(self) -> list[dict[str, Any]]:
        """One entry per stored document: its first chunk's metadata (id, source, title…)."""
        got = self.collection.get(where={"chunk": 0}, include=["metadatas"])
        docs = [dict(m) for m in got["metadatas"] or []]
        return sorted(docs, key=lambda m: (str(m.get("source")), str(m.get("doc_id"))))

    def outlines(self) -> list[dict[str, Any]]:
        """Each stored document (its first chunk's metadata) with the pages and headings it spans.

        ``pages``: the PDF pages its chunks come from; ``headings``: its chunks' heading paths,
        in order, each once. One request for every chunk's metadata.
        """
        docs = []
        for metas in metadata_by_document(self.collection).values():
            metas = sorted(metas, key=lambda m: int(m.get("chunk", 0)))
            pages = sorted({int(m["page"]) for m in metas if m.get("page") is not None})
            headings = list(dict.fromkeys(str(m["heading"]) for m in metas if m.get("heading")))
            docs.append(dict(metas[0]) | {"pages": pages, "headings": headings})
        return sorted(docs, key=lambda m: (str(m.get("source")), str(m.get("doc_id"))))

    def chunk(self, chunk_id: str) -> Document | None:
        """The stored chunk ``chunk_id`` (its text and metadata), or None when there is none."""
        got = self.collection.get(ids=[chunk_id], include=["documents", "metadatas"])
        rows = list(zip(got["ids"], got["documents"], got["metadatas"], strict=True))
        return stored_document(*rows[0], 0.0) if rows else None

    def chunks(self, ids: list[str]) -> list[Document]:
        """The stored chunks with these ids (those that exist), in one request."""
        if not ids:
            return []
        got = self.collection.get(ids=ids, include=["documents", "metadatas"])
        rows = zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        return [stored_document(cid, text, meta, 0.0) for cid, text, meta in rows]

    def chunks_of(self, doc_id: str) -> list[Document]:
        """Document ``doc_id``'s chunks, in order."""
        got = self.collection.get(where={"doc_id": doc_id}, include=["documents", "metadatas"])
        rows = zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        chunks = [stored_document(cid, text, meta, 0.0) for cid, text, meta in rows]
        return sorted(chunks, key=lambda d: int(d.metadata.get("chunk", 0)))

    def remove_document(self, doc_id: str) -> int:
        """Remove document ``doc_id`` from Chroma and the keyword index; the chunks removed.

        Chroma first: a removal cut short leaves keyword entries whose chunks are gone, which
        search never serves and the next removal or ``--sync`` deletes.
        """
        if self.copy:
            self.copy.share_tables([NewDocument(doc_id, "", "", [])])
        ids = self.collection.get(where={"doc_id": doc_id}, include=[])["ids"]
        if ids:
            for start in range(0, len(ids), WRITE_BATCH):
                self.collection.delete(ids=ids[start : start + WRITE_BATCH])
            if self.copy:
                self.copy.mark_changed()
        self.tables.remove_document(doc_id)
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
        if mode != "dense":
            self.sync()
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
        return [
            stored_document(cid, text, meta, 1.0 - float(dist)) for cid, text, meta, dist in rows
        ]

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
            doc = stored_document(cid, text, meta, cosine(vector, emb))
            doc.metadata["bm25"] = round(bm25, 4)
            doc.metadata["keyword_rank"] = len(docs) + 1
            docs.append(doc)
        return docs

    def stored_hash(self, doc_id: str) -> str | None:
        """``content_hash`` of a document fully stored in both Chroma and the keyword index.

        None if it is absent or incomplete in either (a crash between the two writes), so the
        next ingest rewrites it. A shared store's server is its only commit mark.
        """
        if self.copy:
            return self.copy.server_hashes().get(doc_id)
        keyword_hash = self.keywords.stored_hash(doc_id)
        if keyword_hash is None:
            return None
        got = self.collection.get(where={"doc_id": doc_id}, include=["metadatas"])
        return complete_hash(got["metadatas"] or [], keyword_hash)

    def stored_hashes_of(self, doc_ids: list[str]) -> dict[str, str]:
        """``stored_hash`` of each of ``doc_ids`` that is fully stored (for a batch's write)."""
        if self.copy:
            every = self.copy.server_hashes()
            return {d: every[d] for d in doc_ids if d in every}
        return {d: h for d in doc_ids if (h := self.stored_hash(d)) is not None}

    def stored_hashes(self) -> dict[str, str]:
        """``stored_hash`` of every complete document, read in two queries (for ingests)."""
        if self.copy:
            return self.copy.server_hashes()
        keyword = self.keywords.hashes()
        by_doc = metadata_by_document(self.collection)
        complete = {d: complete_hash(metas, keyword.get(d)) for d, metas in by_doc.items()}
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

    def replace_documents(
        self, docs: list[NewDocument], on_embedded: Callable[[int, int], None] | None = None
    ) -> None:
        """Store several documents, replacing what they had: embedded and written in slices.

        ``on_embedded(done, total)`` follows the embedding, slice by slice (``EMBED_SLICE``).

        Chroma first, then each document's tables, the keyword index last, document by
        document: the index's hash is the commit mark that ``stored_hash`` checks, so a write
        cut short anywhere leaves the documents it had not marked to be rewritten in full by
        the next ingest. A shared store is then stamped with a new change token, so other
        processes re-sync their keyword copy.
        """
        if not docs:
            return
        if self.copy:  # before the chunks: whoever sees the new hash finds the tables
            self.copy.share_tables(docs)
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
        vectors: list[list[float]] = []
        if on_embedded:
            on_embedded(0, len(texts))
        for start in range(0, len(texts), EMBED_SLICE):
            vectors += self.embeddings.embed_documents(texts[start : start + EMBED_SLICE])
            if on_embedded:
                on_embedded(len(vectors), len(texts))
        for start in range(0, len(ids), WRITE_BATCH):
            end = start + WRITE_BATCH
            self.writable.upsert(
                ids=ids[start:end],
                embeddings=vectors[start:end],
                documents=texts[start:end],
                metadatas=metadatas[start:end],
            )
        doc_ids = [d.doc_id for d in docs]
        stored = self.collection.get(where={"doc_id": {"$in": doc_ids}}, include=[])["ids"]
        current = set(ids)
        stale = [cid for cid in stored if cid not in current]
        for start in range(0, len(stale), WRITE_BATCH):
            self.collection.delete(ids=stale[start : start + WRITE_BATCH])
        if self.copy:
            self.copy.mark_changed()
        for doc in docs:
            self.tables.replace_document(doc.doc_id, doc.label, doc.tables)
            doc_chunk_ids = [chunk_id(doc.doc_id, i) for i in range(len(doc.chunks))]
            self.keywords.replace_document(doc.doc_id, doc.content_hash, doc_chunk_ids, doc.chunks)


class ModeRetriever:
    """A knowledge base searched in one retrieval mode (what the graph's ``retrieve`` uses)."""

    def __init__(self, kb: KnowledgeBase, mode: RetrievalMode, where: Where | None = None):
        self.kb = kb
        self.mode = mode
        self.where = where

    def search(self, query: str, k: int, where: Where | None = None) -> list[Document]:
        """The ``k`` best chunks for ``query`` (among those matching the filter and ``where``).

        A configured filter that matches no chunk at all is an error, not an empty result: the
        graph would otherwise search the web as if the knowledge base lacked the answer. Only
        an empty result needs that check (``search`` already looked the matches up once). A
        question's own ``where`` that matches nothing finds nothing (``retrieve`` says why).
        """
        both = [w for w in (self.where, where) if w]
        combined = {"$and": both} if len(both) > 1 else both[0] if both else None
        docs = self.kb.search(query, k, self.mode, combined)
        if not docs and self.where and not self.kb.matching(self.where):
            raise ConfigError(
                f"No document in collection {self.kb.name!r} matches the filter {self.where}."
            )
        return docs

    def chunks(self, ids: list[str]) -> list[Document]:
        """The stored chunks with these ids (the filter does not apply to neighbours)."""
        return self.kb.chunks(ids)

    def unfilled(self) -> str | None:
        """Why there is nothing to search: a missing or an empty collection; else None."""
        status = self.kb.status()
        if status == "missing":
            return f"There is no collection {self.kb.name!r}."
        return f"Collection {self.kb.name!r} is empty." if status == "empty" else None
