"""A name compared with a column of codes, and the subquery that compares it through the key.

"SELECT avg(dep_delay) FROM flights WHERE carrier = 'Envoy Air'" finds no rows: ``carrier``
holds codes ('MQ'), the name is a value of ``airlines.name``, and ``airlines.carrier`` is the
key ``flights.carrier`` holds. The 1.5B model, told only that the name is elsewhere, wrote
the same query again (the loop's budget then ended on the repeat); told the subquery, it can
copy it. ``through_keys`` says it:

    carrier matches airlines.carrier: write carrier IN (SELECT carrier FROM airlines WHERE
    name = 'Envoy Air')

The key is found in the data, not the names: a column of the table that holds the name whose
every value is distinct (one row each) and that holds at least ``KEY_SHARE`` of the compared
column's distinct values (``origin`` and ``dest`` of flights are ``airports.faa``, a name no
key rule reads). The name is the query's value when another table lists it, or one the
question says that another table lists ("flights to Kansas City Intl" written as ``dest =
'KANS'``). Feedback only: the model writes the query, the checks read it as any other.

The other way round, ``codes_said``: a code the query compares that stands for a name the
question says ("out of Newark Liberty Intl" written ``origin = 'EWR'``, the row of
``airports`` whose ``faa`` is 'EWR' named so) is said, not a condition the model made up.

Before any query, ``with_identifiers``: a row the question names by its identifier ("order
10922", "flight 1545"), which no catalog lists (a number column lists no values, a text
column of many values not all), is found in the data and named as a listed value is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from crag_core.clients.table_store import TableStore
from crag_core.errors import TableQueryError
from crag_core.text.joins import keys_of, referred
from crag_core.text.sql import asked_tables, match_tables, says_name, touches_column
from crag_core.text.sql_tree import is_number
from crag_core.text.sql_tree import read as read_sql
from crag_core.text.table_checks import naming
from crag_core.text.table_shapes import ColumnInfo, TableInfo, sql_name, sql_text
from crag_core.text.words import STOPWORDS, words_of

MAX_IDENTIFIERS = 3
"""Identifiers of a question looked up in the data at most."""
NUMBERED = frozenset({"number", "no", "id", "code"})
"""Words between a row's kind and its identifier: "order number 10922", "order no. 10922"."""
KEY_SHARE = 0.5
"""Of the compared column's distinct values, the share a key column must hold."""
MAX_SAID = 2
"""Subqueries said per query at most."""


def through_keys(
    store: TableStore,
    sql: str,
    read: Sequence[TableInfo],
    catalog: Sequence[TableInfo],
    question: str = "",
) -> list[str]:
    """The subqueries that compare ``sql``'s unheld text values through a key, as feedback.

    ``read``: the tables the query read (the compared column is one of theirs). [] when no
    compared value is a name another table lists and links by a key.
    """
    said: list[str] = []
    for name, value in read_sql(sql).equalities():
        owned = _owner(name, read)
        if owned is None or _holds(store, *owned, value):
            continue
        owner, column = owned
        for holder, named, held in _holders(value, question, owner, catalog):
            key = _key(store, owner, column, holder, named)
            if key is None:
                continue
            said.append(
                f"{column.name} matches {holder.name}.{key.name}: write {sql_name(column.name)} "
                f"IN (SELECT {sql_name(key.name)} FROM {sql_name(holder.name)} "
                f"WHERE {sql_name(named.name)} = {sql_text(held)})"
            )
            break
    return list(dict.fromkeys(said))[:MAX_SAID]


def keys_returned(
    store: TableStore, sql: str, read: Sequence[TableInfo], catalog: Sequence[TableInfo]
) -> dict[str, str]:
    """The columns ``sql`` returns as they are that hold the keys of another table.

    "Which state had the highest traffic fatality rate in 1986?" answered by ``SELECT state
    FROM fatality …`` gives 35: ``fatality.state`` holds the keys of
    ``cigar_state_codes.state`` (found in the data as ``through_keys`` finds them), whose
    ``name`` names the states. {column (lower case): "cigar_state_codes.state (named by
    name)"}; only tables with a column that names their rows (``table_checks.naming``).
    """
    query = read_sql(sql)
    if query.selects_computed:
        return {}
    found: dict[str, str] = {}
    for name in query.selected:
        owned = _owner(name, read)
        if owned is None:
            continue
        owner, column = owned
        for holder in (t for t in catalog if t.name != owner.name):
            names = naming(holder.columns)
            key = _key(store, owner, column, holder, names[0]) if names else None
            if key is not None:
                said = ", ".join(sql_name(c.name) for c in names)
                found[name.lower()] = f"{holder.name}.{key.name} (named by {said})"
                break
    return found


