"""A query read once into a tree (sqlglot, SQLite's dialect): what the table checks read of it.

The checks of a query the model wrote ask the same few things of it — which columns it
compares with which values, which it reads through a date function — and used to ask them
of its text with a regular expression each, which disagreed (one read ``==`` and ``LIKE``,
another not) and let a quoted column (``"Name" = 'x'``), a value written first
(``1987 = year``) or an ``IN`` list through. ``read`` parses the query once (cached by its
text) and every check reads the same ``Comparison`` list.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

_OPS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NullSafeEQ: "is",
    exp.Is: "is",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.Like: "like",
    exp.ILike: "like",
}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATED = {"=": "!=", "is": "is not", "like": "not like", "in": "not in", ">=": "<", "<=": ">"}
"""A comparison under ``NOT``: no value the column should hold (``NOT IN ('Total')``)."""
EQUAL = frozenset({"=", "is", "like", "in"})
"""The operators that compare a column with one value it should hold."""
_DATED = re.compile(r"(?:STRFTIME|DATE|DATETIME|JULIANDAY|TIME|UNIXEPOCH)\(", re.I)


@dataclass(frozen=True)
class Comparison:
    """A column compared with a literal: ``name = 'Queen'``, ``year > 1990``, ``x IN (1, 2)``.

    A comparison with another column or a subquery has no ``value`` (``None``); an ``IN``
    list is one comparison per value, a ``BETWEEN`` one per bound (``>=`` and ``<=``).
    """

    column: str
    """The column's name as written, unquoted (a table's prefix left out)."""
    op: str
    """``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``like``, ``in`` or ``is`` (``not like``,
    ``not in``, ``is not`` under ``NOT``), as read from the column's side (``1987 < year``
    is ``year > 1987``)."""
    value: str | None
    """The literal as written (a text unquoted, ``''`` read as ``'``; a number's digits)."""
    text: bool
    """Whether the literal is a text ('…'), not a number."""
    dated: bool = False
    """Whether the column is read through a date function (``strftime('%Y', date)``)."""


@dataclass(frozen=True)
class Query:
    """What the checks read of a query."""

    comparisons: tuple[Comparison, ...]
    dated: tuple[str, ...]
    """The columns read through a date function anywhere in the query."""
    parsed: bool
    """Whether the query parsed (a query that does not is read as comparing nothing)."""
    order: str = ""
    """``ASC`` or ``DESC``: the direction of the last ORDER BY's first term ("" for none)."""
    offsets: tuple[int, ...] = ()
    """The rows skipped, each OFFSET's (``LIMIT 1, 1`` skips 1)."""
    below_extreme: bool = False
    """Whether a column is compared below or above a subquery's MAX or MIN (``hp < (SELECT
    MAX(hp) …)``: the second of an order)."""
    bounded: bool = False
    """Whether the query compares anything with ``<``, ``<=``, ``>`` or ``>=``."""
    subtracts: bool = False
    """Whether the query subtracts anything (a negative literal is no subtraction)."""
    selects_computed: bool = False
    """Whether the outermost SELECT computes what it returns: arithmetic or an aggregate."""
    order_computed: bool = False
    """Whether an ORDER BY orders by a product or a quotient (``ORDER BY hp / wt``)."""
    self_subtracted: bool = False
    """Whether the query subtracts an expression from itself (``x - x``, ``CAST(x …) - x``,
    ``SUM(t) - SUM(t)``): a difference that is 0 whatever the rows hold."""
    selected: tuple[str, ...] = ()
    """The columns the outermost SELECT's expressions read, in order, once each."""
    numbers: tuple[float, ...] = ()
    """The query's number literals (unsigned: ``-3`` is 3)."""
    constants: tuple[float, ...] = ()
    """Its number literals but a LIMIT's and an OFFSET's: the numbers it computes with."""
    counts: bool = False
    """Whether the query counts (``COUNT``)."""
    nested: bool = False
    """Whether the query holds a subquery (in its FROM, a comparison, a list, anywhere)."""
    texts: tuple[str, ...] = ()
    """The query's text literals ('2007-01-01', '6+')."""
    aggregates: bool = False
    """Whether the query aggregates anywhere (COUNT, SUM, AVG, MIN, MAX, TOTAL…)."""
    ordered_limit: bool = False
    """Whether the query orders its rows and keeps the first few (ORDER BY … LIMIT)."""
    filters: bool = False
    """Whether the query has a WHERE clause anywhere."""
    columns: tuple[str, ...] = ()
    """The names of every column the query reads, anywhere, in order, once each (as written,
    quotes removed: ``"Fuel Economy"`` is ``Fuel Economy``)."""
    tables: tuple[str, ...] = ()
    """The names of the tables the query reads, in order, once each (quotes removed)."""
    nulls: bool = False
    """Whether the query reads NULL anywhere (``IS NULL``, ``IS NOT NULL``)."""
    scales: tuple[float, ...] = ()
    """The number literals it multiplies or divides by (``x * 1000``, ``100.0 / n``)."""
    averages: bool = False
    """Whether it takes an average: ``AVG``, or reads or names a column for one (``mean_x``,
    ``mass AS average_mass``)."""
    grouped: bool = False
    """Whether it groups its rows (GROUP BY) anywhere."""
    summed: tuple[str, ...] = ()
    """The columns a ``SUM``, ``TOTAL`` or ``AVG`` adds up as they are (``SUM(T1.category_id)``:
    ``category_id``; not ``SUM(price * quantity)``)."""
    aliases: tuple[tuple[str, str], ...] = ()
    """Each table's alias and the table it names (``("t2", "order_details")`` for
    ``order_details AS T2``), lower-cased."""
    share_tested: tuple[str, ...] = ()
    """The columns a share tests row by row (``SUM(CASE WHEN dep_delay > 15 THEN 1 ELSE 0
    END) * 100 / COUNT(*)``, ``AVG(CASE WHEN … THEN 1 ELSE 0 END)``): a row whose column is
    empty counts in it as one that fails the test."""

    def reads(self, column: str) -> bool:
        """Whether the query reads ``column`` anywhere (names compared in any case)."""
        return column.lower() in {c.lower() for c in self.columns}

    def equalities(self) -> list[tuple[str, str]]:
        """The columns compared for equality with a text: (column, value); not through a date."""
        return [
            (c.column, c.value)
            for c in self.comparisons
            if c.op in EQUAL and c.text and c.value is not None and not c.dated
        ]

    def numbers_equal(self) -> list[tuple[str, str]]:
        """The columns compared for equality with a number: (column, the number as written)."""
        return [
            (c.column, c.value)
            for c in self.comparisons
            if c.op == "=" and not c.text and c.value is not None and not c.dated
        ]

    def compared(self) -> list[str]:
        """The names of the columns the query compares with anything, in order, once each."""
        return list(dict.fromkeys(c.column for c in self.comparisons))


