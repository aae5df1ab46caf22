"""The collection's tables in SQLite: written at ingest, read by queries that cannot write.

One file per collection (``<store>/tables/<collection>.sqlite3``) holds every table crag read
from the collection's documents (a CSV file, each sheet of a workbook), each as an SQL table
with typed columns and ``_row`` (the row's number in its file), and a catalog:
``crag_tables`` (table, document, label, sheet, rows, whether the table is its document's
whole content) and ``crag_columns`` (safe name, the
file's own name, type, and the values of a column that holds few). A document's tables are
replaced or removed in one transaction, so a write cut short leaves the old tables or the new
ones, never both or half.

Queries (``TableStore.query``) are SQL the model wrote; the safety is in code, not in a
prompt: a connection opened read-only (``mode=ro``) with ``query_only`` on, an authorizer
that allows reading the data tables and calling listed functions and denies everything else
(writes, ``PRAGMA``, ``ATTACH``, the catalog and SQLite's own tables, recursive queries),
one statement, no extensions, limits on the statement's and any value's length, a row limit
and a time budget kept by the wall clock: a progress handler every 1,000 steps, a watchdog that
interrupts the query at its deadline, and limits small enough that no single step can outrun
it (a value at most 100,000 bytes, a ``LIKE``/``GLOB`` pattern at most 200: the longest step
they allow, a pattern match or ``instr`` over the longest value, takes about 0.05 s; at
SQLite's own limits one ``LIKE`` took 38 s).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote

from crag_core.errors import KnowledgeBaseError, TableQueryError
from crag_core.text.table_shapes import ALLOWED_FUNCTIONS, ColumnInfo, QueryResult, Table, TableInfo

SCHEMA = """
CREATE TABLE IF NOT EXISTS crag_tables (
    name TEXT PRIMARY KEY, doc_id TEXT NOT NULL, label TEXT NOT NULL, sheet TEXT NOT NULL,
    row_count INTEGER NOT NULL, position INTEGER NOT NULL, whole INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS crag_tables_doc ON crag_tables (doc_id);
CREATE TABLE IF NOT EXISTS crag_columns (
    table_name TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL,
    original TEXT NOT NULL, type TEXT NOT NULL, distinct_count INTEGER NOT NULL,
    frequent_values TEXT NOT NULL, PRIMARY KEY (table_name, position)
);
"""

MAX_ROWS = 50
"""Rows a query returns at most (more are reported as cut)."""
QUERY_BUDGET_S = 2.0
"""Seconds a query may run."""
MAX_SQL_CHARS = 4_000
SCHEMA_SQL_CHARS = 100_000
"""The longest statement SQLite parses: a stored table's CREATE TABLE (200 columns of names
up to 48 characters) is within it; a query is held to ``MAX_SQL_CHARS`` before it runs."""
MAX_VALUE_BYTES = 100_000
"""The longest string or blob a query may build or read (``zeroblob(10**9)`` is refused; a
spreadsheet's cell holds at most 32,767 characters)."""
MAX_PATTERN_BYTES = 200
"""The longest pattern a ``LIKE`` or ``GLOB`` may match with (its work grows with it)."""
MANY_VALUES = 2_000
"""A text column with at most this many distinct values has them listed in the catalog (each
at most ``VALUE_CHARS`` long; a longer one is left out, and the list is then not complete), so
a row named by any of them (one of 142 countries, of 58 districts) is found."""
VALUE_CHARS = 80

_OK, _DENY = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY


class TableStore:
    """One collection's tables (see the module's text).

    ``refresh`` is called before the catalog is read: a shared store's copy catches up with
    the server there (``KnowledgeBase.sync``).
    """

    def __init__(self, path: Path, refresh: Callable[[], object] | None = None):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._refresh = refresh

    def _writer(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            conn.executescript(SCHEMA)
            _add_whole(conn)
        except (OSError, sqlite3.Error) as exc:
            raise KnowledgeBaseError(f"Cannot open the table store at {self.path}: {exc}") from exc
        return conn

    def replace_document(self, doc_id: str, label: str, tables: Sequence[Table]) -> None:
        """Store ``tables`` as document ``doc_id``'s, replacing its old ones, in one transaction."""
        if not tables and not self.path.exists():
            return
        with self._lock:
            conn = self._writer()
            try:
                conn.execute("BEGIN IMMEDIATE")
                _drop_document(conn, doc_id)
                taken = {r[0] for r in conn.execute("SELECT name FROM crag_tables")}
                for position, table in enumerate(tables):
                    name = table_name(table.name, taken, doc_id, position)
                    taken.add(name)
                    _create(conn, name, doc_id, label, position, table)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                conn.close()

    def remove_document(self, doc_id: str) -> None:
        """Remove document ``doc_id``'s tables."""
        self.replace_document(doc_id, "", ())

    def clear(self) -> None:
        """Remove every table (the collection was dropped)."""
        with self._lock:
            for suffix in ("", "-journal", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def catalog(self) -> list[TableInfo]:
        """Every stored table with its columns, in the order documents and sheets give them."""
        if self._refresh is not None:
            self._refresh()
        if not self.path.exists():
            return []
        with self._reader() as conn:
            whole = "whole" if "whole" in _catalog_columns(conn) else "0"
            tables = conn.execute(
                f"SELECT name, doc_id, label, sheet, row_count, {whole} FROM crag_tables "
                "ORDER BY label, position"
            ).fetchall()
            columns: dict[str, list[ColumnInfo]] = {}
            for row in conn.execute(
                "SELECT table_name, name, original, type, distinct_count, frequent_values "
                "FROM crag_columns ORDER BY table_name, position"
            ):
                columns.setdefault(row[0], []).append(
                    ColumnInfo(row[1], row[2], row[3], row[4], tuple(json.loads(row[5])))
                )
        return [
            TableInfo(name, doc_id, label, sheet, rows, tuple(columns.get(name, [])), bool(whole))
            for name, doc_id, label, sheet, rows, whole in tables
        ]

    def table_names(self) -> set[str]:
        """The names of the stored tables (the catalog's, without their columns)."""
        if not self.path.exists():
            return set()
        with self._reader() as conn:
            return _names(conn)

    def sample(self, table: str, n: int = 3) -> QueryResult:
        """The first ``n`` rows of ``table`` (a name from the catalog)."""
        if table not in self.table_names():
            raise TableQueryError(f"no table named {table!r}")
        return self.query(f'SELECT * FROM "{table}" LIMIT {int(n)}', max_rows=n)

    def query(
        self, sql: str, max_rows: int = MAX_ROWS, budget_s: float = QUERY_BUDGET_S
    ) -> QueryResult:
        """Run one read-only ``SELECT``; ``TableQueryError`` says why one was refused or failed."""
        if len(sql) > MAX_SQL_CHARS:
            raise TableQueryError(f"the query is longer than {MAX_SQL_CHARS} characters")
        if not self.path.exists():
            raise TableQueryError("the collection has no tables")
        read: list[str] = []

        def authorize(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
            if action == sqlite3.SQLITE_SELECT:
                return _OK
            if action == sqlite3.SQLITE_READ:
                if arg1 in data_tables:
                    if arg1 not in read:
                        read.append(arg1)
                    return _OK
                return _DENY
            if action == sqlite3.SQLITE_FUNCTION:
                return _OK if (arg2 or "").lower() in ALLOWED_FUNCTIONS else _DENY
            return _DENY

        deadline = time.monotonic() + budget_s
        with self._reader() as conn:
            data_tables = _names(conn)  # read before the authorizer, which denies the catalog
            conn.set_authorizer(authorize)
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1_000)
            watchdog = threading.Timer(max(deadline - time.monotonic(), 0.0), conn.interrupt)
            watchdog.daemon = True
            watchdog.start()
            try:
                cursor = conn.execute(sql)
                if cursor.description is None:
                    raise TableQueryError("only a SELECT may be run")
                rows = cursor.fetchmany(max_rows + 1)
            except sqlite3.Warning as exc:  # "You can only execute one statement at a time."
                raise TableQueryError(f"one statement only: {exc}") from exc
            except sqlite3.DatabaseError as exc:
                raise TableQueryError(_reason(exc, deadline)) from exc
            except (sqlite3.ProgrammingError, ValueError, OverflowError) as exc:
                raise TableQueryError(str(exc)) from exc
            finally:
                watchdog.cancel()
            names = tuple(d[0] for d in cursor.description)
        return QueryResult(
            names,
            tuple(tuple(r) for r in rows[:max_rows]),
            len(rows) > max_rows,
            tuple(read),
        )

    def _reader(self) -> _Reader:
        return _Reader(self.path)


class _Reader:
    """A read-only connection (closed on exit): no extensions, bounded lengths, no ATTACH."""

    def __init__(self, path: Path):
        self.path = path
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                f"file:{quote(str(self.path.resolve()))}?mode=ro", uri=True, timeout=5
            )
        except sqlite3.Error as exc:
            raise TableQueryError(f"the table store cannot be read: {exc}") from exc
        conn.execute("PRAGMA query_only = ON")
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        # The query's own length is checked before it runs (``MAX_SQL_CHARS``); SQLite's limit
        # also bounds the stored CREATE TABLE statements it parses, and a sheet of 200 long
        # column names is longer than a query may be.
        conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, SCHEMA_SQL_CHARS)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_PATTERN_BYTES)
        self.conn = conn
        return conn

    def __exit__(self, *_: object) -> None:
        if self.conn is not None:
            self.conn.close()


