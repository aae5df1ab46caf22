"""Tables as tables: the rows of a CSV file or a workbook's sheets, with typed columns.

A table's first non-empty row names its columns; each column gets the one type all its filled
cells share — ``INTEGER``, ``REAL``, ``DATE`` (ISO ``YYYY-MM-DD``, or ``YYYY-MM-DD HH:MM:SS``
when a time is given) or ``TEXT`` — and every cell is converted to it ("1,234" → 1234, an
Excel date → "2025-03-14"; a column named for the year whose dates are all the first of
January holds the years, 2005). Column names are made safe for SQL (lower case letters, digits
and ``_``, never two alike) and the originals kept beside them. Nothing here does I/O.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import itertools
import re
from collections.abc import Iterable, Sequence

from crag_core.text.table_shapes import Column, Table

ColumnType = str
"""``INTEGER``, ``REAL``, ``DATE`` or ``TEXT``."""

MAX_COLUMNS = 200
"""Columns past this many are left out of a table (still in the file's text)."""
MAX_NAME = 48
"""The longest safe name a table or column gets."""

_INT = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)")
_REAL = re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?")
DATE_FORMATS = (
    "%Y/%m/%d",
    "%b %d %Y",
    "%B %d %Y",
    "%b %d, %Y",
    "%B %d, %Y",
    "%d %B %Y",
    "%d %b %Y",
)
"""Other spellings of a date read as one: none where day and month could swap (3/4/2025)."""
MISSING = frozenset({"na", "n/a", "nan", "null", "none", "-", "—", "–"})
"""Cells that say a value is missing (read as empty)."""


def safe_name(text: str, taken: Iterable[str] = (), fallback: str = "column") -> str:
    """``text`` as an SQL name: lower case letters, digits and ``_``, not in ``taken``.

    It never starts with a digit or ``_`` (a prefix is added) and is at most ``MAX_NAME``
    characters; a clash gets ``_2``, ``_3``…
    """
    name = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:MAX_NAME].rstrip("_")
    if not name:
        name = fallback
    elif not name[0].isalpha():
        name = f"{fallback[0]}_{name}"[:MAX_NAME]
    used = set(taken)
    candidate, n = name, 1
    while candidate in used:
        n += 1
        candidate = f"{name[: MAX_NAME - len(str(n)) - 1]}_{n}"
    return candidate


def table_from_rows(file_name: str, sheet: str, rows: Iterable[Sequence[object]]) -> Table | None:
    """The table whose first non-empty row is its header; ``None`` without a data row.

    ``file_name``: the file's name without its suffix (with ``sheet``, the table's name).
    """
    numbered = [
        (i, [_cell(v) for v in row[:MAX_COLUMNS]])
        for i, row in enumerate(rows, start=1)
        if any(_cell(v) is not None for v in row[:MAX_COLUMNS])
    ]
    if len(numbered) < 2:
        return None
    header = numbered[0][1]
    width = max(len(r) for _, r in numbered)
    names: list[str] = []
    originals = [
        str(header[j]).strip() if j < len(header) and header[j] is not None else ""
        for j in range(width)
    ]
    for j, original in enumerate(originals):
        names.append(safe_name(original, names, fallback=f"column_{j + 1}"))
    body = [(i, r + [None] * (width - len(r))) for i, r in numbered[1:]]
    types = [column_type(r[j] for _, r in body) for j in range(width)]
    for j, name in enumerate(names):  # "year": 2005-01-01 is the year 2005
        if types[j] == "DATE" and "year" in name.split("_"):
            if all(str(convert(r[j], "DATE")).endswith("-01-01") for _, r in body if r[j]):
                types[j] = "YEAR"
    columns = tuple(
        Column(n, o or n, "INTEGER" if t == "YEAR" else t)
        for n, o, t in zip(names, originals, types, strict=True)
    )
    typed_rows = tuple(tuple(convert(v, t) for v, t in zip(r, types, strict=True)) for _, r in body)
    name = safe_name(f"{file_name} {sheet}", fallback="table")
    return Table(name, sheet, columns, typed_rows, tuple(i for i, _ in body))


def has_header(rows: Sequence[Sequence[object]]) -> bool:
    """Whether a table's first row names its columns: every cell filled, none a number."""
    first = [_cell(v) for v in rows[0]] if rows else []
    return bool(first) and all(v is not None and _kind(v) == "TEXT" for v in first)