@functools.lru_cache(maxsize=512)
def _parsed(sql: str) -> exp.Expr | None:
    """``sql``'s tree, parsed once per text; None when it does not parse.

    Shared by every reader here, so never changed in place: one that rewrites a part copies it.
    """
    try:
        return sqlglot.parse_one(sql, read="sqlite")
    except (SqlglotError, RecursionError):  # too deeply nested for the parser
        return None


@functools.lru_cache(maxsize=512)
def read(sql: str) -> Query:
    """``sql`` read into a tree once (cached by its text); nothing compared if it does not parse."""
    tree = _parsed(sql)
    if tree is None:
        return Query((), (), parsed=False)
    found: list[Comparison] = []
    for node in tree.walk(bfs=False):  # in the order written
        read = _comparisons(node)
        if isinstance(node.parent, exp.Not) or node.args.get("negate"):  # NOT x / x NOT LIKE
            read = [replace(c, op=_NEGATED.get(c.op, c.op)) for c in read]
        found += read
    dated = [
        column.name
        for call in tree.find_all(exp.Func, bfs=False)
        if _date_function(call)
        for column in call.find_all(exp.Column)
    ]
    literals = list(tree.find_all(exp.Literal, bfs=False))
    numeric = [n for n in literals if not n.is_string and is_number(n.this)]
    outer = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    projections = outer.expressions if outer else []
    selected = [c.name for e in projections for c in e.find_all(exp.Column)]
    return Query(
        tuple(found),
        tuple(dict.fromkeys(dated)),
        parsed=True,
        order=_order(tree),
        offsets=tuple(
            n for o in tree.find_all(exp.Offset) if (n := _int(o.expression)) is not None
        ),
        below_extreme=any(_below_extreme(node) for node in tree.find_all(*_BOUNDS)),
        bounded=tree.find(*_BOUNDS) is not None,
        subtracts=tree.find(exp.Sub) is not None,
        selects_computed=any(e.find(*_COMPUTED) is not None or _total(e) for e in projections),
        order_computed=any(o.this.find(exp.Mul, exp.Div) for o in tree.find_all(exp.Ordered)),
        self_subtracted=any(_self_subtraction(node) for node in tree.find_all(exp.Sub)),
        selected=tuple(dict.fromkeys(selected)),
        numbers=tuple(float(n.this) for n in numeric),
        constants=tuple(
            float(n.this) for n in numeric if not n.find_ancestor(exp.Limit, exp.Offset)
        ),
        counts=tree.find(exp.Count) is not None,
        nested=sum(1 for _ in tree.find_all(exp.Select)) > 1,
        texts=tuple(str(n.this) for n in literals if n.is_string),
        aggregates=tree.find(exp.AggFunc) is not None or _total(tree),
        ordered_limit=tree.find(exp.Order) is not None and tree.find(exp.Limit) is not None,
        filters=tree.find(exp.Where) is not None,
        columns=tuple(dict.fromkeys(c.name for c in tree.find_all(exp.Column, bfs=False))),
        tables=tuple(dict.fromkeys(t.name for t in tree.find_all(exp.Table, bfs=False))),
        nulls=tree.find(exp.Null) is not None,
        scales=tuple(float(n.this) for n in numeric if isinstance(n.parent, exp.Mul | exp.Div)),
        averages=tree.find(exp.Avg) is not None or any(_AVERAGE.search(n) for n in _names(tree)),
        grouped=tree.find(exp.Group) is not None,
        summed=tuple(
            dict.fromkeys(
                column.name
                for call in tree.find_all(exp.Sum, exp.Avg)
                if isinstance(column := _unwrapped(call.this), exp.Column)
            )
        ),
        aliases=tuple(
            dict.fromkeys(
                (t.alias.lower(), t.name.lower()) for t in tree.find_all(exp.Table) if t.alias
            )
        ),
        share_tested=_share_tested(tree),
    )


