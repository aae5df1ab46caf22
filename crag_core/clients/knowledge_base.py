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
server that several crag processes share, and each keeps its keyword index as a local copy
derived from the server's chunks. (Chroma's own BM25 index exists only in Chroma Cloud.) Every
write through crag stamps the collection's metadata with a new change token; before a search, a
process reads the token (one small request) and, when it differs from the one it last synced,
compares each document's ``content_hash`` on the server with its copy's and re-indexes only the
documents that changed. The server is then the only commit mark: a document is stored when all
its chunks are there with one hash (``_complete_hash``).

**Tables.** The tables of a document (a CSV file, a workbook's sheets) are also kept as SQL
tables (``crag_core.clients.table_store``, ``store_dir/tables``), replaced and removed with the
document's chunks and cleared by ``drop``. A shared store also keeps them on the server, one
record per table (its JSON, the document's id and ``content_hash``) in a collection of their
own (``TABLES_PREFIX`` + the name: a name no collection of crag's can have), written before
the document's chunks; the local tables are then a copy that ``sync`` brings up to date with
the keyword copy: a document whose chunks changed has its tables read again (those of the same
hash), a document gone has them removed. Queries always run on the local SQLite copy, behind
its guards.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from crag_core.clients.documents import reciprocal_rank_fusion
from crag_core.clients.embeddings import cosine
from crag_core.clients.errors import ConfigError, KnowledgeBaseError
from crag_core.clients.keyword_index import KeywordIndex
from crag_core.clients.table_store import Table, TableStore, table_from_json, table_json

RetrievalMode = Literal["dense", "keyword", "hybrid"]
RRF_K = 60
HYBRID_DEPTH = 10
"""Candidates each retriever contributes to the hybrid fusion (at least; ``k`` if larger)."""
CHANGE_TOKEN = "crag_change"
"""The collection metadata key a write to a shared store stamps with a new random token."""
SYNC_BATCH = 200
"""Documents whose chunks one request fetches when a keyword copy catches up."""
TABLE_BATCH = 20
"""Tables one request writes to a shared store (each may be megabytes of JSON)."""
TABLES_PREFIX = "crag.tables."
"""A shared collection's tables are on the server in the collection of this prefix and its
name (collection names crag makes take no '.')."""


WRITE_BATCH = 1000
"""Chunks one upsert or delete carries: Chroma refuses a batch over its limit (5,461 here)."""
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
"""A Chroma metadata filter, e.g. ``{"type": "pdf"}`` (see ``crag_core.clients.filters``)."""


def chunk_id(doc_id: str, index: int) -> str:
    """The stable id of chunk ``index`` of document ``doc_id``."""
    return f"{doc_id}__c{index:04d}"


_open_lock = threading.RLock()
"""Opening a client or collection is not thread-safe in Chroma: parallel parts of a question
open them at once ("'RustBindingsAPI' object has no attribute 'bindings'")."""


def _client(location: str, timeout_s: float = 30.0, token: str = "") -> Any:
    """The Chroma client for ``location``: a server's ``http(s)://`` URL, else a local dir.

    One per location, timeout and token, made once even when several threads ask at once.
    """
    with _open_lock:
        return _open_client(location, timeout_s, token)


@cache
def _open_client(location: str, timeout_s: float, token: str) -> Any:
    if location.startswith(("http://", "https://")):
        return _http_client(location, timeout_s, token)
    import chromadb
    from chromadb.config import Settings

    try:
        Path(location).mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(
            path=location, settings=Settings(anonymized_telemetry=False)
        )
    except Exception as exc:  # permission errors, a corrupt store, ...
        raise KnowledgeBaseError(f"Cannot open the vector store at {location}: {exc}") from exc


def _http_client(url: str, timeout_s: float, token: str) -> Any:
    """A client of the Chroma server at ``url``; every request times out after ``timeout_s``.

    ``token`` (if any) goes with every request as a bearer token.
    """
    import chromadb
    import httpx
    from chromadb.config import Settings

    parts = urlsplit(url)
    if not parts.hostname:
        raise ConfigError(f"CRAG_CHROMA_URL {url!r} names no host; e.g. http://127.0.0.1:8000.")
    ssl = parts.scheme == "https"
    # Chroma's own server checks no token; one in front of it (a proxy) may (docs/deploy.md).
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        # The heartbeat first, with a timeout: the client's own requests have none until set.
        beat = httpx.get(f"{url.rstrip('/')}/api/v2/heartbeat", headers=headers, timeout=timeout_s)
        if beat.status_code in (401, 403):
            said = "refused the token in CRAG_CHROMA_TOKEN" if token else "needs CRAG_CHROMA_TOKEN"
            raise KnowledgeBaseError(f"The Chroma server at {url} {said} ({beat.status_code}).")
        beat.raise_for_status()
        client = chromadb.HttpClient(
            host=parts.hostname,
            port=parts.port or (443 if ssl else 80),
            ssl=ssl,
            headers=headers,
            settings=Settings(anonymized_telemetry=False),
        )
        client._server._session.timeout = httpx.Timeout(timeout_s)  # type: ignore[attr-defined]
    except KnowledgeBaseError:
        raise
    except Exception as exc:  # refused, timed out, not a Chroma server
        raise KnowledgeBaseError(f"Cannot reach the Chroma server at {url}: {exc}") from exc
    return client


class _Missing:
    """A collection not (yet) in the store, read as an empty one: nothing found, nothing created."""

    metadata: dict[str, Any] = {}

    def count(self) -> int:
        return 0

    def get(self, **_: Any) -> dict[str, list[Any]]:
        return {"ids": [], "documents": [], "metadatas": [], "embeddings": []}

    def query(self, **_: Any) -> dict[str, list[list[Any]]]:
        return {"ids": [[]], "documents": [[]], "metadatas": [[]], "distances": [[]]}


_MISSING = _Missing()


def collection_names(store: Path | str, timeout_s: float = 30.0, token: str = "") -> list[str]:
    """The collections in ``store``: a local dir or a Chroma server's URL (and its token)."""
    location = str(store)
    if not location.startswith(("http://", "https://")) and not Path(location).exists():
        return []
    names = (c.name for c in _client(location, timeout_s, token).list_collections())
    return sorted(n for n in names if not n.startswith(TABLES_PREFIX))


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
        if len(collection) < 3 or not collection.replace("-", "").replace("_", "").isalnum():
            raise KnowledgeBaseError(
                f"Collection name {collection!r} is invalid: use 3+ letters, digits, '-' or '_'."
            )
        self.name = collection
        # A factory is called on first use: counting or opening the store needs no model.
        self._embeddings = embeddings
        self._store_dir = str(store_dir)
        self._location = server_url or self._store_dir
        self._timeout_s = timeout_s
        self._token = server_token
        self.shared = bool(server_url)
        self._collection: Any = None
        keyword_path = Path(store_dir) / "keyword" / f"{collection}.sqlite3"
        self.keywords = KeywordIndex(keyword_path, collection)
        self.tables = TableStore(
            Path(store_dir) / "tables" / f"{collection}.sqlite3",
            refresh=self.sync if self.shared else None,
        )
        self._synced: str | None = None  # the change token the keyword copy last caught up to
        self._sync_lock = threading.Lock()

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
        with _open_lock:
            return self._open_collection(create=False)

    @property
    def writable(self) -> Any:
        """The Chroma collection to write, created on first use (cosine distance)."""
        with _open_lock:
            return self._open_collection(create=True)

    def exists(self) -> bool:
        """Whether the collection is in the store."""
        return self.collection is not _MISSING

    def status(self) -> Literal["missing", "empty", "filled"]:
        """Whether the collection is missing, empty, or holds documents.

        A local store's keyword index (the commit mark of every ingest) answers "filled"
        without opening Chroma, which a start-up cannot afford; the rest asks Chroma.
        """
        keywords = self.keywords
        if not self.shared and keywords.path.exists() and keywords.doc_ids():
            return "filled"
        if not self.exists():
            return "missing"
        return "filled" if self.count() else "empty"

    def _open_collection(self, create: bool) -> Any:
        if self._collection is None:
            from chromadb.errors import NotFoundError

            client = _client(self._location, self._timeout_s, self._token)
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
                return _MISSING
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
            client = _client(self._location, self._timeout_s, self._token)
            if self.shared and self._shared_tables(create=False) is not None:
                client.delete_collection(TABLES_PREFIX + self.name)
            if self.exists():
                client.delete_collection(self.name)
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
        """Bring the keyword copy of a shared collection up to date; the documents re-indexed.

        A no-op for a local store. For a shared one: one request for the change token; only
        when it moved, one for every chunk's metadata and one per ``SYNC_BATCH`` changed
        documents for their text.
        """
        if not self.shared:
            return 0
        with self._sync_lock:
            token = self._change_token()  # read first: a write during the sync moves it again
            if token is not None and token == self._synced:
                return 0
            server = self._server_hashes()
            local = self.keywords.hashes()
            gone = sorted(local.keys() - server.keys())
            for doc_id in gone:
                self.keywords.remove_document(doc_id)
                self.tables.remove_document(doc_id)
            changed = sorted(d for d, h in server.items() if local.get(d) != h)
            for start in range(0, len(changed), SYNC_BATCH):
                self._index_from_server(changed[start : start + SYNC_BATCH], server)
            self._synced = token
            return len(changed) + len(gone)

    def _change_token(self) -> str | None:
        """The shared collection's change token now (None: never stamped)."""
        if self.collection is _MISSING:
            return None
        # The collection is fetched anew: its change token moves.
        client = _client(self._location, self._timeout_s, self._token)
        metadata = client.get_collection(self.name).metadata or {}
        token = metadata.get(CHANGE_TOKEN)
        return str(token) if token is not None else None

    def _mark_changed(self) -> None:
        """Stamp a shared collection with a new change token (every process will re-sync)."""
        self.writable.modify(metadata={CHANGE_TOKEN: uuid.uuid4().hex})

    def _metadata_by_document(self) -> dict[str, list[Any]]:
        """Every chunk's metadata in Chroma, grouped by document (one request)."""
        by_doc: dict[str, list[Any]] = {}
        for meta in self.collection.get(include=["metadatas"])["metadatas"] or []:
            by_doc.setdefault(str(meta.get("doc_id")), []).append(meta)
        return by_doc

    def _server_hashes(self) -> dict[str, str]:
        """``content_hash`` of every document complete on the server (Chroma alone)."""
        by_doc = self._metadata_by_document()
        complete = {
            d: _complete_hash(metas, str(metas[0].get("content_hash")))
            for d, metas in by_doc.items()
        }
        return {d: h for d, h in complete.items() if h is not None}

    def _index_from_server(self, doc_ids: list[str], hashes: dict[str, str]) -> None:
        """Re-index ``doc_ids`` in the keyword copy from their chunks on the server."""
        got = self.collection.get(
            where={"doc_id": {"$in": doc_ids}}, include=["documents", "metadatas"]
        )
        rows: dict[str, list[tuple[str, str, Any]]] = {}
        for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
            rows.setdefault(str(meta["doc_id"]), []).append((cid, text or "", meta))
        tables = self._tables_from_server(doc_ids, hashes)
        for doc_id in doc_ids:
            doc = sorted(rows.get(doc_id, []), key=lambda row: int(row[2]["chunk"]))
            # Rewritten since its hash was read: the next sync (the token moved) takes it.
            if _complete_hash([meta for *_, meta in doc], hashes[doc_id]) is None:
                continue
            label, doc_tables = tables.get(doc_id, ("", []))
            self.tables.replace_document(doc_id, label, doc_tables)
            ids, texts = [cid for cid, *_ in doc], [text for _, text, _ in doc]
            self.keywords.replace_document(doc_id, hashes[doc_id], ids, texts)

    def _shared_tables(self, create: bool) -> Any:
        """The server's collection of this collection's tables (None: there is none)."""
        from chromadb.errors import NotFoundError

        client = _client(self._location, self._timeout_s, self._token)
        name = TABLES_PREFIX + self.name
        try:
            if create:
                return client.get_or_create_collection(name, embedding_function=None)
            return client.get_collection(name, embedding_function=None)
        except NotFoundError:
            return None

    def _share_tables(self, docs: Sequence[NewDocument]) -> None:
        """Put ``docs``' tables on the server in place of what they had (none: removed)."""
        side = self._shared_tables(create=any(d.tables for d in docs))
        if side is None:
            return
        doc_ids = [d.doc_id for d in docs]
        old = side.get(where={"doc_id": {"$in": doc_ids}}, include=[])["ids"]
        records = [
            (
                f"{d.doc_id}:{i}",
                table_json(t),
                {
                    "doc_id": d.doc_id,
                    "label": d.label,
                    "content_hash": d.content_hash,
                    "position": i,
                },
            )
            for d in docs
            for i, t in enumerate(d.tables)
        ]
        new = {r[0] for r in records}
        stale = [i for i in old if i not in new]
        for start in range(0, len(stale), WRITE_BATCH):
            side.delete(ids=stale[start : start + WRITE_BATCH])
        for start in range(0, len(records), TABLE_BATCH):
            batch = records[start : start + TABLE_BATCH]
            side.upsert(
                ids=[r[0] for r in batch],
                embeddings=[[1.0] for _ in batch],  # looked up by id and document, never by vector
                documents=[r[1] for r in batch],
                metadatas=[r[2] for r in batch],
            )

    def _tables_from_server(
        self, doc_ids: list[str], hashes: dict[str, str]
    ) -> dict[str, tuple[str, list[Table]]]:
        """The server's tables of ``doc_ids`` written with their current hash: label, tables."""
        side = self._shared_tables(create=False)
        if side is None:
            return {}
        got = side.get(where={"doc_id": {"$in": doc_ids}}, include=["documents", "metadatas"])
        found: dict[str, list[tuple[int, str, str]]] = {}
        for text, meta in zip(got["documents"], got["metadatas"], strict=True):
            if meta.get("content_hash") == hashes.get(str(meta["doc_id"])):
                row = (int(meta["position"]), str(meta["label"]), text or "")
                found.setdefault(str(meta["doc_id"]), []).append(row)
        return {
            doc_id: (rows[0][1], [table_from_json(text) for *_, text in sorted(rows)])
            for doc_id, rows in found.items()
        }

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
        for metas in self._metadata_by_document().values():
            metas = sorted(metas, key=lambda m: int(m.get("chunk", 0)))
            pages = sorted({int(m["page"]) for m in metas if m.get("page") is not None})
            headings = list(dict.fromkeys(str(m["heading"]) for m in metas if m.get("heading")))
            docs.append(dict(metas[0]) | {"pages": pages, "headings": headings})
        return sorted(docs, key=lambda m: (str(m.get("source")), str(m.get("doc_id"))))

    def chunk(self, chunk_id: str) -> Document | None:
        """The stored chunk ``chunk_id`` (its text and metadata), or None when there is none."""
        got = self.collection.get(ids=[chunk_id], include=["documents", "metadatas"])
        rows = list(zip(got["ids"], got["documents"], got["metadatas"], strict=True))
        return _document(*rows[0], 0.0) if rows else None

    def chunks(self, ids: list[str]) -> list[Document]:
        """The stored chunks with these ids (those that exist), in one request."""
        if not ids:
            return []
        got = self.collection.get(ids=ids, include=["documents", "metadatas"])
        rows = zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        return [_document(cid, text, meta, 0.0) for cid, text, meta in rows]

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
        if self.shared:
            self._share_tables([NewDocument(doc_id, "", "", [])])
        ids = self.collection.get(where={"doc_id": doc_id}, include=[])["ids"]
        if ids:
            for start in range(0, len(ids), WRITE_BATCH):
                self.collection.delete(ids=ids[start : start + WRITE_BATCH])
            if self.shared:
                self._mark_changed()
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
            doc = _document(cid, text, meta, cosine(vector, emb))
            doc.metadata["bm25"] = round(bm25, 4)
            doc.metadata["keyword_rank"] = len(docs) + 1
            docs.append(doc)
        return docs

    def stored_hash(self, doc_id: str) -> str | None:
        """``content_hash`` of a document fully stored in both Chroma and the keyword index.

        None if it is absent or incomplete in either (a crash between the two writes), so the
        next ingest rewrites it. A shared store's server is its only commit mark.
        """
        if self.shared:
            return self._server_hashes().get(doc_id)
        keyword_hash = self.keywords.stored_hash(doc_id)
        if keyword_hash is None:
            return None
        got = self.collection.get(where={"doc_id": doc_id}, include=["metadatas"])
        return _complete_hash(got["metadatas"] or [], keyword_hash)

    def stored_hashes(self) -> dict[str, str]:
        """``stored_hash`` of every complete document, read in two queries (for ingests)."""
        if self.shared:
            return self._server_hashes()
        keyword = self.keywords.hashes()
        by_doc = self._metadata_by_document()
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
        if self.shared:  # before the chunks: whoever sees the new hash finds the tables
            self._share_tables(docs)
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
        if self.shared:
            self._mark_changed()
        for doc in docs:
            self.tables.replace_document(doc.doc_id, doc.label, doc.tables)
            doc_chunk_ids = [chunk_id(doc.doc_id, i) for i in range(len(doc.chunks))]
            self.keywords.replace_document(doc.doc_id, doc.content_hash, doc_chunk_ids, doc.chunks)


@dataclass(frozen=True)
class NewDocument:
    """A document to store: its id, source, content hash, chunks and per-chunk metadata.

    ``tables`` (a CSV file's, a workbook's sheets) go to the collection's ``TableStore`` under
    ``label`` (the name callers see).
    """

    doc_id: str
    source: str
    content_hash: str
    chunks: list[str]
    about: list[dict[str, str | int]] | None = None
    label: str = ""
    tables: Sequence[Table] = ()


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