def with_identifiers(
    question: str, catalog: Sequence[TableInfo], store: TableStore
) -> list[TableInfo]:
    """``catalog`` with each identifier ``question`` names listed as its column's value.

    An identifier is a word of three characters or more with a digit in it ("10922",
    "N283JB") said right after a word of its column's name ("order 10922": ``order_id``;
    "order number 10922" too), held by a row of a column that lists no values (a number
    column, or text of too many values): the catalog lists the values a question may name a
    row by, and no store lists every order number. Found in the data, at most
    ``MAX_IDENTIFIERS`` per question; a store that cannot be read adds nothing.
    """
    held: dict[tuple[str, str], list[str]] = {}
    for table, column, value in _rows_named(question, catalog, store):
        held.setdefault((table.name, column.name), []).append(value)
    if not held:
        return list(catalog)
    return [
        dataclasses.replace(
            table,
            columns=tuple(
                dataclasses.replace(column, values=_listed(column, held[table.name, column.name]))
                if (table.name, column.name) in held
                else column
                for column in table.columns
            ),
        )
        for table in catalog
    ]


def _listed(column: ColumnInfo, found: Sequence[str]) -> tuple[str, ...]:
    """``column``'s listed values with the identifiers ``found`` in it, once each."""
    return column.values + tuple(dict.fromkeys(v for v in found if v not in column.values))


def identifier_hint(
    question: str, tables: Sequence[TableInfo], catalog: Sequence[TableInfo], store: TableStore
) -> str:
    """The shape shown to the first query of a row named through another's identifier, or "".

    "Who is the contact person of the customer that placed order 10922?" asks of
    ``customers`` by a row of ``orders``: ``orders`` holds ``order_id`` 10922 and
    ``customer_id``, the key of ``customers``, which lacks ``order_id``. Shown only the
    schema, the 1.5B model joined the two and read the customer's columns off the orders'
    alias, five times of five, and again when the database's error named the table (rjoins
    calibration records at 0c3331a). The shape said: ``SELECT <column> FROM customers
    WHERE customer_id IN (SELECT customer_id FROM orders WHERE order_id = 10922)``. Only
    where one table of the ``catalog`` leads from the identifier to one of the ``tables``
    that lacks its column.
    """
    found: set[tuple[str, str, str, str, str]] = set()  # (holder, column, key, target, value)
    for holder, column, value in _rows_named(question, catalog, store):
        for target in tables:
            if target.name == holder.name or target.column(column.name):
                continue
            keys = keys_of(holder, target, catalog)
            if len(keys) == 1:
                found.add((holder.name, column.name, keys[0], target.name, value))
    if len(found) != 1:
        return ""
    ((owner, named, key, asked, value),) = found
    written = value if is_number(value) else sql_text(value)
    inner = f"SELECT {sql_name(key)} FROM {sql_name(owner)} WHERE {sql_name(named)}"
    return (
        f"-- The question asks of the row of {asked} that the row of {owner} whose {named} "
        f"is {value} names. A query of this kind: SELECT <column> FROM {sql_name(asked)} WHERE "
        f"{sql_name(key)} IN ({inner} = {written})\n"
    )


def _rows_named(
    question: str, catalog: Sequence[TableInfo], store: TableStore
) -> Iterator[tuple[TableInfo, ColumnInfo, str]]:
    """Each (table, column, value as stored) of an identifier the question says.

    A column of a word said right before the identifier ("order 10922": ``order_id``) that
    lists no values and holds it (``with_identifiers``).
    """
    said = _identifiers(words_of(question))
    for table in catalog:
        for column in table.columns:
            if column.type not in ("INTEGER", "TEXT") or (
                column.type == "TEXT" and len(column.values) >= column.distinct
            ):
                continue
            for kind, identifier in said:
                if touches_column([kind], column.original):
                    value = _stored(store, table, column, identifier)
                    if value:
                        yield table, column, value


def _identifiers(words: Sequence[str]) -> list[tuple[str, str]]:
    """Each (kind, identifier) the words say: "order 10922", "order number 10922"."""
    said = []
    for i, word in enumerate(words):
        if i == 0 or len(word) < 3 or not any(ch.isdigit() for ch in word):
            continue
        kind = words[i - 2] if words[i - 1] in NUMBERED and i > 1 else words[i - 1]
        if kind not in STOPWORDS:  # "in 10922" says no kind
            said.append((kind, word))
    return said[:MAX_IDENTIFIERS]


def tables_asked(question: str, catalog: Sequence[TableInfo], store: TableStore) -> list[TableInfo]:
    """The tables ``question`` is asked of (``asked_tables``), identifiers counted.

    A row named by its identifier names its table as a listed value does (``with_identifiers``).
    """
    return asked_tables(question, with_identifiers(question, catalog, store))


def _same_name(held: str, value: str) -> bool:
    """Whether a table's value ``held`` is ``value`` (case aside) or as people write it."""
    return held.casefold() == value.casefold() or says_name(held, value)