def _add_whole(conn: sqlite3.Connection) -> None:
    """Give a store written before ``whole`` its column (its tables: not whole, as they were)."""
    if "whole" in _catalog_columns(conn):
        return
    try:
        conn.execute("ALTER TABLE crag_tables ADD COLUMN whole INTEGER NOT NULL DEFAULT 0")
    except sqlite3.OperationalError as exc:  # another writer added it first
        if "duplicate column" not in str(exc):
            raise


def _catalog_columns(conn: sqlite3.Connection) -> set[str]:
    return {str(row[1]) for row in conn.execute("PRAGMA table_info(crag_tables)")}


def _names(conn: sqlite3.Connection) -> set[str]:
    return {str(name) for (name,) in conn.execute("SELECT name FROM crag_tables")}


def _reason(exc: sqlite3.DatabaseError, deadline: float) -> str:
    text = str(exc)
    if "interrupted" in text and time.monotonic() > deadline:
        return f"the query ran past its {QUERY_BUDGET_S:g} s budget"
    if "not authorized" in text or "prohibited" in text or "authorization denied" in text:
        return f"not allowed: {text} (a query may only read the collection's tables)"
    return text


RESERVED_PREFIXES = ("sqlite_", "crag_")
"""Table names the store keeps for itself: SQLite's own (``sqlite_master``, ``sqlite_stat1``…,
which SQLite refuses to create) and crag's catalog (``crag_tables``, ``crag_columns``), compared
without case, as SQLite compares names."""
NAME_TRIES = 1_000
"""Numbered names (``sales_2``, ``sales_3``…) tried for a table before its document's own."""
MAX_TABLE_NAME = 60


