"""predictions.jsonl: one JSON record per answered question, appended as each one finishes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def append_record(predictions: Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one line: a run cut short keeps every record it finished."""
    with predictions.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_records(path: Path, records: list[dict[str, Any]]) -> None:
    """Write ``records`` as ``path``'s whole content, one JSON line each."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")


def done_ids(predictions: Path) -> set[str]:
    """Ids already answered in ``predictions`` (a torn last line is ignored)."""
    if not predictions.exists():
        return set()
    ids = set()
    for line in predictions.read_text(encoding="utf-8").splitlines():
        try:
            ids.add(json.loads(line)["id"])
        except (ValueError, KeyError, TypeError):
            continue
    return ids


def read_records(predictions: Path) -> list[dict[str, Any]]:
    """Every complete record of ``predictions``."""
    records = []
    for line in predictions.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records