def codes_said(
    store: TableStore, sql: str, catalog: Sequence[TableInfo], question: str
) -> dict[str, str]:
    """The text values ``sql`` compares that stand for a name ``question`` says: code → name.

    A value is a code when a table's text column lists it and another text column holds
    one value in every row of that code, which the question says (``says_name``:
    "ExpressJet Airlines" says 'ExpressJet Airlines Inc.'; 'SDN' is 'San Diego Padres' in
    each season's row of ``teams``). A number compared with a key named after a table is
    one when that table's row of the number is named so: ``category_id = 3`` for "our
    Confections products", where 3 is the row of ``categories`` named 'Confections' (a
    key guessed right; 2, Condiments, is not said). {} when none is.
    """
    query = read_sql(sql)
    compared = [
        (table, key, value)
        for _, value in query.equalities()
        for table in catalog
        for key in table.columns
        if key.type == "TEXT" and value in key.values
    ]
    for name, value in query.numbers_equal():
        owned = referred(name, catalog)  # read once: it reads every table's columns
        owner = next((t for t in catalog if t.name == owned), None)
        key = owner.column(name) if owner else None
        if owner and key and key.type in ("INTEGER", "REAL") and is_number(value):
            compared.append((owner, key, value))
    codes: dict[str, str] = {}
    for table, key, value in compared:
        named = _row_names(store, table, key, value)
        said = next((n for n in named if says_name(n, question)), "")
        if said:
            codes[value] = said
    return codes


def _row_names(store: TableStore, table: TableInfo, key: ColumnInfo, value: str) -> list[str]:
    """The text cells of ``table`` one value in every row whose ``key`` is ``value``.

    A unique key's one row, or a code's rows that all name one thing.
    """
    others = [c for c in table.columns if c.type == "TEXT" and c.name != key.name]
    if not others:
        return []
    cells = ", ".join(f'COUNT(DISTINCT "{c.name}"), MAX("{c.name}")' for c in others)
    compared = value if key.type in ("INTEGER", "REAL") else sql_text(value)  # a number read
    sql = f'SELECT {cells} FROM "{table.name}" WHERE "{key.name}" = {compared}'
    try:
        rows = store.query(sql, max_rows=1).rows
    except TableQueryError:
        return []
    row = rows[0] if rows else ()
    pairs = zip(row[0::2], row[1::2], strict=True)
    return [str(v) for n, v in pairs if n == 1 and isinstance(v, str) and v]


def _owner(name: str, read: Sequence[TableInfo]) -> tuple[TableInfo, ColumnInfo] | None:
    """The first table of ``read`` with a column ``name`` (a prefix left out), and that column."""
    for table in read:
        if (column := table.column(name.split(".")[-1])) is not None:
            return table, column
    return None


def _stored(store: TableStore, table: TableInfo, column: ColumnInfo, value: str) -> str | None:
    """``value`` as ``column`` of ``table`` spells it ("n283jb": 'N283JB'), whatever the case.

    "" when no row has it; None when the store cannot be read.
    """
    sql = (
        f'SELECT "{column.name}" FROM "{table.name}" '
        f'WHERE lower("{column.name}") = lower({sql_text(value)}) LIMIT 1'
    )
    try:
        rows = store.query(sql, max_rows=1).rows
    except TableQueryError:
        return None
    return str(rows[0][0]) if rows else ""


def _holds(store: TableStore, table: TableInfo, column: ColumnInfo, value: str) -> bool:
    """Whether a row of ``table`` holds ``value`` in ``column`` (whatever the case).

    Asked of the data: a column of many values lists only a few in the catalog.
    """
    if value.casefold() in {v.casefold() for v in column.values}:
        return True
    spelled = _stored(store, table, column, value)
    return spelled is None or bool(spelled)  # unread: say nothing of it


def _holders(
    value: str, question: str, owner: TableInfo, catalog: Sequence[TableInfo]
) -> Iterator[tuple[TableInfo, ColumnInfo, str]]:
    """Columns of other tables that list ``value``, then those listing a value the question says."""
    for table in catalog:
        for column in table.columns:
            if table.name != owner.name:
                held = next((v for v in column.values if _same_name(v, value)), None)
                if held is not None:
                    yield table, column, held
    for match in match_tables(question, catalog) if question else []:
        if match.table.name == owner.name:
            continue
        for said in match.values:
            for column in match.table.columns:
                if said in column.values:
                    yield match.table, column, said


def _key(
    store: TableStore, owner: TableInfo, column: ColumnInfo, holder: TableInfo, named: ColumnInfo
) -> ColumnInfo | None:
    """The column of ``holder`` that ``owner.column`` holds the values of, or None.

    One of ``holder``'s unique columns (other than ``named``, of ``column``'s type) holding at
    least ``KEY_SHARE`` of the compared column's distinct values; the most of them if several.
    """
    best: ColumnInfo | None = None
    most = 0.0
    for key in holder.columns:
        if key.name == named.name or key.type != column.type or key.distinct != holder.rows:
            continue
        sql = (
            f'SELECT COUNT(DISTINCT "{column.name}"), COUNT(DISTINCT CASE WHEN "{column.name}" '
            f'IN (SELECT "{key.name}" FROM "{holder.name}") THEN "{column.name}" END) '
            f'FROM "{owner.name}"'
        )
        try:
            distinct, held = store.query(sql, max_rows=1).rows[0]
        except TableQueryError:
            continue
        share = int(held or 0) / int(distinct) if distinct else 0.0
        if share >= KEY_SHARE and share > most:
            best, most = key, share
    return best
