"""A shared store's local copies: the keyword index and the tables, in step with the server.

Chroma's own BM25 index exists only in Chroma Cloud, so a collection on a Chroma server that
several crag processes share keeps its keyword index on each host as a copy derived from the
server's chunks. Every write through crag stamps the collection's metadata with a new change
token (``mark_changed``); before a search, a process reads the token (one small request) and,
when it differs from the one it last synced, compares each document's ``content_hash`` on the
server with its copy's and re-indexes only the documents that changed. The server is then the
only commit mark: a document is stored when all its chunks are there with one hash.

The tables of a shared collection are on the server too, one record per table (its JSON, the
document's id and ``content_hash``) in a collection of their own (``TABLES_PREFIX`` + the
name), written before the document's chunks; the host's SQLite tables are a copy that ``sync``
brings up to date with the keyword copy: a document whose chunks changed has its tables read
again (those of the same hash), a document gone has them removed.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from crag_core.clients.chroma import (
    MISSING,
    TABLES_PREFIX,
    WRITE_BATCH,
    NewDocument,
    complete_hash,
    metadata_by_document,
)
from crag_core.clients.keyword_index import KeywordIndex
from crag_core.clients.table_store import TableStore
from crag_core.text.table_shapes import Table, table_from_json, table_json

CHANGE_TOKEN = "crag_change"
"""The collection metadata key a write to a shared store stamps with a new random token."""
SYNC_BATCH = 200
"""Documents whose chunks one request fetches when a keyword copy catches up."""
TABLE_BATCH = 20
"""Tables one request writes to a shared store (each may be megabytes of JSON)."""


class SharedCopy:
    """This host's keyword and table copies of the shared collection ``name``.

    ``client``, ``collection`` and ``writable`` return the Chroma client, the collection to
    read (``MISSING`` when there is none) and the one to write: the knowledge base's own, so
    both see one connection.
    """

    def __init__(
        self,
        name: str,
        keywords: KeywordIndex,
        tables: TableStore,
        *,
        client: Callable[[], Any],
        collection: Callable[[], Any],
        writable: Callable[[], Any],
    ):
        self.name = name
        self.keywords = keywords
        self.tables = tables
        self._client = client
        self._collection = collection
        self._writable = writable
        self._synced: str | None = None  # the change token the copy last caught up to
        self._lock = threading.Lock()

    def sync(self) -> int:
        """Bring the copies up to date; the documents re-indexed or removed.

        One request for the change token; only when it moved, one for every chunk's metadata
        and one per ``SYNC_BATCH`` changed documents for their text.
        """
        with self._lock:
            token = self.change_token()  # read first: a write during the sync moves it again
            if token is not None and token == self._synced:
                return 0
            server = self.server_hashes()
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

    def change_token(self) -> str | None:
        """The shared collection's change token now (None: never stamped)."""
        if self._collection() is MISSING:
            return None
        # The collection is fetched anew: its change token moves.
        metadata = self._client().get_collection(self.name).metadata or {}
        token = metadata.get(CHANGE_TOKEN)
        return str(token) if token is not None else None

    def mark_changed(self) -> None:
        """Stamp the shared collection with a new change token (every process will re-sync)."""
        self._writable().modify(metadata={CHANGE_TOKEN: uuid.uuid4().hex})

    def server_hashes(self) -> dict[str, str]:
        """``content_hash`` of every document complete on the server (Chroma alone)."""
        by_doc = metadata_by_document(self._collection())
        complete = {
            d: complete_hash(metas, str(metas[0].get("content_hash")))
            for d, metas in by_doc.items()
        }
        return {d: h for d, h in complete.items() if h is not None}

    def _index_from_server(self, doc_ids: list[str], hashes: dict[str, str]) -> None:
        """Re-index ``doc_ids`` in the copies from their chunks and tables on the server."""
        got = self._collection().get(
            where={"doc_id": {"$in": doc_ids}}, include=["documents", "metadatas"]
        )
        rows: dict[str, list[tuple[str, str, Any]]] = {}
        for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
            rows.setdefault(str(meta["doc_id"]), []).append((cid, text or "", meta))
        tables = self.tables_from_server(doc_ids, hashes)
        for doc_id in doc_ids:
            doc = sorted(rows.get(doc_id, []), key=lambda row: int(row[2]["chunk"]))
            # Rewritten since its hash was read: the next sync (the token moved) takes it.
            if complete_hash([meta for *_, meta in doc], hashes[doc_id]) is None:
                continue
            label, doc_tables = tables.get(doc_id, ("", []))
            self.tables.replace_document(doc_id, label, doc_tables)
            ids, texts = [cid for cid, *_ in doc], [text for _, text, _ in doc]
            self.keywords.replace_document(doc_id, hashes[doc_id], ids, texts)

    def shared_tables(self, create: bool) -> Any:
        """The server's collection of this collection's tables (None: there is none)."""
        from chromadb.errors import NotFoundError

        name = TABLES_PREFIX + self.name
        try:
            if create:
                return self._client().get_or_create_collection(name, embedding_function=None)
            return self._client().get_collection(name, embedding_function=None)
        except NotFoundError:
            return None

    def drop_tables(self) -> None:
        """Delete the server's collection of this collection's tables, if there is one."""
        if self.shared_tables(create=False) is not None:
            self._client().delete_collection(TABLES_PREFIX + self.name)

    def share_tables(self, docs: Sequence[NewDocument]) -> None:
        """Put ``docs``' tables on the server in place of what they had (none: removed)."""
        side = self.shared_tables(create=any(d.tables for d in docs))
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

    def tables_from_server(
        self, doc_ids: list[str], hashes: dict[str, str]
    ) -> dict[str, tuple[str, list[Table]]]:
        """The server's tables of ``doc_ids`` written with their current hash: label, tables."""
        side = self.shared_tables(create=False)
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