def table_name(name: str, taken: set[str], doc_id: str, position: int) -> str:
    """A name for a document's table that no other table and no reserved name has.

    ``name`` (a safe name, ``crag_core.formats.table_rows.safe_name``) in a reserved namespace
    (``RESERVED_PREFIXES``) is moved out of it (``sqlite_master`` -> ``t_sqlite_master``); a
    name taken (``taken``, compared without case) is numbered, at most ``NAME_TRIES`` times, then
    named for the document and the table's place in it, which no other document's table has.
    ``KnowledgeBaseError`` if even that is taken.
    """
    stem = name if name and not _reserved(name) else f"t_{name or 'table'}"
    used = {t.lower() for t in taken}
    for n in range(1, NAME_TRIES + 1):
        suffix = "" if n == 1 else f"_{n}"
        candidate = stem[: MAX_TABLE_NAME - len(suffix)] + suffix
        if candidate.lower() not in used and not _reserved(candidate):
            return candidate
    own = f"t_{hashlib.sha256(doc_id.encode()).hexdigest()[:16]}_{position + 1}"
    if own.lower() in used:
        raise KnowledgeBaseError(
            f"no free name for the table {name[:60]!r} ({NAME_TRIES:,} names like it are taken)"
        )
    return own


def _reserved(name: str) -> bool:
    return name.lower().startswith(RESERVED_PREFIXES)


def _drop_document(conn: sqlite3.Connection, doc_id: str) -> None:
    old = [r[0] for r in conn.execute("SELECT name FROM crag_tables WHERE doc_id = ?", (doc_id,))]
    for name in old:
        conn.execute(f'DROP TABLE IF EXISTS "{_checked(name)}"')
        conn.execute("DELETE FROM crag_columns WHERE table_name = ?", (name,))
    conn.execute("DELETE FROM crag_tables WHERE doc_id = ?", (doc_id,))


def _create(
    conn: sqlite3.Connection, name: str, doc_id: str, label: str, position: int, table: Table
) -> None:
    columns = list(table.columns)
    kinds = {"INTEGER": "INTEGER", "REAL": "REAL"}
    defs = ", ".join(f'"{_checked(c.name)}" {kinds.get(c.type, "TEXT")}' for c in columns)
    conn.execute(f'CREATE TABLE "{_checked(name)}" ("_row" INTEGER NOT NULL, {defs})')
    marks = ", ".join("?" * (len(columns) + 1))
    conn.executemany(
        f'INSERT INTO "{name}" VALUES ({marks})',
        [(n, *row) for n, row in zip(table.row_numbers, table.rows, strict=True)],
    )
    conn.execute(
        "INSERT INTO crag_tables (name, doc_id, label, sheet, row_count, position, whole) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (name, doc_id, label, table.sheet, len(table.rows), position, int(table.whole)),
    )
    for i, column in enumerate(columns):
        distinct = conn.execute(f'SELECT COUNT(DISTINCT "{column.name}") FROM "{name}"').fetchone()[
            0
        ]
        values: list[str] = []
        if column.type == "TEXT" and distinct <= MANY_VALUES:
            values = [
                str(v)
                for v, _ in conn.execute(
                    f'SELECT "{column.name}", COUNT(*) AS n FROM "{name}" '
                    f'WHERE "{column.name}" IS NOT NULL GROUP BY 1 ORDER BY n DESC, 1'
                )
                if len(str(v)) <= VALUE_CHARS
            ]
        conn.execute(
            "INSERT INTO crag_columns VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name, i, column.name, column.original, column.type, distinct, json.dumps(values)),
        )


def _checked(name: str) -> str:
    """``name`` if it is a safe SQL name (letters, digits, ``_``), else ``KnowledgeBaseError``."""
    if not name or not all(c.isascii() and (c.isalnum() or c == "_") for c in name):
        raise KnowledgeBaseError(f"unsafe table or column name {name!r}")
    return name