def _share_tested(tree: exp.Expr) -> tuple[str, ...]:
    """The columns tested by the CASE of a share over every row (``Query.share_tested``).

    A share over every row: a quotient whose divisor is ``COUNT(*)`` (its dividend's CASE),
    or an ``AVG`` of a CASE with an ELSE (a row the test fails, or whose column is empty,
    counts as 0).
    """
    over_all = [
        case
        for d in tree.find_all(exp.Div)
        if any(isinstance(c.this, exp.Star) for c in d.expression.find_all(exp.Count))
        for case in d.this.find_all(exp.Case)
    ]
    averaged = [
        case
        for a in tree.find_all(exp.Avg)
        for case in a.this.find_all(exp.Case)
        if case.args.get("default") is not None
    ]
    tested = [
        column.name
        for case in [*over_all, *averaged]
        for test in case.args.get("ifs") or []
        for column in test.this.find_all(exp.Column)
    ]
    return tuple(dict.fromkeys(tested))


_AVERAGE = re.compile(r"mean|average|avg", re.I)


def _names(tree: exp.Expr) -> list[str]:
    """The names a query's columns carry, and its aliases of a column or of a quotient.

    ``SUM(x) / COUNT(x) AS avg_x`` is an average by hand; an alias of a computation with no
    division is only the model's name for it: ``SUM(dep_delay) - SUM(…) AS
    avg_delay_difference`` takes no average (three such differences of sums given at 0.93
    on the rflights calibration run).
    """
    columns = [c.name for c in tree.find_all(exp.Column)]
    return columns + [
        a.alias
        for a in tree.find_all(exp.Alias)
        if isinstance(a.this, exp.Column) or a.this.find(exp.Div) is not None
    ]


