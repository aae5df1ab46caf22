"""One query over the collection's tables, run behind the store's guards and checked.

``run_query`` runs a SELECT (read-only, behind the table store's authorizer, row limit and
time budget) and says what its answer is and what is wrong with it: a value its column spells
otherwise, one the question does not say, a year in a column of other numbers, a value no
table holds (a false premise), no rows, or what ``crag_core.text.table_checks`` finds.
``schema_of`` is what the model writes its query against. The table graph
(``nodes.tools.table_graph``) runs one attempt after another through here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from crag_core.clients.table_store import TableStore
from crag_core.errors import TableQueryError
from crag_core.text.answer_type import alternatives
from crag_core.text.sql import (
    Span,
    column_words,
    did_you_mean,
    held_by,
    held_elsewhere,
    incidental,
    missing_values,
    misspelled,
    result_answer,
    schema,
    unasked_values,
)
from crag_core.text.sql_repair import rejoined
from crag_core.text.sql_tree import conditions, contradictions, ordered_values
from crag_core.text.sql_tree import read as read_sql
from crag_core.text.table_checks import both_idiom, findings, misread_years, nothing_found
from crag_core.text.table_shapes import Cell, ColumnInfo, QueryResult, TableInfo, sql_text
from nodes.tools.table_keys import codes_said, keys_returned, through_keys

SQL_ATTEMPTS = 2
"""Queries written per question: the first, and one retry told the database's error."""
RESULT_ROWS = 1_000
"""Rows read of a result: a list the model wrote without DISTINCT is named each value once
from all of them (the answer lists at most ``crag_core.text.sql.MAX_LISTED``)."""


@dataclass(frozen=True)
class Attempted:
    """One query written for a table question, run and checked."""

    attempt: int
    """0: the query written in code (``computed_query``); 1, 2: the model's."""
    sql: str
    result: QueryResult | None
    answer: str
    premise: bool
    """The answer says the table has no such value (a false premise)."""
    reason: str
    """What the checks found wrong ("" when nothing)."""
    versions: dict[str, str]
    judged: float | None = None
    """The judge's P(yes) that the query computes what the question asks (None: not judged;
    ``nodes.tools.table_graph.judge_query``)."""

    @property
    def passed(self) -> bool:
        """Whether the query ran, gave an answer and passed every check."""
        return self.result is not None and bool(self.answer) and not self.reason


def schema_of(
    store: TableStore,
    tables: list[TableInfo],
    question: str = "",
    ranges: dict[str, dict[str, Span]] | None = None,
) -> str:
    """The schema the model writes against: ``tables`` with a few rows and ranges each.

    ``ranges``: the tables' ``spans``, when already measured.
    """
    if ranges is None:
        ranges = {t.name: spans(store, t) for t in tables}
    return schema(tables, [store.sample(t.name) for t in tables], question, ranges)


SPAN_COLUMNS = 20
"""Columns measured per query by ``spans`` (a query's text stays under the store's limit)."""


def spans(store: TableStore, table: TableInfo) -> dict[str, Span]:
    """Each number or date column's smallest and largest value."""
    measured = [c for c in table.columns if c.type != "TEXT"]
    found: dict[str, Span] = {}
    for start in range(0, len(measured), SPAN_COLUMNS):
        some = measured[start : start + SPAN_COLUMNS]
        parts = ", ".join(f'MIN("{c.name}"), MAX("{c.name}")' for c in some)
        row = store.query(f'SELECT {parts} FROM "{table.name}"', max_rows=1).rows[0]
        found |= {c.name: (row[2 * i], row[2 * i + 1]) for i, c in enumerate(some)}
    return found


