"""Process-wide settings: where crag keeps its state.

Everything crag writes (the Chroma store, the joined model file, caches) lives under one
data dir: ``CRAG_DATA_DIR`` if set, otherwise ``.crag/`` at the project root.
"""

from __future__ import annotations

import os
from pathlib import Path

from adapters.errors import ConfigError

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    """Return the data dir, creating it if needed."""
    path = Path(os.environ.get("CRAG_DATA_DIR") or PROJECT_ROOT / ".crag").expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"The data dir {path} cannot be created ({exc.strerror or exc}); "
            "set CRAG_DATA_DIR to a writable directory."
        ) from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"The data dir {path} is not writable; set CRAG_DATA_DIR.")
    return path
