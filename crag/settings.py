"""Process-wide settings: where crag keeps its state.

Everything crag writes (the Chroma store, the joined model file, caches) lives under one
data dir: ``CRAG_DATA_DIR`` if set, otherwise ``.crag/`` at the project root.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    """Return the data dir, creating it if needed."""
    path = Path(os.environ.get("CRAG_DATA_DIR") or PROJECT_ROOT / ".crag").expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path