def run_query(
    store: TableStore,
    sql: str,
    tables: list[TableInfo],
    catalog: list[TableInfo],
    question: str = "",
    ranges: dict[str, dict[str, Span]] | None = None,
) -> tuple[str, QueryResult | None, str, bool, str]:
    """Run ``sql``: the query run, its result and answer, whether that is a false premise, why.

    Why (what is wrong) is "" when nothing is. The query run is ``sql``, or it mended
    (``crag_core.text.sql_repair.rejoined``) when the database refused it for a column a
    table lacks and the catalog's keys say where it is.
    A comparison with a value no table of the collection holds answers that the table has no
    such value (a false premise), not what the query found; a value the column holds spelled
    otherwise, or a result that does not pass the checks (``checked``), is an answer with
    what is wrong with it. Tables inside pages give no false premise (their text may hold the
    value).
    """
    if not sql:
        return sql, None, "", False, "the reply held no SELECT"
    try:
        result, sql = run_mended(store, sql, catalog)
    except TableQueryError as exc:
        return sql, None, "", False, did_you_mean(str(exc), tables, sql)
    spelled = misspelled(sql, tables)
    if spelled:
        return sql, result, "", False, "; ".join(spelled)
    read = [t for t in tables if t.name in result.tables]
    unasked = unasked_values(sql, read, question) if question else []
    if unasked:
        keyed = through_keys(store, sql, read, catalog, question)
        return sql, result, "", False, "; ".join([*unasked, *keyed])
    misread = misread_years(question, sql, read, ranges or {})
    if misread:
        return sql, result, "", False, "; ".join(misread)
    premise = missing_values(sql, read, catalog) or absent_numbers(
        store, sql, read, ranges, catalog
    )
    if premise and not any(incidental(t) for t in read):
        return sql, result, " ".join(premise), True, ""
    answer = result_answer(result, question)
    if not answer:
        held = [
            *both_at_once(sql),
            *held_elsewhere(sql, catalog),
            *numbers_elsewhere(store, sql, read or tables, catalog),
            *through_keys(store, sql, read or tables, catalog, question),
            held_by(sql, read or tables, ranges or {}),
        ]
        why = premise[0] if premise else "; ".join(h for h in held if h)
        return sql, result, "", False, "it returned no rows" + (f" ({why})" if why else "")
    found = checked(store, question, sql, result, tables, catalog, read, ranges)
    return sql, result, answer, False, "; ".join(dict.fromkeys(text for _, text in found))


def checked(
    store: TableStore,
    question: str,
    sql: str,
    result: QueryResult,
    tables: list[TableInfo],
    catalog: list[TableInfo],
    read: list[TableInfo],
    ranges: dict[str, dict[str, Span]] | None = None,
) -> list[tuple[str, str]]:
    """``table_checks.findings`` of a result, with what they read off the data.

    The codes the query compares that the question says by name (``codes_said``), the empty
    cells of the columns a share tests (``empty_cells``) and the keys of other tables it
    returns (``keys_returned``), in ``read``, the tables the query reads. ``run_query`` and
    the benchmarks' ``tools refusals`` check through this one place.
    """
    codes = codes_said(store, sql, catalog, question)
    empty = empty_cells(store, sql, read)
    keyed = keys_returned(store, sql, read, catalog)
    unmet = unmet_conditions(store, sql, read) if nothing_found(result) else []
    tied = tied_order(store, sql) if alternatives(question) else None
    return findings(
        question, sql, result, tables, ranges, catalog, codes, empty, keyed, unmet, tied
    )


def tied_order(store: TableStore, sql: str) -> tuple[Cell, ...] | None:
    """What a ``… ORDER BY … LIMIT 1`` query orders by, when its first two rows share it.

    None when they differ, when it has no such order, or the probe cannot run
    (``sql_tree.ordered_values``).
    """
    probe = ordered_values(sql)
    if not probe:
        return None
    try:
        rows = store.query(probe, max_rows=2).rows
    except TableQueryError:
        return None
    return rows[0] if len(rows) == 2 and rows[0] == rows[1] else None


def unmet_conditions(store: TableStore, sql: str, read: list[TableInfo]) -> list[tuple[str, str]]:
    """The conditions of ``sql`` (``sql_tree.conditions``) that no row of their table meets.

    Each run alone on its table, one row at most; one the database refuses is left out.
    """
    columns = {t.name.lower(): frozenset(c.name.lower() for c in t.columns) for t in read}
    names = {t.name.lower(): t.name for t in read}
    unmet = []
    for table, condition in conditions(sql, columns):
        probe = f'SELECT 1 FROM "{names[table]}" WHERE {condition} LIMIT 1'
        try:
            if not store.query(probe, max_rows=1).rows:
                unmet.append((names[table], condition))
        except TableQueryError:
            continue
    return unmet


def empty_cells(store: TableStore, sql: str, read: list[TableInfo]) -> dict[str, int]:
    """Rows with no value of each column a share of ``sql`` tests, in the tables it reads.

    ``Query.share_tested``'s columns (lower case), counted over the whole table: the check
    (``table_checks._share_of_empty``) asks whether any row of the share can be empty.
    """
    empty: dict[str, int] = {}
    for name in read_sql(sql).share_tested:
        for table in read:
            if (column := table.column(name)) is None:
                continue
            count = f'SELECT COUNT(*) FROM "{table.name}" WHERE "{column.name}" IS NULL'
            rows = int(store.query(count, max_rows=1).rows[0][0] or 0)
            empty[name.lower()] = empty.get(name.lower(), 0) + rows
    return empty