_BOUNDS = (exp.LT, exp.LTE, exp.GT, exp.GTE)
_COMPUTED = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.AggFunc)


def _total(node: exp.Expr) -> bool:
    """Whether ``node`` calls SQLite's ``TOTAL`` (a sum sqlglot reads as an unknown function)."""
    return any(f.name.lower() == "total" for f in node.find_all(exp.Anonymous))


def _order(tree: exp.Expr) -> str:
    """The direction of the last ORDER BY's first term, in the order written ("" for none)."""
    orders = list(tree.find_all(exp.Order, bfs=False))
    if not orders or not orders[-1].expressions:
        return ""
    return "DESC" if orders[-1].expressions[0].args.get("desc") else "ASC"


def _int(node: exp.Expr | None) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string and str(node.this).isdigit():
        return int(node.this)
    return None


def is_number(text: object) -> bool:
    """Whether ``text`` reads as a number ('3', '-2.5'; not 'Tofu')."""
    try:
        float(str(text))
    except ValueError:
        return False
    return True


def _below_extreme(node: exp.Expr) -> bool:
    """Whether a bound's other side is a subquery of one MAX or MIN (``< (SELECT MAX(x) …)``)."""
    side = node.args.get("expression")
    while isinstance(side, exp.Paren):
        side = side.this
    query = side.this if isinstance(side, exp.Subquery) else side
    if not isinstance(query, exp.Select) or len(query.expressions) != 1:
        return False
    (picked,) = query.expressions
    return isinstance(picked.unalias(), exp.Max | exp.Min)


def _self_subtraction(node: exp.Expr) -> bool:
    """Whether a subtraction's two sides are one expression (``x - x``, ``SUM(t) - SUM(t)``).

    Through an outer CAST or parentheses, whatever its names' case or quotes: it is 0
    (or NULL) whatever the rows hold. ``t1.a - t2.a`` reads two rows: not the same.
    """
    left, right = (_unwrapped(node.args.get(k)) for k in ("this", "expression"))
    return left is not None and right is not None and _written(left) == _written(right)


def _written(node: exp.Expr) -> str:
    """The expression's SQL with every name lower case and unquoted."""

    def plain(part: exp.Expr) -> exp.Expr:
        if isinstance(part, exp.Identifier):
            return exp.Identifier(this=str(part.this).lower(), quoted=False)
        return part

    return node.transform(plain, copy=True).sql()


def _unwrapped(node: exp.Expr | None) -> exp.Expr | None:
    while isinstance(node, exp.Paren | exp.Cast):
        node = node.this
    return node


def _comparisons(node: exp.Expr) -> list[Comparison]:
    if isinstance(node, exp.In):
        return [_compared(node.this, "in", v) for v in node.expressions if _column(node.this)]
    if isinstance(node, exp.Between):
        low, high = node.args.get("low"), node.args.get("high")
        if not _column(node.this):
            return []
        return [_compared(node.this, ">=", low), _compared(node.this, "<=", high)]
    op = next((name for kind, name in _OPS.items() if type(node) is kind), None)
    if op is None or not isinstance(node, exp.Binary):
        return []
    left, right = node.left, node.right
    if _column(left):
        return [_compared(left, op, right)]
    if _column(right):
        return [_compared(right, _FLIPPED.get(op, op), left)]
    return []


def _column(node: exp.Expr | None) -> exp.Column | None:
    """The column a side of a comparison reads: itself, or inside a date function."""
    if isinstance(node, exp.Collate):  # name COLLATE NOCASE
        node = node.this
    if isinstance(node, exp.Column):
        return node
    if node is not None and _date_function(node):
        return next(node.find_all(exp.Column, bfs=False), None)
    return None


def _date_function(node: exp.Expr | None) -> bool:
    """Whether ``node`` calls a date function (``strftime``, ``date``, ``julianday``…).

    Read from the call as SQLite writes it; an operator (``AND``, ``=``) is no call, though
    sqlglot types it as a function too.
    """
    if not isinstance(node, exp.Func) or isinstance(node, exp.Binary | exp.Connector):
        return False
    return _DATED.match(node.sql(dialect="sqlite")) is not None


