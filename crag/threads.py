"""Multi-turn threads: the graph with a checkpointer, SQLite in the data dir or PostgreSQL.

Each ``thread_id`` keeps its state between calls; ``contextualize_question`` resolves a
follow-up ("what about its population?") against the thread's earlier turns. The exported
``graph.graph:graph`` has no checkpointer (``langgraph dev`` brings its own); this module is
how the CLI, notebooks and the Python API get persistent threads.

``CRAG_CHECKPOINT_URL=postgresql://…`` keeps threads in PostgreSQL
(``langgraph-checkpoint-postgres``; its tables are created on first use), so a thread started
through one process continues through any other; unset, threads live in ``threads.sqlite``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from crag_core.errors import ConfigError

THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


def threads_path() -> Path:
    """The SQLite file holding every thread's checkpoints."""
    from crag_core.settings import data_dir

    return data_dir() / "threads.sqlite"


def check_thread_id(thread_id: str) -> str:
    """``thread_id`` if it is a usable id (letters, digits, ``._:-``; at most 128 characters)."""
    if not THREAD_ID.fullmatch(thread_id):
        raise ConfigError(
            f"Invalid thread id {thread_id!r}: use 1-128 letters, digits, '.', '_', ':' or '-', "
            "starting with a letter or digit."
        )
    return thread_id


def thread_config(thread_id: str) -> dict[str, Any]:
    """The config selecting ``thread_id``."""
    return {"configurable": {"thread_id": check_thread_id(thread_id)}}


@contextmanager
def thread_graph(path: Path | None = None) -> Iterator[Any]:
    """The CRAG graph compiled with the configured checkpointer.

    PostgreSQL if ``CRAG_CHECKPOINT_URL`` is set (and no ``path`` is given), else SQLite at
    ``path`` (default: the data dir's ``threads.sqlite``).
    """
    from graph.graph import build_graph

    with checkpointer(path) as saver:
        yield build_graph(checkpointer=saver)


@contextmanager
def checkpointer(path: Path | None = None) -> Iterator[Any]:
    """The configured checkpointer, open for the block (see ``thread_graph``)."""
    from crag_core.settings import settings

    env = settings()
    if env.checkpoint_url and path is None:
        password = password_of(env.checkpoint_password_file)
        with postgres_checkpointer(env.checkpoint_url, env.service_timeout_s, password) as saver:
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = path or threads_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with SqliteSaver.from_conn_string(str(path)) as saver:
        yield saver


def password_of(path: Path | None) -> str | None:
    """The password kept in ``path`` (its first line), if a file is named."""
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError) as exc:
        raise ConfigError(
            f"CRAG_CHECKPOINT_PASSWORD_FILE {path} holds no readable password."
        ) from exc


@contextmanager
def postgres_checkpointer(url: str, timeout_s: float, password: str | None = None) -> Iterator[Any]:
    """A ``PostgresSaver`` on ``url``, its tables created if new.

    ``password`` (from a file) is used instead of one in the URL. Connecting and every statement
    time out after ``timeout_s``; an unreachable server, a refused password or a bad URL is a
    ``ConfigError`` naming the server (never the password).
    """
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    if not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError("CRAG_CHECKPOINT_URL must be a postgresql://user@host:port/db URL.")
    try:
        where = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise ConfigError(f"CRAG_CHECKPOINT_URL is not a valid PostgreSQL URL: {exc}") from exc
    server = f"{where.get('host', 'localhost')}:{where.get('port', 5432)}/{where.get('dbname', '')}"
    try:
        conninfo = psycopg.conninfo.make_conninfo(
            url, **({"password": password} if password else {})
        )
        conn = psycopg.connect(
            conninfo,
            autocommit=True,  # what PostgresSaver expects: it manages its own transactions
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=max(1, round(timeout_s)),
            options=f"-c statement_timeout={round(timeout_s * 1000)}",
        )
    except psycopg.Error as exc:
        said = str(exc).replace(password, "***") if password else str(exc)
        raise ConfigError(f"Cannot connect to PostgreSQL at {server}: {said}") from exc
    with conn:
        saver = PostgresSaver(conn)
        saver.setup()
        yield saver
