"""Answer cache: a question equal or nearly equal to one already answered gets that answer.

Entries live in SQLite under the data dir, one row per answered question with its MiniLM
embedding. A lookup matches within one *scope*: the collection and its version (every write or
removal bumps it, so any change to the knowledge base invalidates the cache) plus a key of the
run's settings and prompt versions. Within the scope, the nearest question wins if its cosine
similarity reaches the threshold; an identical question (after normalisation) always does.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crag_core.clients.embeddings import cosine
from crag_core.clients.sqlite import open_database
from crag_core.text.words import normalize

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    scope TEXT NOT NULL,
    question TEXT NOT NULL,
    normalized TEXT NOT NULL,
    embedding TEXT NOT NULL,
    answer TEXT NOT NULL,
    sources TEXT NOT NULL,
    created REAL NOT NULL,
    confidence REAL,
    PRIMARY KEY (scope, normalized)
);
"""
ADDED_COLUMNS = {"confidence": "REAL"}
"""Columns added since the first schema: a cache file written before them gets them."""

MAX_ENTRIES_PER_SCOPE = 5000
"""Oldest entries beyond this are dropped (a lookup compares against every entry of a scope)."""


@dataclass(frozen=True)
class CacheHit:
    """A stored answer and how close its question was."""

    question: str
    answer: str
    sources: list[dict[str, Any]]
    similarity: float
    confidence: float | None = None


class AnswerCache:
    """Stored answers, looked up by question embedding within a scope."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        """The connection, opened (and the table created) on first use."""
        if self._conn is None:
            conn = open_database(self.path, SCHEMA, "answer cache", timeout_s=30)
            have = {row[1] for row in conn.execute("PRAGMA table_info(answers)")}
            with conn:
                for name, kind in ADDED_COLUMNS.items():
                    if name not in have:
                        conn.execute(f"ALTER TABLE answers ADD COLUMN {name} {kind}")
            self._conn = conn
        return self._conn

    def lookup(
        self, scope: str, question: str, vector: list[float], threshold: float
    ) -> CacheHit | None:
        """The stored answer nearest to ``question`` in ``scope``, if near enough."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT question, normalized, embedding, answer, sources, confidence FROM answers"
                " WHERE scope = ?",
                (scope,),
            ).fetchall()
        best: CacheHit | None = None
        key = normalize(question)
        for stored, normalized, embedding, answer, sources, given in rows:
            similarity = 1.0 if normalized == key else cosine(vector, json.loads(embedding))
            if similarity >= threshold and (best is None or similarity > best.similarity):
                hit = CacheHit(stored, answer, json.loads(sources), round(similarity, 4), given)
                best = hit
        return best

    def store(
        self,
        scope: str,
        question: str,
        vector: list[float],
        answer: str,
        sources: list[dict[str, Any]],
        confidence: float | None = None,
    ) -> None:
        """Keep ``answer`` for ``question`` in ``scope`` (replacing the same question's)."""
        row = (
            scope,
            question,
            normalize(question),
            json.dumps(vector),
            answer,
            json.dumps(sources),
            time.time(),
            confidence,
        )
        with self._lock, self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO answers (scope, question, normalized, embedding, answer,"
                " sources, created, confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            self.conn.execute(
                "DELETE FROM answers WHERE scope = ? AND rowid NOT IN (SELECT rowid FROM answers"
                " WHERE scope = ? ORDER BY created DESC LIMIT ?)",
                (scope, scope, MAX_ENTRIES_PER_SCOPE),
            )