def _compared(side: exp.Expr, op: str, other: exp.Expr | None) -> Comparison:
    column = _column(side)
    assert column is not None
    value, text = _literal(other)
    dated = _date_function(side.this if isinstance(side, exp.Collate) else side)
    return Comparison(column.name, op, value, text, dated=dated)


def _literal(node: exp.Expr | None) -> tuple[str | None, bool]:
    """A literal's value as written and whether it is a text; (None, False) for anything else."""
    if isinstance(node, exp.Paren | exp.Collate):  # ('x'), 'x' COLLATE NOCASE
        node = node.this
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return f"-{node.this.this}", False
    if isinstance(node, exp.Literal):
        return str(node.this), bool(node.is_string)
    return None, False


def conditions(sql: str, columns: dict[str, frozenset[str]]) -> list[tuple[str, str]]:
    """The conditions a query's WHERE clauses AND together, each of one table's columns.

    (table, the condition written on that table alone, its columns unqualified): ``T2.x >
    T2.y`` of ``orders AS T2`` is ``("orders", "x > y")``. ``columns``: each table's column
    names (lower case), to place a column written without its table; a condition of two
    tables', of a subquery's or of a column no table or several hold is left out, as is a
    text the column should equal (a missing value is the false-premise checks' to tell).
    """
    tree = _parsed(sql)
    if tree is None:
        return []
    aliases = {t.alias_or_name.lower(): t.name.lower() for t in tree.find_all(exp.Table)}
    found: list[tuple[str, str]] = []
    for where in tree.find_all(exp.Where):
        for part in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
            if part.find(exp.Select) or _equals_text(part):
                continue
            owners = {_owner(c, aliases, columns) for c in part.find_all(exp.Column)}
            if len(owners) != 1 or None in owners:
                continue
            alone = part.copy()
            for column in alone.find_all(exp.Column):
                column.set("table", None)
            found.append((owners.pop() or "", alone.sql(dialect="sqlite")))
    return list(dict.fromkeys(found))


def contradictions(sql: str) -> list[tuple[str, str, str]]:
    """Two values one column must equal at once, which no row holds.

    ``award = 'Gold Glove' AND award = 'Silver Slugger'``: (column, first value, second
    value), as written, from the conditions a WHERE ANDs together (the same column of the
    same table; not through a function: two parts of one date are no contradiction).
    """
    tree = _parsed(sql)
    found: list[tuple[str, str, str]] = []
    for where in tree.find_all(exp.Where) if tree is not None else ():
        parts = where.this.flatten() if isinstance(where.this, exp.And) else [where.this]
        equal: dict[str, tuple[str, str]] = {}
        for part in parts:
            column = part.this.this if isinstance(part.this, exp.Collate) else part.this
            if not isinstance(part, exp.EQ) or not isinstance(column, exp.Column):
                continue
            value, _ = _literal(part.expression)
            if value is None:
                continue
            key = f"{column.table.lower()}.{column.name.lower()}"
            if key in equal and equal[key][1] != value:
                found.append((equal[key][0], equal[key][1], value))
            equal.setdefault(key, (column.name, value))
    return found