def document_tables(
    file_name: str, found: Sequence[tuple[str, list[list[str]]]]
) -> tuple[Table, ...]:
    """The tables of a page or document (HTML, Markdown, Word) that have a header row.

    ``found``: each table's place ("" when it has none: it is then "table N") and its rows.
    """
    tables = []
    for n, (place, rows) in enumerate(found, start=1):
        if len(rows) < 2 or not has_header(rows):
            continue
        table = table_from_rows(file_name, place or f"table {n}", rows)
        if table:
            tables.append(table)
    return tuple(tables)


def pipe_tables(markdown: str) -> list[tuple[str, list[list[str]]]]:
    """Markdown pipe tables (a header row, then a ``---`` row): each with its heading."""
    found: list[tuple[str, list[list[str]]]] = []
    heading, rows = "", list[list[str]]()
    lines = markdown.splitlines() + [""]
    for line, following in zip(lines, lines[1:] + [""], strict=True):
        cells = pipe_cells(line)
        if cells is not None and (rows or is_rule_row(pipe_cells(following))):
            if not is_rule_row(cells):
                rows.append(cells)
            continue
        if rows:
            found.append((heading, rows))
            rows = []
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
    return found


def pipe_cells(line: str) -> list[str] | None:
    """The cells of a Markdown pipe-table line ("| a | b |"); None for any other line."""
    stripped = line.strip()
    if len(stripped) < 2 or not (stripped.startswith("|") and stripped.endswith("|")):
        return None
    return [c.strip() for c in stripped[1:-1].split("|")]


def is_rule_row(cells: list[str] | None) -> bool:
    """Whether a pipe-table row is the ``|---|:--:|`` line under its header."""
    return bool(cells) and all(re.fullmatch(r":?-{3,}:?", c) for c in cells or [])


def csv_table(file_name: str, text: str) -> Table | None:
    """The table of a CSV file's text (see ``csv_rows``); ``None`` if it has none."""
    try:
        return table_from_rows(file_name, "", csv_rows(text))
    except csv.Error:
        return None


def csv_rows(text: str) -> list[list[str]]:
    """A CSV file's rows (comma, semicolon, tab or bar separated); ``csv.Error`` if damaged.

    The separator is the one that splits the first lines into the same number (above one) of
    cells most often; a comma when none does.
    """
    head = list(itertools.islice(io.StringIO(text), 50))
    best, best_score = ",", 0
    for delimiter in ",;\t|":
        try:
            widths = [len(r) for r in csv.reader(head, delimiter=delimiter) if r]
        except csv.Error:
            continue
        score = sum(w == widths[0] for w in widths) if widths and widths[0] > 1 else 0
        if score > best_score:
            best, best_score = delimiter, score
    return list(csv.reader(io.StringIO(text), delimiter=best))


def _cell(value: object) -> object:
    """A cell as read: ``None`` when empty, text stripped, anything else as it is."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.strip()
        return None if not value or value.lower() in MISSING else value
    return value


def column_type(values: Iterable[object]) -> ColumnType:
    """The type every filled cell of a column fits (``TEXT`` when they share none)."""
    kinds = {_kind(v) for v in values if v is not None}
    if not kinds:
        return "TEXT"
    if kinds == {"INTEGER"}:
        return "INTEGER"
    if kinds <= {"INTEGER", "REAL"}:
        return "REAL"
    if kinds == {"DATE"}:
        return "DATE"
    return "TEXT"


def _kind(value: object) -> ColumnType:
    if isinstance(value, bool):
        return "TEXT"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "REAL"
    if isinstance(value, dt.date):
        return "DATE"
    text = str(value)
    if _INT.fullmatch(text):
        return "INTEGER"
    if _REAL.fullmatch(text):
        return "REAL"
    if _DATE.fullmatch(text) or _other_date(text):
        return "DATE"
    return "TEXT"


def _other_date(text: str) -> dt.date | None:
    for spelling in DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, spelling).date()
        except ValueError:
            continue
    return None


def convert(value: object, kind: ColumnType) -> int | float | str | None:
    """``value`` as a cell of a ``kind`` column."""
    if value is None:
        return None
    if kind == "INTEGER":
        return value if isinstance(value, int) else int(str(value).replace(",", ""))
    if kind == "YEAR":
        return int(str(convert(value, "DATE"))[:4])
    if kind == "REAL":
        return (
            float(value) if isinstance(value, int | float) else float(str(value).replace(",", ""))
        )
    if kind == "DATE":
        if isinstance(value, dt.datetime):
            return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
        if isinstance(value, dt.date):
            return value.isoformat()
        other = _other_date(str(value))
        return other.isoformat() if other else str(value).replace("T", " ")
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return str(value)
