"""How the collection's tables join: keys named after the table they stand for.

``artist_id`` of ``albums`` stands for a row of ``artists``; ``order_details`` joins
``customers`` only through ``orders`` (``order_id``, ``customer_id``). A question's scope that
holds ``customers`` and ``order_details`` but not ``orders`` leaves the model no way to write
the join, so the tables between are added (``bridged``).

No I/O: it reads the catalog's names only.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

from crag_core.text.table_shapes import TableInfo
from crag_core.text.words import same_word, stem, words_of

KEY = re.compile(r"(?:(?:^|[_\s])(?:id|ID|Id)|[a-z0-9](?:Id|ID))$")
"""A key column's name: ``artist_id``, ``ArtistId``, ``customerID``, ``ID`` (not ``paid``)."""
BRIDGES = 2
"""Tables ``bridged`` adds at most: a scope is joined through two tables between, or is not."""


def names_table(word: str, table: TableInfo) -> bool:
    """Whether ``word`` (a key's name less its "id") is ``table``'s name in either number."""
    name = "".join(words_of(table.name))
    return bool(word) and (same_word(word, name) or stem(word) == stem(name))


def referred(column: str, tables: Sequence[TableInfo]) -> str:
    """The table ``column`` is a key of, or "".

    By name (``artist_id``: ``artists``); where no table is named for it, the one table of
    several holding it where it is every row's own (``player_id`` of ``people``, one row a
    player, beside ``salaries``' many rows a player).
    """
    found = [(t, c) for t in tables if (c := t.column(column))]
    names = [column, *(c.original for _, c in found)]
    for name in names:
        if not KEY.search(name):
            continue
        word = "".join(words_of(name))[:-2]
        for table in tables:
            if names_table(word, table):
                return table.name
    if len(found) < 2 or not any(KEY.search(n) for n in names):
        return ""
    own = [t.name for t, c in found if t.rows > 1 and c.distinct == t.rows]
    return own[0] if len(own) == 1 else ""


def keys_of(table: TableInfo, other: TableInfo, catalog: Sequence[TableInfo]) -> list[str]:
    """The columns of ``table`` that hold ``other``'s key: named after it and held by it.

    ``orders.customer_id`` for ``customers``; in ``table``'s order.
    """
    return [
        c.name
        for c in table.columns
        if referred(c.name, catalog) == other.name and other.column(c.name)
    ]


def links(catalog: Sequence[TableInfo]) -> dict[str, set[str]]:
    """Each table's neighbours: the tables its keys stand for, and those with keys to it.

    Only columns named as keys are looked up (``referred`` reads every column of the catalog
    for each: a wide sheet's hundreds of columns would cost their square).
    """
    near: dict[str, set[str]] = {t.name: set() for t in catalog}
    for table in catalog:
        for column in table.columns:
            if not (KEY.search(column.name) or KEY.search(column.original)):
                continue
            other = referred(column.name, catalog)
            if other and other != table.name:
                near[table.name].add(other)
                near[other].add(table.name)
    return near


def bridged(
    tables: Sequence[TableInfo],
    catalog: Sequence[TableInfo],
    near: dict[str, set[str]] | None = None,
    preferred: Sequence[str] = (),
) -> list[TableInfo]:
    """``tables`` and the tables between them by keys, when they do not join among themselves.

    Each table not yet joined to the first is joined by the shortest path of keys through
    the catalog, as long as the tables added stay within ``BRIDGES``; one no path reaches so
    is left as it is (the model may still compare its values). Of paths as short, one
    through the first ``preferred`` table (those the question names, best first: ``teams``
    between ``batting`` and ``salaries`` for "Which team…", not ``people``). In ``tables``' order,
    the bridges after them. ``near``: the catalog's ``links``, when already read.
    """
    near = links(catalog) if near is None else near
    chosen = [t.name for t in tables]
    added: list[str] = []
    for name in chosen[1:]:
        have = _joined(near, [chosen[0], *added], [*chosen, *added])
        path = [] if name in have else _path(near, have, name, preferred)
        between = [n for n in path[1:-1] if n not in chosen]
        if path and len(added) + len(between) <= BRIDGES:
            added.extend(between)
    by_name = {t.name: t for t in catalog}
    return [*tables, *(by_name[n] for n in added)]


def reaches(
    tables: Sequence[TableInfo],
    other: TableInfo,
    catalog: Sequence[TableInfo],
    near: dict[str, set[str]] | None = None,
) -> bool:
    """Whether ``other`` joins ``tables`` by keys, through ``BRIDGES`` tables between at most.

    ``near``: the catalog's ``links``, when already read.
    """
    near = links(catalog) if near is None else near
    path = _path(
        near, _joined(near, [t.name for t in tables[:1]], [t.name for t in tables]), other.name
    )
    return bool(path) and len(path) - 2 <= BRIDGES


def path_between(near: dict[str, set[str]], start: str, target: str) -> list[str]:
    """The shortest path of keys from table ``start`` to ``target``, both ends in ([] if none)."""
    return [start] if start == target else _path(near, {start}, target)


def _joined(near: dict[str, set[str]], start: Sequence[str], within: Sequence[str]) -> set[str]:
    """The tables of ``within`` that join ``start`` through tables of ``within`` only."""
    seen, todo = set(start), list(start)
    while todo:
        for other in near.get(todo.pop(), set()) & set(within):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def _path(
    near: dict[str, set[str]], sources: set[str], target: str, preferred: Sequence[str] = ()
) -> list[str]:
    """The shortest path of keys from one of ``sources`` to ``target`` ([] when none).

    Of paths as short, one through the first of ``preferred`` tables where there is one.
    """
    rank = {n: i for i, n in reversed(list(enumerate(preferred)))}
    back: dict[str, str] = {}
    queue = deque(sorted(sources))
    seen = set(sources)
    while queue:
        here = queue.popleft()
        for other in sorted(near.get(here, set()), key=lambda n: (rank.get(n, len(rank)), n)):
            if other in seen:
                continue
            back[other] = here
            if other == target:
                path = [other]
                while path[-1] in back:
                    path.append(back[path[-1]])
                return path[::-1]
            seen.add(other)
            queue.append(other)
    return []