def join_reads(sql: str, columns: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """Each table of a join and the columns the query reads of it outside its ON clauses.

    ``SELECT COUNT(*) FROM batting AS T1 JOIN awards AS T2 ON T1.player_id = T2.player_id
    WHERE T2.year = 2015`` reads ``{"batting": {}, "awards": {"year"}}``. A table joined to
    two others (the bridge of ``people JOIN batting JOIN teams``) is left out: it is needed
    whatever it is read for. ``columns``: each table's column names (lower case), to place a
    column written without its table. Empty for a query of one table, one that reads a table
    twice (a self-join), one with a subquery, or one that does not parse.
    """
    joining = _joining(sql)
    if joining is None:
        return {}
    tree, names, aliases = joining
    joined = {id(c) for j in tree.find_all(exp.Join) for c in j.find_all(exp.Column)}
    partners: dict[str, set[str]] = {name: set() for name in names}
    for join in tree.find_all(exp.Join):
        linked = {_owner(c, aliases, columns) for c in join.find_all(exp.Column)} - {None}
        for name in linked:
            partners[str(name)] |= {str(t) for t in linked} - {name}
    read: dict[str, set[str]] = {name: set() for name in names}
    for column in tree.find_all(exp.Column):
        owner = _owner(column, aliases, columns)
        if id(column) not in joined and owner is not None:
            read[owner].add(column.name.lower())
    bridges = {name for name, linked in partners.items() if len(linked) > 1}
    return {name: frozenset(found) for name, found in read.items() if name not in bridges}


def _equals_text(part: exp.Expr) -> bool:
    return any(c.op in EQUAL and c.text and not c.dated for c in _comparisons(part))


def join_keys(
    sql: str, columns: dict[str, frozenset[str]]
) -> tuple[dict[tuple[str, str], frozenset[str]], dict[str, frozenset[str]]]:
    """The tables a query equates columns of, by pair, and the columns it reads of each.

    ``batting AS T2 JOIN teams AS T3 ON T2.team_id = T3.team_id WHERE T3.year = 2015`` gives
    ``{("batting", "teams"): {"team_id"}}`` (the names of both sides) and, read outside the
    equalities, ``{"batting": {}, "teams": {"year"}}``. Empty for a query with a subquery or
    a self-join, or one that does not parse (as ``join_reads``).
    """
    joining = _joining(sql)
    if joining is None:
        return {}, {}
    tree, names, aliases = joining
    pairs: dict[tuple[str, str], set[str]] = {}
    equating: set[int] = set()
    for eq in tree.find_all(exp.EQ):
        left, right = eq.this, eq.expression
        if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
            continue
        a, b = _owner(left, aliases, columns), _owner(right, aliases, columns)
        if a and b and a != b:
            pair = (a, b) if a < b else (b, a)
            pairs.setdefault(pair, set()).update({left.name.lower(), right.name.lower()})
            equating |= {id(left), id(right)}
    read: dict[str, set[str]] = {name: set() for name in names}
    for column in tree.find_all(exp.Column):
        owner = _owner(column, aliases, columns)
        if id(column) not in equating and owner is not None:
            read[owner].add(column.name.lower())
    return (
        {pair: frozenset(keys) for pair, keys in pairs.items()},
        {name: frozenset(found) for name, found in read.items()},
    )


def _joining(sql: str) -> tuple[exp.Expr, list[str], dict[str, str]] | None:
    """A join's tree, its tables' names and each name it calls a table by (lower case).

    None for a query of one table, one that reads a table twice (a self-join), one with a
    subquery, or one that does not parse.
    """
    tree = _parsed(sql)
    if tree is None or len(list(tree.find_all(exp.Select))) != 1:
        return None
    tables = list(tree.find_all(exp.Table))
    names = [t.name.lower() for t in tables]
    if len(names) < 2 or len(set(names)) != len(names):
        return None
    return tree, names, {t.alias_or_name.lower(): t.name.lower() for t in tables}


def _owner(
    column: exp.Column, aliases: dict[str, str], columns: dict[str, frozenset[str]]
) -> str | None:
    """The table that holds ``column``: its qualifier's, else the one table of that column."""
    name = column.name.lower()
    if column.table:
        table = aliases.get(column.table.lower())
        return table if table and name in columns.get(table, frozenset()) else None
    holders = [t for t in aliases.values() if name in columns.get(t, frozenset())]
    return holders[0] if len(set(holders)) == 1 else None


def ordered_values(sql: str) -> str:
    """The query of what a ``… ORDER BY … LIMIT 1`` query orders its first two rows by.

    ``SELECT name FROM teams WHERE … ORDER BY g DESC LIMIT 1`` gives ``SELECT g FROM teams
    WHERE … ORDER BY g DESC LIMIT 2``: two rows alike there were chosen between by nothing the
    query compares. "" for a query with no such order, or one that does not parse.
    """
    tree = _parsed(sql)
    if not isinstance(tree, exp.Select) or tree.args.get("offset") is not None:
        return ""
    order, limit = tree.args.get("order"), tree.args.get("limit")
    if order is None or limit is None or _int(limit.expression) != 1:
        return ""
    probe = tree.copy()  # the shared tree is never changed in place
    probe.set("expressions", [o.this.copy() for o in order.expressions])
    probe.set("limit", exp.Limit(expression=exp.Literal.number(2)))
    return probe.sql(dialect="sqlite")
