"""Keyword search: a BM25 index in SQLite FTS5, kept in step with the Chroma collection.

Why FTS5: it is in Python's own ``sqlite3`` (no new dependency), updates incrementally (a
changed file replaces its rows; in-memory BM25 libraries rebuild the whole index), and every
change is one transaction, so a crash never leaves half a document in the index. Ranking is
FTS5's built-in ``bm25()``; text is tokenized with ``porter unicode61 remove_diacritics 2``.

Rows use the same chunk ids as Chroma. A ``documents`` row per file (its content hash and
chunk count) is written in the same transaction as its chunks; ingestion writes the index
*after* Chroma, so a matching hash here means the whole file is in both stores.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Collection
from pathlib import Path

from crag_core.clients.sqlite import open_database
from crag_core.text.words import content_words

SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    collection TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    text TEXT NOT NULL,
    UNIQUE (collection, chunk_id)
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (collection, doc_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TABLE IF NOT EXISTS versions (
    collection TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    collection TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    PRIMARY KEY (collection, doc_id)
);
"""


def match_expression(query: str) -> str:
    """An FTS5 query matching any of the query's content words (each quoted: no operators)."""
    words = content_words(query)
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words))


class KeywordIndex:
    """BM25 search over one collection's chunks.

    One SQLite file per collection, so BM25's document frequencies are the collection's own.
    """

    def __init__(self, path: Path, collection: str):
        self.path = Path(path)
        self.collection = collection
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        """The connection, opened (and the schema created) on first use."""
        if self._conn is None:
            self._conn = open_database(self.path, SCHEMA, "keyword index")
        return self._conn

    def replace_document(
        self, doc_id: str, content_hash: str, chunk_ids: list[str], texts: list[str]
    ) -> None:
        """Replace document ``doc_id``'s chunks and record its hash, in one transaction."""
        rows = [
            (self.collection, doc_id, cid, text) for cid, text in zip(chunk_ids, texts, strict=True)
        ]
        with self._lock, self.conn:
            self.conn.execute(
                "DELETE FROM chunks WHERE collection = ? AND doc_id = ?", (self.collection, doc_id)
            )
            self.conn.executemany(
                "INSERT INTO chunks (collection, doc_id, chunk_id, text) VALUES (?, ?, ?, ?)", rows
            )
            self.conn.execute(
                "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?)",
                (self.collection, doc_id, content_hash, len(rows)),
            )
            self._bump()

    def remove_document(self, doc_id: str) -> None:
        """Remove document ``doc_id``'s chunks and its record, in one transaction."""
        with self._lock, self.conn:
            self.conn.execute(
                "DELETE FROM chunks WHERE collection = ? AND doc_id = ?", (self.collection, doc_id)
            )
            self.conn.execute(
                "DELETE FROM documents WHERE collection = ? AND doc_id = ?",
                (self.collection, doc_id),
            )
            self._bump()

    def clear(self) -> None:
        """Remove every chunk and document record of the collection (its version is bumped)."""
        with self._lock, self.conn:
            self.conn.execute("DELETE FROM chunks WHERE collection = ?", (self.collection,))
            self.conn.execute("DELETE FROM documents WHERE collection = ?", (self.collection,))
            self._bump()

    def _bump(self) -> None:
        """Count one more change of the collection (inside the caller's transaction)."""
        self.conn.execute(
            "INSERT INTO versions VALUES (?, 1)"
            " ON CONFLICT (collection) DO UPDATE SET version = version + 1",
            (self.collection,),
        )

    def version(self) -> int:
        """How many times the collection changed (0: never written)."""
        with self._lock:
            row = self.conn.execute(
                "SELECT version FROM versions WHERE collection = ?", (self.collection,)
            ).fetchone()
        return int(row[0]) if row else 0

    def hashes(self) -> dict[str, str]:
        """Every recorded document's content hash."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT doc_id, content_hash FROM documents WHERE collection = ?",
                (self.collection,),
            ).fetchall()
        return {doc_id: content_hash for doc_id, content_hash in rows}

    def doc_ids(self) -> list[str]:
        """Every document recorded in the index."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT doc_id FROM documents WHERE collection = ? ORDER BY doc_id",
                (self.collection,),
            ).fetchall()
        return [r[0] for r in rows]

    def stored_hash(self, doc_id: str) -> str | None:
        """The content hash recorded for ``doc_id``, or None."""
        with self._lock:
            row = self.conn.execute(
                "SELECT content_hash FROM documents WHERE collection = ? AND doc_id = ?",
                (self.collection, doc_id),
            ).fetchone()
        return row[0] if row else None

    def chunk_ids(self) -> list[str]:
        """Every chunk id in the collection (for consistency checks)."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT chunk_id FROM chunks WHERE collection = ? ORDER BY chunk_id",
                (self.collection,),
            ).fetchall()
        return [r[0] for r in rows]

    def search(
        self, query: str, k: int, only: Collection[str] | None = None
    ) -> list[tuple[str, str, float]]:
        """The ``k`` best (chunk id, text, BM25 score) for ``query``; higher scores are better.

        ``only`` restricts the search to those chunk ids (a metadata filter's matches).
        """
        expression = match_expression(query)
        if not expression or k <= 0:
            return []
        among = " AND c.chunk_id IN (SELECT value FROM json_each(?))" if only is not None else ""
        params: tuple[object, ...] = (expression, self.collection)
        if only is not None:
            params += (json.dumps(sorted(only)),)
        with self._lock:
            rows = self.conn.execute(
                "SELECT c.chunk_id, c.text, bm25(chunks_fts) AS score"
                " FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid"
                f" WHERE chunks_fts MATCH ? AND c.collection = ?{among}"
                " ORDER BY score LIMIT ?",
                (*params, k),
            ).fetchall()
        return [(cid, text, -float(score)) for cid, text, score in rows]

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
