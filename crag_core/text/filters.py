"""Metadata filters: ``type=pdf,modified>=2026-01-01`` as a Chroma ``where`` filter.

Conditions are ``key OP value`` joined by commas, all of which must hold. Keys are the chunk
metadata ingestion records: ``source`` (the file's absolute path), ``type`` (a type of
``crag_core.formats.extract.FILE_TYPES``: ``pdf``, ``xlsx``, ``notebook``...), ``title``,
``doc_id``, ``heading``, ``page``, and the dates ``modified`` (the file's) and ``ingested``.
Operators: ``=`` and ``!=`` for every key (``type=csv|xlsx``: one of several values); ``>=``,
``<=``, ``>`` and ``<`` for ``page`` and the dates, which are written ``YYYY-MM-DD`` (UTC
midnight).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crag_core.errors import ConfigError

TEXT_KEYS = frozenset({"source", "type", "title", "doc_id", "heading"})
NUMBER_KEYS = frozenset({"page"})
DATE_KEYS = frozenset({"modified", "ingested"})
OPERATORS = {"=": "$eq", "!=": "$ne", ">=": "$gte", "<=": "$lte", ">": "$gt", "<": "$lt"}
_CONDITION = re.compile(r"^\s*(\w+)\s*(!=|>=|<=|=|>|<)\s*(.+?)\s*$")
USAGE = (
    "use key=value, key=a|b, key!=value, page>=N or modified>=YYYY-MM-DD, joined by commas; keys: "
    + ", ".join(sorted(TEXT_KEYS | NUMBER_KEYS | DATE_KEYS))
)


def parse_where(text: str) -> dict[str, Any] | None:
    """The Chroma filter for ``text`` (``None`` when empty); ``ConfigError`` if unreadable."""
    conditions = [_condition(part) for part in text.split(",") if part.strip()]
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else {"$and": conditions}


def _condition(part: str) -> dict[str, Any]:
    match = _CONDITION.match(part)
    if not match:
        raise ConfigError(f"Cannot read the filter {part.strip()!r}: {USAGE}.")
    key, op, raw = match.groups()
    value: Any
    if key in TEXT_KEYS:
        if op not in ("=", "!="):
            raise ConfigError(f"{key} takes = or != only, not {op!r}.")
        if "|" in raw and key != "source":  # one of several values
            values = [v.strip() for v in raw.split("|") if v.strip()]
            return {key: {"$in" if op == "=" else "$nin": values}}
        value = str(Path(raw).expanduser().resolve()) if key == "source" else raw
    elif key in NUMBER_KEYS:
        if not raw.isdigit():
            raise ConfigError(f"{key} needs a whole number, got {raw!r}.")
        value = int(raw)
    elif key in DATE_KEYS:
        try:
            day = datetime.strptime(raw, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError as exc:
            raise ConfigError(f"{key} needs a date YYYY-MM-DD, got {raw!r}.") from exc
        value = int(day.timestamp())
    else:
        raise ConfigError(f"Unknown filter key {key!r}: {USAGE}.")
    return {key: {OPERATORS[op]: value}}
