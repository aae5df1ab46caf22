"""Questions over the collection's tables: which tables they name, and SQL's way there and back.

Which tables a question names, the schema the model writes SQL against, the SQL out of its
reply, a "did you mean" for its mistakes, and the answer read off the result.

No I/O: the tables' catalog and query results come from ``crag_core.clients.table_store``.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from crag_core.text.table_shapes import Cell, QueryResult, TableInfo
from crag_core.text.words import STOPWORDS

MAX_TABLES = 3
"""Tables whose schema the model sees at most (the ones the question names most)."""
MAX_LISTED = 20
"""Result values an answer lists at most."""

ANALYTIC = re.compile(
    r"\b(?:how many|how much|number of|count|total|sum|average|mean|median|maximum|minimum|"
    r"highest|lowest|largest|smallest|biggest|greatest|most|least|fewest|top \d+|rank(?:ed)?|"
    r"more than|less than|greater than|fewer than|at least|at most|above|below|between|"
    r"compare|difference|ratio|percentage|per|each|list|all)\b",
    re.I,
)
"""Words that ask for a computation over rows, not a passage."""

_WORD = re.compile(r"[a-z0-9]+")
_DATED = re.compile(
    r"\b(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(?:\d{1,2},?\s+)?"
    r"\d{4}|\d{4}-\d{2}(?:-\d{2})?|(?:19|20)\d{2})\b",
    re.I,
)
"""A date, a month of a year, or a year in a question."""


@dataclass(frozen=True)
class TableMatch:
    """How much of one table a question names: columns, values, the table itself."""

    table: TableInfo
    columns: tuple[str, ...]
    """The columns named (the file's own names)."""
    values: tuple[str, ...]
    """Listed values of the table's columns that the question holds."""
    named: bool
    """Whether the question names the table or its file."""

    @property
    def score(self) -> int:
        """Columns count most, then values, then the table's own name."""
        return 3 * len(self.columns) + 2 * len(self.values) + int(self.named)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower().replace("_", " ")) if w not in STOPWORDS]


def _holds(question: str, phrase: str) -> bool:
    words = _words(phrase)
    if not words or (len(words) == 1 and len(words[0]) < 3):
        return False
    return re.search(r"\b" + r"\W+".join(map(re.escape, words)) + r"s?\b", question) is not None


def _alike(a: str, b: str) -> bool:
    """Two words alike: equal, or sharing their first five letters (or all of the shorter).

    "temp" and "temperature", "max" and "maximum", "generated" and "generation".
    """
    shared = len(os.path.commonprefix([a, b]))
    return a == b or shared >= min(len(a), len(b), 5) >= 3


def names_column(question_words: Sequence[str], column: str) -> bool:
    """Whether a question names a column: every word of its name is alike a question word.

    Words under three letters (units: "mm", "g") are left out unless the name has no other.
    """
    words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", column)
    words = [w.lower() for w in words]
    kept = [w for w in words if len(w) >= 3 and w not in STOPWORDS] or words[:1]
    return bool(kept) and all(any(_alike(w, q) for q in question_words) for w in kept)


def match_tables(question: str, catalog: Sequence[TableInfo]) -> list[TableMatch]:
    """The tables ``question`` names something of, most named first."""
    q = " ".join(_WORD.findall(question.lower()))
    q_words = [w for w in q.split() if w not in STOPWORDS]
    matches = []
    for table in catalog:
        columns = tuple(c.original for c in table.columns if names_column(q_words, c.original))
        values = tuple(v for c in table.columns for v in c.values if len(v) >= 3 and _holds(q, v))
        stem = PurePosixPath(table.label).stem
        named = any(_holds(q, n) for n in (stem, table.sheet) if n)
        match = TableMatch(table, columns, values, named)
        if match.score:
            matches.append(match)
    return sorted(matches, key=lambda m: -m.score)


def asked_tables(question: str, catalog: Sequence[TableInfo]) -> list[TableInfo]:
    """The tables a question is asked of: those it names best, at most ``MAX_TABLES``."""
    return [m.table for m in match_tables(question, catalog)[:MAX_TABLES]]


def table_plan(question: str, catalog: Sequence[TableInfo]) -> tuple[bool, str]:
    """Whether ``question`` is for the tables (and why, in a few words).

    For the tables when it names a column of one and either asks for a computation over rows
    ("how many", "average", "highest"…), or names one of its listed values, the table itself
    or a date when the table has dates (a look-up of one row is a table question too); or
    when it names a listed value or the table and asks for a computation ("How many days of
    rain…?", where "rain" is a value of ``weather``; "How many penguins…?" of
    ``penguins.csv``).
    """
    if not catalog:
        return False, "the collection has no tables"
    matches = match_tables(question, catalog)
    if not matches:
        return False, "it names no table, column or value of the collection's"
    best = matches[0]
    where = best.table.label + (f", sheet {best.table.sheet}" if best.table.sheet else "")
    cue = ANALYTIC.search(question)
    named = ", ".join(repr(c) for c in (best.columns or best.values)[:3]) or "the table"
    if cue:
        return True, f"it names {named} of {where} and asks {cue.group(0).lower()!r}"
    if best.columns and (best.values or best.named):
        return True, f"it names {named} of {where} and a row of it"
    dates = [c for c in best.table.columns if c.type == "DATE" or "year" in c.name.split("_")]
    if best.columns and dates and _DATED.search(question):
        return True, f"it names {named} of {where} and a date of its rows"
    return False, f"it names {named} of {where} but asks for no computation or row"


