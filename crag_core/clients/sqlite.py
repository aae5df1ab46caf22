"""One way to open the SQLite files crag keeps (keyword index, answer cache)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from crag_core.errors import KnowledgeBaseError


def open_database(path: Path, schema: str, what: str, timeout_s: float = 60) -> sqlite3.Connection:
    """Open (creating the folder and ``schema``) the SQLite file at ``path``, in WAL mode.

    The connection may be used from several threads (callers hold a lock around each use);
    a failure is a ``KnowledgeBaseError`` naming ``what`` and ``path``.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=timeout_s, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(schema)
    except (OSError, sqlite3.Error) as exc:
        raise KnowledgeBaseError(f"Cannot open the {what} at {path}: {exc}") from exc
    return conn
