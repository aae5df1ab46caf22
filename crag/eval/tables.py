"""Markdown tables: the one writer every report and benchmark uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def markdown_table(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]], missing: str = "—"
) -> str:
    """``rows`` as one Markdown table with ``columns`` (key, label); absent values: ``missing``."""
    lines = [
        "| " + " | ".join(label for _, label in columns) + " |",
        "|" + "---|" * len(columns),
    ]
    for row in rows:
        cells = [missing if row.get(key) is None else str(row[key]) for key, _ in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cell(text: Any) -> str:
    """Free text made safe for one table cell: one line, pipes escaped, never empty."""
    return " ".join(str(text).split()).replace("|", "\\|") or "(empty)"