def schema(tables: Sequence[TableInfo], samples: Sequence[QueryResult]) -> str:
    """The tables as ``CREATE TABLE`` statements with a few rows each, as the model reads them.

    Each column carries the file's own name as a comment (and its values when few).
    """
    blocks = []
    for table, sample in zip(tables, samples, strict=True):
        lines = []
        for c in table.columns:
            note = c.original
            if c.values:
                note += " — values: " + ", ".join(repr(v) for v in c.values[:12])
            kind = "TEXT" if c.type == "DATE" else c.type
            date = " (ISO date text)" if c.type == "DATE" else ""
            lines.append(f"  {c.name} {kind}, -- {note}{date}")
        lines[-1] = lines[-1].replace(",", "", 1)
        shown = [", ".join(sample.columns)] + [
            ", ".join("NULL" if v is None else str(v) for v in row) for row in sample.rows
        ]
        blocks.append(
            f"CREATE TABLE {table.name} (\n"
            + "\n".join(lines)
            + "\n);\n/*\n"
            + f"{len(sample.rows)} example rows of {table.rows}:\n"
            + "\n".join(shown)
            + "\n*/"
        )
    return "\n\n".join(blocks)


def extract_sql(reply: str) -> str:
    """The SQL statement of a model's reply: a fenced block's, else from SELECT or WITH on.

    Only the first statement is kept.
    """
    fenced = re.search(r"```(?:sql|sqlite)?\s*(.*?)```", reply, flags=re.S | re.I)
    text = fenced.group(1) if fenced else reply
    start = re.search(r"\b(?:SELECT|WITH)\b", text, flags=re.I)
    if start:
        text = text[start.start() :]
    return text.split(";", 1)[0].strip()


def did_you_mean(error: str, tables: Sequence[TableInfo]) -> str:
    """The database's error, with the closest real names when it names an unknown one."""
    found = re.search(r"no such (column|table): ([\w.]+)", error)
    if not found:
        return error
    kind, name = found.group(1), found.group(2).rsplit(".", 1)[-1]
    if kind == "table":
        names = [t.name for t in tables]
    else:
        names = [c.name for t in tables for c in t.columns]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5) or names[:8]
    return f"{error} (did you mean: {', '.join(close)}?)"


_EQUALS = re.compile(r"\b(\w+)\s*(?:=|==|\bIS\b|\bLIKE\b)\s*'((?:[^']|'')*)'", re.I)


def missing_values(sql: str, tables: Sequence[TableInfo]) -> list[str]:
    """What a query presumes that the tables do not hold: a value its column never has.

    "species = 'Emperor'" where species is Adelie, Chinstrap or Gentoo. Each as a sentence
    that says what the column does hold; [] when nothing is missing. Only columns whose
    values are all listed in the catalog are checked (case aside).
    """
    listed = {
        c.name.lower(): (t, c)
        for t in tables
        for c in t.columns
        if c.values and c.distinct <= len(c.values)
    }
    missing = []
    for name, value in _EQUALS.findall(sql):
        value = value.replace("''", "'")
        if "%" in value or "_" in value and "like" in sql.lower():
            continue
        found = listed.get(name.lower())
        if found and value.lower() not in {v.lower() for v in found[1].values}:
            table, column = found
            holds = ", ".join(column.values[:12])
            missing.append(f"{table.label} has no {column.original} {value!r} (it has {holds}).")
    return list(dict.fromkeys(missing))


def format_cell(value: Cell) -> str:
    """A result value as an answer gives it: 2,550; 15,000.5; text as it is."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        if abs(value) >= 1:
            return f"{value:,.2f}".rstrip("0").rstrip(".")
        return f"{value:.3g}"
    return str(value)


def result_answer(result: QueryResult) -> str:
    """The answer a result gives, or "" when it gives none (no rows, or only empty values).

    One value is the answer; one column is a list (each value once); more columns name each
    value's column.
    """
    rows = [r for r in result.rows if any(v is not None and v != "" for v in r)]
    if not rows:
        return ""
    if len(result.columns) == 1:  # a list names each value once
        values = list(dict.fromkeys(format_cell(r[0]) for r in rows))
        more = len(values) > MAX_LISTED or result.truncated
        text = ", ".join(values[:MAX_LISTED])
    else:
        more = len(rows) > MAX_LISTED or result.truncated
        text = "; ".join(
            ", ".join(
                f"{c}: {format_cell(v)}"
                for c, v in zip(result.columns, r, strict=True)
                if c != "_row"
            )
            for r in rows[:MAX_LISTED]
        )
    return text + (" (and more)" if more else "")
