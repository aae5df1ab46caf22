"""Multi-turn threads: the graph with a SQLite checkpointer under the data dir.

Each ``thread_id`` keeps its state between calls; ``contextualize_question`` resolves a
follow-up ("what about its population?") against the thread's earlier turns. The exported
``graph.graph:graph`` has no checkpointer (``langgraph dev`` brings its own); this module is
how the CLI, notebooks and the Python API get persistent threads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from adapters.errors import ConfigError

THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


def threads_path() -> Path:
    """The SQLite file holding every thread's checkpoints."""
    from adapters.settings import data_dir

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
    """The CRAG graph compiled with a SQLite checkpointer at ``path`` (default: data dir)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from graph.graph import build_graph

    path = path or threads_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with SqliteSaver.from_conn_string(str(path)) as saver:
        yield build_graph(checkpointer=saver)
