"""Benchmarks that print tables: quality, cost and speed, each against its baseline in one run.

Their results and how to run each are in docs/benchmarks/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_results(out: Path, name: str, summary: str, table: str, data: dict[str, Any]) -> None:
    """Write ``<name>-table.md`` (summary and table) and ``<name>.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}-table.md").write_text(f"{summary}\n\n{table}\n")
    (out / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
