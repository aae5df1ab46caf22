"""A table as crag holds it: read from a file, stored, described, queried; and as JSON.

The shapes only (no I/O): ``crag_core.clients.table_store`` writes and queries them, the
readers in ``crag_core.formats.table_rows`` make them, the SQL rules in ``crag_core.text.sql``
and ``sql_grammar`` write prompts and grammars from them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

Cell = int | float | str | None

ALLOWED_FUNCTIONS = frozenset(
    """
    abs avg coalesce count date datetime group_concat ifnull iif instr julianday length like
    lower ltrim max min nullif replace round rtrim strftime substr substring sum time total
    trim upper cast glob
    """.split()
)
"""The SQL functions a query may call (no ``load_extension``, ``zeroblob``, ``randomblob``…)."""

RESERVED = frozenset(
    """
    add all alter and as asc between by case cast check collate column commit constraint create
    cross current default delete desc distinct drop else end escape except exists filter for
    foreign from full glob group having if in index inner insert intersect into is isnull join
    key left like limit match natural not notnull null of offset on or order outer over
    partition primary range references regexp right rows select set table then to union unique
    update using values when where window with
    """.split()
)
"""SQL words a column may be named but a query cannot write bare (``msleep``'s ``order``)."""


def sql_name(name: str) -> str:
    """A column's name as a query writes it: quoted when it is an SQL word (``"order"``)."""
    return f'"{name}"' if name.lower() in RESERVED else name


def sql_text(value: object) -> str:
    r"""A value as a query writes it: a string in single quotes, a quote inside doubled.

    ``'Cote d''Ivoire'``: shown as Python writes it (``"Cote d'Ivoire"``), the model wrote
    ``'Cote d\'Ivoire'``, which no SQL reads.
    """
    if not isinstance(value, str):
        return repr(value)
    return "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True)
class Column:
    """A column as read from a file: its safe name, the file's name for it, and its type.

    ``type``: ``INTEGER``, ``REAL``, ``DATE`` (ISO text) or ``TEXT``.
    """

    name: str
    original: str
    type: str


@dataclass(frozen=True)
class Table:
    """A table as read from a file: a safe name, its sheet ("" for a CSV), columns, rows.

    ``name`` comes from the file's name and the sheet's; ``rows[i]`` is the file's row
    ``row_numbers[i]`` (1-based, the header row counted), so an answer can cite the rows it
    used. ``whole``: the table is what its document holds (a PDF or a page whose text is
    mostly its tables), as a spreadsheet's sheet is; else it is incidental to a text.
    """

    name: str
    sheet: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    row_numbers: tuple[int, ...]
    whole: bool = False


@dataclass(frozen=True)
class ColumnInfo:
    """A stored column: safe name, the file's name for it, type, and its values if few."""

    name: str
    original: str
    type: str
    distinct: int
    values: tuple[str, ...]


@dataclass(frozen=True)
class TableInfo:
    """A stored table and where it came from."""

    name: str
    doc_id: str
    label: str
    sheet: str
    rows: int
    columns: tuple[ColumnInfo, ...]
    whole: bool = False
    """The table is what its document holds (``Table.whole``)."""

    def column(self, name: str) -> ColumnInfo | None:
        """Its column called ``name`` (as SQL reads names: whatever the case), None if none."""
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


@dataclass(frozen=True)
class QueryResult:
    """What a query returned: column names, rows, whether rows were cut, the tables read."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    truncated: bool
    tables: tuple[str, ...]


def table_json(table: Table) -> str:
    """``table`` as JSON text (how a shared store keeps it on the server)."""
    columns = [[c.name, c.original, c.type] for c in table.columns]
    return json.dumps(
        {
            "name": table.name,
            "sheet": table.sheet,
            "columns": columns,
            "rows": table.rows,
            "row_numbers": table.row_numbers,
            "whole": table.whole,
        },
        ensure_ascii=False,
    )


def table_from_json(text: str) -> Table:
    """The ``Table`` that ``table_json`` wrote."""
    data = json.loads(text)
    return Table(
        name=str(data["name"]),
        sheet=str(data["sheet"]),
        columns=tuple(Column(*map(str, c)) for c in data["columns"]),
        rows=tuple(tuple(row) for row in data["rows"]),
        row_numbers=tuple(int(n) for n in data["row_numbers"]),
        whole=bool(data.get("whole", False)),
    )