def run_mended(store: TableStore, sql: str, catalog: list[TableInfo]) -> tuple[QueryResult, str]:
    """``sql``'s result and the query run (``sql``, or it ``rejoined``).

    Mended only when the database refused ``sql`` and the catalog's keys mend it; the
    database's first error is raised when neither runs.
    """
    try:
        return store.query(sql, max_rows=RESULT_ROWS), sql
    except TableQueryError as first:
        mended = rejoined(sql, catalog)
        if mended == sql:
            raise
        try:
            return store.query(mended, max_rows=RESULT_ROWS), mended
        except TableQueryError:
            raise first from None


def absent_numbers(
    store: TableStore,
    sql: str,
    tables: list[TableInfo],
    ranges: dict[str, dict[str, Span]] | None = None,
    catalog: list[TableInfo] | None = None,
) -> list[str]:
    """A query's ``column = number`` that no row of its table holds, as sentences.

    "year = 1960" where the years are 1952, 1957…: "gapminder.csv has no year 1960 (it has
    1952 to 2007)." ``ranges``: the tables' ``spans``, when already measured. A number
    another number column of the ``catalog`` holds is no false premise, as a text another
    column holds is none (``missing_values``): "How much was Derek Jeter paid in 2010?" as
    ``birth_year = 2010`` compared the wrong column, ``salaries.year`` holds 2010.
    """
    missing = []
    for table, column, number in _unheld_numbers(store, sql, tables):
        if _holders_of_its_kind(store, catalog or [], column, number):
            continue
        measured = (ranges or {}).get(table.name) or spans(store, table)
        low, high = measured.get(column.name, (None, None))
        missing.append(f"{table.label} has no {column.original} {number} (it has {low} to {high}).")
    return list(dict.fromkeys(missing))


def both_at_once(sql: str) -> list[str]:
    """What a query that found no rows is told of two values one column must equal at once.

    "Which players won both a Gold Glove and a Silver Slugger in 2015?" as ``award = 'Gold
    Glove' AND award = 'Silver Slugger'``: a row holds one award; the rows of both are
    grouped by what the query returns and counted (``sql_tree.contradictions``).
    """
    key = ", ".join(read_sql(sql).selected) or "<what has both>"
    return [
        f"{column} = {sql_text(a)} AND {column} = {sql_text(b)} holds of no row (a row has one "
        f"{column}): for what has both, " + both_idiom(column, a, b, key)
        for column, a, b in contradictions(sql)
    ]


def numbers_elsewhere(
    store: TableStore, sql: str, tables: list[TableInfo], catalog: list[TableInfo]
) -> list[str]:
    """A query's ``column = number`` its table does not hold where a column of its kind does.

    What a query that found no rows is told ("no row of people has birth_year 2010;
    salaries.year holds it"): the number is the question's, the column is not.
    """
    read = {t.lower() for t in read_sql(sql).tables}
    found = []
    for table, column, number in _unheld_numbers(store, sql, tables):
        holders = _holders_of_its_kind(store, catalog, column, number)
        holders.sort(key=lambda h: h.split(".")[0].lower() not in read)  # the query's first
        if holders:
            where = f"{holders[0]} holds" if len(holders) == 1 else f"{holders[0]} and others hold"
            found.append(f"no row of {table.name} has {column.name} {number}; {where} it")
    return list(dict.fromkeys(found))


def _unheld_numbers(
    store: TableStore, sql: str, tables: list[TableInfo]
) -> Iterator[tuple[TableInfo, ColumnInfo, str]]:
    """Each ``column = number`` of ``sql`` whose number column of ``tables`` holds no such row."""
    for name, number in read_sql(sql).numbers_equal():
        for table in tables:
            column = next((c for c in table.columns if c.name == name.lower()), None)
            if column is None or column.type not in ("INTEGER", "REAL"):
                continue
            if not _holds_number(store, table, column, number):
                yield table, column, number


def _holds_number(store: TableStore, table: TableInfo, column: ColumnInfo, number: str) -> bool:
    """Whether a row of ``table`` holds ``number`` in ``column``."""
    probe = f'SELECT 1 FROM "{table.name}" WHERE "{column.name}" = {number} LIMIT 1'
    return bool(store.query(probe, max_rows=1).rows)


def _holders_of_its_kind(
    store: TableStore, catalog: list[TableInfo], compared: ColumnInfo, number: str
) -> list[str]:
    """The other number columns of the ``catalog`` of the same kind that hold ``number``.

    As ``table.column``. Of the same kind: a word of its name is one of ``compared``'s
    (``year`` beside ``birth_year``): a count that happens to equal a year says nothing of it.
    """
    kind = set(column_words(compared.name))
    return [
        f"{table.name}.{column.name}"
        for table in catalog
        for column in table.columns
        if column.type in ("INTEGER", "REAL")
        and column is not compared
        and kind & set(column_words(column.name))
        and _holds_number(store, table, column, number)
    ]
