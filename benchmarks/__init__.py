"""Benchmarks that print tables: quality, cost and speed, each against its baseline in one run.

Four shelves: ``fixtures/`` (what tests and benchmarks start: the server, Chroma, PostgreSQL,
model servers, Chromium, sample files), ``calibration/`` (what sets shipped numbers: the mixed
dataset, the evidence probe, the decision replay, the confidence fit), ``measurements/`` (one
module per benchmark, each with its make target) and ``data/`` (the question sets). Their
results and how to run each are in docs/benchmarks/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
"""The checkout."""
DATA = Path(__file__).with_name("data")
"""The benchmarks' question sets."""


def write_results(out: Path, name: str, summary: str, table: str, data: dict[str, Any]) -> None:
    """Write ``<name>-table.md`` (summary and table) and ``<name>.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}-table.md").write_text(f"{summary}\n\n{table}\n")
    (out / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
