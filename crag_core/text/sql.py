"""Questions over the collection's tables: which tables they name, and SQL's way there and back.

Which tables a question names, the schema the model writes SQL against, the SQL out of its
reply, a "did you mean" for its mistakes, and the answer read off the result.

No I/O: the tables' catalog and query results come from ``crag_core.clients.table_store``.
"""

from __future__ import annotations

import difflib
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from crag_core.text.answer_type import choice
from crag_core.text.joins import KEY, bridged, keys_of, links, names_table, reaches
from crag_core.text.sql_tree import read as read_sql
from crag_core.text.table_shapes import (
    Cell,
    ColumnInfo,
    QueryResult,
    TableInfo,
    sql_name,
    sql_text,
)
from crag_core.text.words import STOPWORDS, content_words, same_word, says, words_of

MAX_TABLES = 3
"""Tables whose schema the model sees at most (the ones the question names most)."""
ROW_TABLES = 4
"""Tables holding a named row's key shown at most, when the quantity asked names no column."""
MAX_LISTED = 20
"""Result values an answer lists at most."""
SHOWN_VALUES = 12
"""A text column's values the schema shows when it has few (more: a count and a few)."""
SPREADSHEETS = frozenset({".csv", ".tsv", ".xlsx", ".xlsm", ".xls", ".ods"})
"""The files whose tables are the document (elsewhere a table is incidental to a text)."""
FEW_VALUES = 25
"""A text column with at most this many distinct values has all of them shown to the model."""
ABBREVIATED = {
    full: full[:3]
    for full in (
        "monday tuesday wednesday thursday friday saturday sunday january february march "
        "april june july august september october november december"
    ).split()
} | {"thursday": "thur", "september": "sept", "tuesday": "tues"}
"""Days and months, and the short forms a table may hold them by ("Sun", "Thur", "Sept")."""

ANALYTIC = re.compile(
    r"\b(?:how many|how much|number of|count|total|sum|average|mean|median|maximum|minimum|"
    r"highest|lowest|largest|smallest|biggest|greatest|most|least|fewest|top \d+|rank(?:ed)?|"
    r"more than|less than|greater than|fewer than|at least|at most|above|below|between|"
    r"compare|difference|ratio|percentage|per|each|list|all)\b",
    re.I,
)
"""Words that ask for a computation over rows, not a passage."""

_HOW_MUCH = re.compile(r"\s*how\s+(?:much|many)\b", re.I)
_ASKS_WHAT = re.compile(r"\s*(?:what|how\s+(?:much|many|high|large|long))\b", re.I)
ASKS_KIND = re.compile(
    r"^\s*(?:(?:in|on|from|to|at|for|of|by|with)\s+)?(?:which|what)\s+([a-z]+)\b", re.I
)
"""A question that asks for a row of a kind: "Which airline …", "From which airport …"."""
_LETTERS = re.compile(r"[a-z]{3,}")
_MEANING = re.compile(
    r"\bwhat (?:does|do|did) .+? (?:measure|mean|represent|stand for|denote|indicate|record)s?\b"
    r"|\bwhich (?:variable|column|field|attribute|feature)s? (?:of .+? )?(?:gives?|measures?|"
    r"records?|holds?|represents?|contains?|stands? for|is|are)\b",
    re.I,
)
"""A question about what a column means: its documentation's, never its cells' to answer."""
_DOCUMENT_NOUN = r"(?:data\s*sets?|data|page|document|file|report|description|article|paper)"
MONTH_WORD = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
"""A month's name or its short form, in a pattern ("Jan", "September", "Sept")."""
_DATED = re.compile(
    rf"\b(?:{MONTH_WORD}\.?\s+(?:\d{{1,2}},?\s+)?"
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


def _holds(question: str, phrase: str) -> bool:
    """Whether ``question`` says ``phrase``'s words in a row, its last in either number."""
    words = content_words(phrase, underscores=False)
    if not words or (len(words) == 1 and len(words[0]) < 3):
        return False
    return says(words_of(question), words)


def names_value(question: str, value: str) -> bool:
    """Whether ``question`` (lower case) names a table's value.

    As it is written ("Asia"), without a number that opens it ("101-Bois-de-Liesse" named as
    "Bois-de-Liesse"), or a day or month a table holds by its short form ("Sun" named as
    "Sunday").
    """
    if len(value) < 3:
        return False
    short = value.lower().rstrip(".")
    letters = _LETTERS.findall(short)
    if short not in ABBREVIATED.values() and not all(w in question for w in letters):
        return False  # the fast way out: a word of the value is not in the question
    if _holds(question, value):
        return True
    if short in ABBREVIATED.values():
        return any(
            re.search(rf"\b{full}\b", question)
            for full, abbr in ABBREVIATED.items()
            if abbr == short
        )
    words = content_words(value, underscores=False)
    if len(words) > 1 and words[0].isdigit():
        rest = " ".join(words[1:])
        return len(rest) >= 5 and _holds(question, rest)
    return False


def named_values(
    question: str, table: TableInfo, said: frozenset[str] = frozenset()
) -> dict[str, tuple[str, ...]]:
    """The values of ``table``'s text columns that ``question`` names, by column.

    ``said``: every value the question names in the collection (``said_values``); a value
    said only inside a longer one of them is not named on its own (``inside_longer``): "the
    Cleveland Indians" names ``teams.name``, not the ``birth_city`` 'Cleveland' nor the
    ``first_name`` 'Diego' of "the San Diego Padres".
    """
    q = " ".join(words_of(question))
    found = {
        c.name: tuple(v for v in c.values if names_value(q, v) and not inside_longer(v, said))
        for c in table.columns
    }
    return {name: values for name, values in found.items() if values}


def said_values(question: str, catalog: Sequence[TableInfo]) -> frozenset[str]:
    """Every value of the ``catalog`` ``question`` names (``match_tables``), its words joined."""
    matches = match_tables(question, catalog)
    return frozenset(" ".join(words_of(v)) for m in matches for v in m.values)


def inside_longer(value: str, said: frozenset[str]) -> bool:
    """Whether ``value``'s words are a run of the words of a longer value ``said``."""
    words = " ".join(words_of(value))
    return any(len(v) > len(words) and f" {words} " in f" {v} " for v in said)


COMPANY_ENDINGS = frozenset({"inc", "co", "corp", "ltd", "llc", "plc", "gmbh", "ag", "sa"})
"""The closing words of a company's name that people leave out ("ExpressJet Airlines" for
'ExpressJet Airlines Inc.', "Bombardier" for 'BOMBARDIER INC')."""


def says_name(name: str, question: str) -> bool:
    """Whether ``question`` says a table's value ``name``: each of its words, in any number.

    Its closing abbreviation ("Inc.", "Corp") is left out, as people write it; stopwords are
    not counted, and a name of no other word, or of under four letters, is not said.
    """
    words = [w for w in words_of(name) if w not in STOPWORDS]
    parts = name.split()
    if len(words) > 1 and (parts[-1].endswith(".") or words[-1] in COMPANY_ENDINGS):
        words = words[:-1]
    asked = words_of(question)
    return sum(map(len, words)) >= 4 and all(any(same_word(w, q) for q in asked) for w in words)


def alike(name: str, word: str) -> bool:
    """A column name's word alike a question's: equal, or one word in two spellings.

    All of the name's word, when it is the shorter (an abbreviation: "temp" for
    "temperature", "max" for "maximum"); or their first five letters at least, and all but two
    of the shorter word's ("generation" and "generated", "months" and ``monthly``; not
    "discounts" and ``discontinued``, which part after five). A question's word shorter than
    the name's is not its abbreviation: "car" does not name ``carb``.
    """
    shared = len(os.path.commonprefix([name, word]))
    one = shared >= 5 and shared >= min(len(name), len(word)) - 2
    if len(name) > len(word):
        return one
    return name == word or shared == len(name) >= 3 or one


def names_column(question_words: Sequence[str], column: str) -> bool:
    """Whether a question names a column: every word of its name is alike a question word.

    Words under three letters (units: "mm", "g") are left out unless the name has no other;
    numbers are kept ("population under 15" names ``pop15``, not ``pop75``).
    """
    words = column_words(column)
    kept = [w for w in words if (len(w) >= 3 or w.isdigit()) and w not in STOPWORDS] or words[:1]
    return bool(kept) and all(any(alike(w, q) for q in question_words) for w in kept)


def touches_column(question_words: Sequence[str], column: str) -> bool:
    """Whether a question says any word of a column's name (``gdpPercap`` by "GDP")."""
    words = column_words(column)
    return any(alike(w, q) for w in words if w not in STOPWORDS for q in question_words)


def column_words(column: str) -> list[str]:
    """A column name's words, lower case: ``gdpPercap`` is gdp, percap; ``pop15`` pop, 15."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", column)]


def match_tables(question: str, catalog: Sequence[TableInfo]) -> list[TableMatch]:
    """The tables ``question`` names something of, most named first.

    A value inside a longer one of another table that the question says is not named
    ('Atlanta' of a birthplace in "the Atlanta Braves" of ``teams``), unless inside one of
    its own that is not ('Dewey' beside 'MAISON DEWEY').
    """
    q = " ".join(words_of(question))
    q_words = content_words(question, underscores=False)
    said = {t.name: [v for c in t.columns for v in c.values if names_value(q, v)] for t in catalog}
    matches = []
    for table in catalog:
        columns = tuple(c.original for c in table.columns if names_column(q_words, c.original))
        others = [words_of(v) for name, found in said.items() if name != table.name for v in found]
        own = [words_of(v) for v in said[table.name] if not _inside(words_of(v), others)]
        values = tuple(
            v for v in said[table.name] if words_of(v) in own or _inside(words_of(v), own)
        )
        stem = PurePosixPath(table.label).stem  # a page's name is not its table's
        named = not incidental(table) and any(_holds(q, n) for n in (stem, table.sheet) if n)
        match = TableMatch(table, columns, values, named)
        if match.score:
            matches.append(match)
    return sorted(matches, key=lambda m: -m.score)


def _inside(words: list[str], others: Sequence[list[str]]) -> bool:
    """Whether a value's words are part of a longer one of ``others``.

    "the Atlanta Braves" names the team, not a birthplace 'Atlanta'.
    """
    n = len(words)
    return any(
        len(o) > n and any(all(map(same_word, o[i : i + n], words)) for i in range(len(o) - n + 1))
        for o in others
    )


def asked_matches(question: str, catalog: Sequence[TableInfo]) -> list[TableMatch]:
    """The tables a question is asked of: those it names best, and the tables between them.

    At most ``MAX_TABLES`` named best. A table the question names less than half as much as
    the best (a "year" column, where the best is named by its columns and a value) is left
    out, unless it holds a value the question names whose words the tables kept do not
    (``_explained``), or names a column or itself and has a column a word of it touches that
    none of theirs does (a word of no value it names: "United Package" touches no
    ``unit_price``), and joins them by keys ("Which of our
    customers in the UK ordered Perth Pasties?": the product's name is only in ``products``;
    "Who is the contact person of the customer that placed order 10922?": "contact" is only
    in ``customers``' ``contact_first_name``; a "Male" of an unrelated table, for "males", is
    not asked).
    Then the tables their keys join through (``joins.bridged``: ``orders`` between
    ``customers`` and ``order_details``), each a match of nothing the question names: the
    model joins what it sees. Where "how much" or "how many" names no column and the best
    table is named by a row of it, the tables that hold that row's key (``_of_its_rows``).
    """
    matches = match_tables(question, catalog)
    if not matches:
        return []
    best = matches[0].score
    kept = [m for m in matches[:MAX_TABLES] if 2 * m.score >= best]
    near = links(catalog)
    said = {w for m in matches for v in m.values for w in words_of(v)}  # "United Package"
    q_words = [w for w in content_words(question, underscores=False) if w not in said]
    for match in matches:
        held = _held_words(kept)
        touched = {w for m in kept for w in _touching(q_words, m.table)}
        new = [v for v in match.values if not _explained(v, held)]
        touches = (match.columns or match.named) and _touching(q_words, match.table) - touched
        if (
            match not in kept
            and len(kept) <= MAX_TABLES
            and (new or touches)
            and reaches([m.table for m in kept], match.table, catalog, near)
        ):
            kept.append(match)
    tables = bridged([m.table for m in kept], catalog, near, [m.table.name for m in matches])
    if not any(m.columns for m in kept) and kept[0].values and _HOW_MUCH.match(question):
        tables += _of_its_rows(kept[0].table, tables, catalog)
    return kept + [TableMatch(t, (), (), False) for t in tables[len(kept) :]]


def _of_its_rows(
    table: TableInfo, chosen: Sequence[TableInfo], catalog: Sequence[TableInfo]
) -> list[TableInfo]:
    """The tables holding ``table``'s key with a number, for a quantity no column is named by.

    "How much was Derek Jeter paid in 2010?" names a row of ``people`` (a player's own row)
    and no column: what was paid is in ``salaries``, one of the tables that hold a player's
    key (at most ``ROW_TABLES``, those already chosen aside). The model reads their columns.
    """
    if not any(KEY.search(c.name) and c.distinct == table.rows for c in table.columns):
        return []  # not a table of things, one row each (``teams``: a row a team a season)
    return [
        t
        for t in catalog
        if t not in chosen
        and keys_of(t, table, catalog)
        and any(c.type in ("INTEGER", "REAL") and not KEY.search(c.name) for c in t.columns)
    ][:ROW_TABLES]


def _held_words(kept: Sequence[TableMatch]) -> set[str]:
    """The words of the values and the columns the question names of the tables kept."""
    values = {w for m in kept for v in m.values for w in words_of(v)}
    return values | {w for m in kept for c in m.columns for w in column_words(c)}


def _explained(value: str, held: set[str]) -> bool:
    """Whether every word of a value is one the tables kept already name.

    A birthplace 'Cincinnati' of ``people`` is the question's 'Cincinnati Reds' of ``teams``,
    a city 'League' its "League" of a ``league`` column: neither asks for ``people``.
    """
    words = words_of(value)
    return bool(words) and all(any(same_word(w, h) for h in held) for w in words)


def _touching(question_words: Sequence[str], table: TableInfo) -> set[str]:
    """The question's words that touch a column of ``table`` (``touches_column``)."""
    return {w for w in question_words for c in table.columns if touches_column([w], c.original)}


def asked_tables(question: str, catalog: Sequence[TableInfo]) -> list[TableInfo]:
    """The tables of ``asked_matches``."""
    return [m.table for m in asked_matches(question, catalog)]


_GENERIC_TITLE = frozenset({"data", "dataset", "datasets"})
"""A title's words that say what it is, not what about: "Wine recognition dataset" is named
by "the wine recognition data set", "… Savings Data" by "the … savings dataset"."""


def text_names(
    question: str, documents: Iterable[Mapping[str, Any]], catalog: Sequence[TableInfo]
) -> list[str]:
    """The names by which ``question`` names a text of the collection (not a table's file).

    A text is named by its title, when every word of it is in the question (two words or
    more, common and one-letter words such as an "R:" prefix left out, and "data" or
    "dataset", which the question may say either way), or by its file name
    with its suffix or before a word for a document ("the faithful data set",
    "faithful.html", "the iris page").
    """
    q = " ".join(words_of(question))
    said = content_words(question, underscores=False)
    # and each two words in a row as one: "data set" says "dataset"
    asked = set(said) | {a + b for a, b in zip(said, said[1:], strict=False)}
    tables = {t.label for t in catalog if not incidental(t)}
    names = []
    for doc in documents:
        label = str(doc.get("label") or "")
        if not label or label in tables:
            continue
        title = [
            w for w in content_words(str(doc.get("title") or ""), underscores=False) if len(w) > 1
        ]
        if len(set(title) - _GENERIC_TITLE) >= 2 and set(title) - _GENERIC_TITLE <= asked:
            names.append(" ".join(title))
        stem = content_words(PurePosixPath(label).stem, underscores=False)
        if not stem or not set(stem) <= asked:
            continue  # the pattern below is tried only when every word of the name is asked
        suffix = PurePosixPath(label).suffix.lstrip(".").lower()
        name = " ".join(stem)
        if len(name) >= 3 and re.search(
            rf"\b{re.escape(name)}\W+(?:{re.escape(suffix)}|{_DOCUMENT_NOUN})\b", q
        ):
            names.append(name)
    return sorted(set(names), key=len, reverse=True)


def table_plan(
    question: str, catalog: Sequence[TableInfo], texts: Sequence[str] = ()
) -> tuple[bool, str]:
    """Whether ``question`` is for the tables (and why, in a few words).

    For the tables when it names a column of one and either asks for a computation over rows
    ("how many", "average", "highest"…), or names one of its listed values, the table itself
    or a date when the table has dates (a look-up of one row is a table question too); or
    when it names a listed value or the table and asks for a computation ("How many days of
    rain…?", where "rain" is a value of ``weather``; "How many penguins…?" of
    ``penguins.csv``).

    A table inside a page (``incidental``: an HTML page's table of variables or parameters)
    takes only a computation over a column it names: naming the page is not naming its table,
    and a row it lists is in the page's text too. On documentation pages (the ``rdocs``
    calibration set) the rules had sent "How many observations does the faithful data set
    have?" to ``COUNT(*)`` over the page's table of variables: 20 of 20 such answers wrong.

    A question asks about a text when it names one (``texts``: ``text_names``), and then
    the words that name it name no table's column, value or file: "How many observations
    does the data set on Violent Crime Rates by US State have?" is the page's, though
    "state" is a column of ``usarrests.csv``; "the swiss data set" is the page ``swiss.html``
    when ``swiss.csv`` is named only by that word. What a column means ("What does the
    variable hp measure?", "Which variable gives…") is its documentation's to say: no
    table's cells answer it (a row's may be: "What does the retries setting mean?").
    """
    if not catalog:
        return False, "the collection has no tables"
    if texts:  # the question without the words that name the texts
        naming = {w for name in texts for w in name.split()}
        rest = " ".join(w for w in words_of(question) if w not in naming)
        use, reason = table_plan(rest, catalog)
        return (use, reason) if use else (False, f"it asks about the text {texts[0]!r}")
    matches = match_tables(question, catalog)
    if not matches:
        return False, "it names no table, column or value of the collection's"
    best = matches[0]
    if _MEANING.search(question) and not best.values:  # a row's meaning may be in its cells
        return False, "it asks what a column means: its documentation is searched"
    where = best.table.label + (f", sheet {best.table.sheet}" if best.table.sheet else "")
    cue = ANALYTIC.search(question)
    named = ", ".join(repr(c) for c in (best.columns or best.values)[:3]) or "the table"
    if incidental(best.table):
        if cue and best.columns:
            return True, f"it names {named} of {where} and asks {cue.group(0).lower()!r}"
        return False, f"it names {named} of a table inside {best.table.label}: its text is searched"
    if cue:
        return True, f"it names {named} of {where} and asks {cue.group(0).lower()!r}"
    if best.columns and (best.values or best.named):
        return True, f"it names {named} of {where} and a row of it"
    if best.values and _ASKS_WHAT.match(question):  # "What is the gross horsepower of Hornet 4
        return True, f"it names {named}, a row of {where}"  # Drive?" of a column ``hp``
    pair = choice(question)  # "Who won more games in 2014, the Atlanta Braves or the …?"
    rows = next((m.table for m in matches if _both_held(pair, m.values)), None) if pair else None
    if pair is not None and rows is not None:
        return True, f"it asks which of two rows of {rows.label}: {pair[0]!r} or {pair[1]!r}"
    kind = asked_kind(question, catalog)
    if best.values and kind is not None:  # "Which airline flew the plane N283JB?"
        return True, f"it names {named}, a row of {where}, and asks which of {kind.name}"
    column = asked_column(question, best.table)
    if best.values and column:  # "In which country was Wei-Yin Chen born?": birth_country
        return True, f"it names {named}, a row of {where}, and asks its {column}"
    dates = [c for c in best.table.columns if c.type == "DATE" or "year" in c.name.split("_")]
    if best.columns and dates and _DATED.search(question):
        return True, f"it names {named} of {where} and a date of its rows"
    return False, f"it names {named} of {where} but asks for no computation or row"


def _both_held(pair: tuple[str, str], values: Sequence[str]) -> bool:
    """Whether both of a choice's alternatives are values a table holds, articles aside.

    "the Atlanta Braves" is 'Atlanta Braves'; a value inside it ('Atlanta', a city) is not it.
    """
    held = {" ".join(words_of(v)) for v in values}
    return all(without_article(" ".join(words_of(a))) in held for a in pair)


_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


def without_article(name: str) -> str:
    """``name`` in lower case, without the article it opens with ("the Detroit Tigers")."""
    return _ARTICLE.sub("", name.lower())


def asked_kind(question: str, catalog: Sequence[TableInfo]) -> TableInfo | None:
    """The one table a "which <kind> …" question's kind names ("Which airline": ``airlines``).

    None when the question asks no kind, or its kind names no table or several: "In which
    city was AC/DC formed?" asks for a city, which no table is named for.
    """
    asked = ASKS_KIND.match(question)
    if asked is None or asked.group(1).lower() in STOPWORDS:
        return None
    kinds = [t for t in catalog if names_table(asked.group(1).lower(), t)]
    return kinds[0] if len(kinds) == 1 else None


def asked_column(question: str, table: TableInfo) -> str:
    """The one column of ``table`` a "which <kind> …" question's kind is a word of, or "".

    "In which country was Wei-Yin Chen born?" asks ``birth_country`` of ``people``; a kind
    several columns share ("which city": ``birth_city``, ``death_city``) asks none.
    """
    asked = ASKS_KIND.match(question)
    if asked is None or asked.group(1).lower() in STOPWORDS:
        return ""
    word = asked.group(1).lower()
    found = [c.original for c in table.columns if touches_column([word], c.original)]
    return found[0] if len(found) == 1 else ""


Span = tuple[Cell, Cell]
"""A column's smallest and largest value."""


def schema(
    tables: Sequence[TableInfo],
    samples: Sequence[QueryResult],
    question: str = "",
    spans: dict[str, dict[str, Span]] | None = None,
) -> str:
    """The tables as ``CREATE TABLE`` statements with a few rows each, as the model reads them.

    Each column carries the file's own name as a comment; a text column its values when few,
    else how many it has, a few of them and the ones ``question`` names (spelled as the table
    spells them: "101-Bois-de-Liesse", "Sun"); a number or date column the question names
    its range (``spans``: table, column, smallest and largest), so 0-1 and 0-100 read
    differently (every column's range, on a sheet of 24, made the model read another). A
    sheet with a column per year says so.
    """
    blocks = []
    for table, sample in zip(tables, samples, strict=True):
        lines = []
        named = named_values(question, table) if question else {}
        ranges = (spans or {}).get(table.name, {})
        if question:  # not every column's range: on a sheet of 24 the model read another
            q_words = content_words(question, underscores=False)
            ranges = {
                name: span
                for name, span in ranges.items()
                if any(c.name == name and _ranged(c, q_words) for c in table.columns)
            }
        for c in table.columns:
            note = c.original
            if c.values and c.distinct <= FEW_VALUES:
                note += " — values: " + ", ".join(sql_text(v) for v in c.values[:SHOWN_VALUES])
            elif c.values or c.distinct > FEW_VALUES and c.type == "TEXT":
                some = list(dict.fromkeys([*named.get(c.name, ()), *c.values[:3]]))
                note += f" — {c.distinct:,} values, such as " + ", ".join(sql_text(v) for v in some)
            if c.name in ranges and c.type != "TEXT":
                low, high = ranges[c.name]
                note += f" — from {_plain(low)} to {_plain(high)}"
            kind = "TEXT" if c.type == "DATE" else c.type
            date = " (ISO date text)" if c.type == "DATE" else ""
            lines.append(f"  {sql_name(c.name)} {kind}, -- {note}{date}")
        lines[-1] = lines[-1].replace(",", "", 1)
        years = year_columns(table)
        if len(years) >= 3:
            lines.insert(
                0,
                f"  -- a wide sheet: one column per year ({years[0].original} to "
                f"{years[-1].original}); a year's values are in its column",
            )
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


def _ranged(column: ColumnInfo, question_words: Sequence[str]) -> bool:
    """Whether the schema shows a column's range.

    A date's or a year's always (their form is what a query gets wrong: ``strftime`` on a
    year), another's when the question names it.
    """
    when = column.type == "DATE" or "year" in column.name.split("_")
    return when or names_column(question_words, column.original)


def _plain(value: Cell) -> str:
    return "NULL" if value is None else str(value)


def year_columns(table: TableInfo) -> list[ColumnInfo]:
    """The columns of a wide sheet named by a year ("1952", "2007"), in order."""
    return [c for c in table.columns if re.fullmatch(r"(?:1[5-9]|20)\d\d", c.original.strip())]


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


def did_you_mean(error: str, tables: Sequence[TableInfo], sql: str = "") -> str:
    """The database's error, with what the unknown name it names is.

    A column that ``tables`` hold elsewhere is said where it is: ``T2.product_name`` with
    ``order_details AS T2`` is "T2 is order_details, which has no column product_name; the
    tables with a column product_name: products" (the model's retry, told only the close names,
    wrote the same query again); a column used as a table likewise. Else the closest real names.
    """
    found = re.search(r"no such (column|table): ([\w.]+)", error)
    if not found:
        return error
    kind, written = found.group(1), found.group(2)
    qualifier, _, name = written.rpartition(".")
    holders = [t.name for t in tables if t.column(name)]
    if holders:
        where = f"the tables with a column {name}: {', '.join(holders)}"
        if kind == "table":
            return f"{error} ({name} is a column, not a table; {where})"
        table = dict(read_sql(sql).aliases).get(qualifier.lower(), qualifier) if sql else ""
        if table and table.lower() not in {h.lower() for h in holders}:
            named = f"{qualifier} is {table}" if table != qualifier else table
            written = _as_written(name, holders, sql)
            return f"{error} ({named}, which has no column {name}; {where}{written})"
        return f"{error} ({where})"
    if kind == "table":
        names = [t.name for t in tables]
    else:
        names = [c.name for t in tables for c in t.columns]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5) or names[:8]
    return f"{error} (did you mean: {', '.join(close)}?)"


def _as_written(name: str, holders: Sequence[str], sql: str) -> str:
    """How the query names the one table holding ``name`` it reads under an alias, or "".

    "; customers is T1 here: write T1.contact_name"; "" when it reads none, or several.
    The 1.5B model that read a customer's columns off ``orders AS T2``, told only which table
    holds them, wrote the same query again (rjoins calibration records).
    """
    held = {h.lower() for h in holders}
    written = [(a, t) for a, t in read_sql(sql).aliases if t in held]
    if len(written) != 1:
        return ""
    alias, table = written[0]
    spelt = re.search(rf"\b({re.escape(alias)})\b", sql, re.I)  # as the query writes it
    shown = spelt.group(1) if spelt else alias
    return f"; {table} is {shown} here: write {shown}.{name}"


def near_value(value: str, column: ColumnInfo) -> str:
    """The value of ``column`` that ``value`` is a misspelling or a part of ("" if none)."""
    low = value.lower()
    for v in column.values:
        if low and (low in v.lower() or ABBREVIATED.get(low) == v.lower().rstrip(".")):
            return v
    close = difflib.get_close_matches(value, list(column.values), n=1, cutoff=0.8)
    return close[0] if close else ""


def incidental(table: TableInfo) -> bool:
    """Whether a table is incidental to a text: inside a page, a document or a PDF.

    A spreadsheet's tables (a CSV file, a workbook's sheets) are the document itself, and so
    are the tables of a PDF or page whose text is mostly its tables (``TableInfo.whole``).
    """
    return not table.whole and PurePosixPath(table.label).suffix.lower() not in SPREADSHEETS


def _listed(tables: Sequence[TableInfo]) -> dict[str, tuple[TableInfo, ColumnInfo]]:
    """The columns whose every value the catalog lists, by lower-case name, with their table."""
    return {
        c.name.lower(): (t, c)
        for t in tables
        for c in t.columns
        if c.values and c.distinct <= len(c.values)
    }


def missing_values(
    sql: str, tables: Sequence[TableInfo], catalog: Sequence[TableInfo] = ()
) -> list[str]:
    """What a query presumes that the tables do not hold: a value its column never has.

    "species = 'Emperor'" where species is Adelie, Chinstrap or Gentoo. Each as a sentence
    that says what the column does hold; [] when nothing is missing. Only columns whose
    values are all listed in the catalog are checked (case aside), and a value that is a
    part or a misspelling of one the column holds ("Bois-de-Liesse" of "101-Bois-de-Liesse",
    "Sunday" of "Sun") is not missing: the query is written again (``misspelled``); nor is
    one that another table of the ``catalog`` holds (the question was about that table), as
    it is or as people write it (``says_name``: 'Endeavor Air' of 'Endeavor Air Inc.', a
    false premise declared on the rflights calibration run where the airline is there).
    """
    elsewhere = {v.lower() for t in catalog for c in t.columns for v in c.values}
    listed = _listed(tables)
    missing = []
    for name, value in read_sql(sql).equalities():
        if "%" in value or "_" in value and "like" in sql.lower():
            continue
        found = listed.get(name.lower())
        if found and value.lower() not in {v.lower() for v in found[1].values}:
            table, column = found
            if near_value(value, column) or value.lower() in elsewhere:
                continue
            held = (v for t in catalog for c in t.columns if c.type == "TEXT" for v in c.values)
            if any(says_name(v, value) for v in held):  # 'Endeavor Air' of 'Endeavor Air Inc.'
                continue
            holds = ", ".join(column.values[:SHOWN_VALUES])
            missing.append(f"{table.label} has no {column.original} {value!r} (it has {holds}).")
    return list(dict.fromkeys(missing))


def _said(value: str, question: str, column: str) -> bool:
    """Whether the question says a value of ``column``: each of its words, in any number.

    Its words that are no value's (stopwords, the column's own name: "all occupations") are
    not counted; a value of none else is not said.
    """
    words, own = words_of(question), words_of(column)
    kept = [
        w for w in words_of(value) if w not in STOPWORDS and not any(same_word(w, o) for o in own)
    ]
    return bool(kept) and all(any(same_word(w, q) for q in words) for w in kept)


def unasked_values(sql: str, tables: Sequence[TableInfo], question: str) -> list[str]:
    """A query's compared values that the question does not say and the column does not hold.

    "occupation = 'all'" for "the average … across all occupations": no false premise (the
    question presumes no such occupation) but a query to write again, told what the column
    holds. As feedback; [] when every compared value is held or said.
    """
    listed = _listed(tables)
    found = []
    for name, value in read_sql(sql).equalities():
        _, column = listed.get(name.lower(), (None, None))
        if column is None or "%" in value or _said(value, question, column.original):
            continue
        if value.lower() in {v.lower() for v in column.values} or near_value(value, column):
            continue
        holds = ", ".join(sql_text(v) for v in column.values[:SHOWN_VALUES])
        found.append(
            f"the query compares {column.name} with {sql_text(value)}, which the question does not "
            f"say and the column does not hold (it has {holds})"
        )
    return found


def held_by(sql: str, tables: Sequence[TableInfo], spans: dict[str, dict[str, Span]]) -> str:
    """What the columns a query compares hold, for a query that found no rows.

    "month holds 5 to 9; date holds '1967-06-30' to '2015-04-30'" — a month named
    "July" compared with a column of numbers, a day with month ends.
    """
    said = []
    for name in dict.fromkeys(n.lower() for n in read_sql(sql).compared()):
        for table in tables:
            column = table.column(name)
            if column is None:
                continue
            if column.name in spans.get(table.name, {}):
                low, high = spans[table.name][column.name]
                said.append(f"{column.name} holds {sql_text(low)} to {sql_text(high)}")
            elif column.values:
                some = ", ".join(sql_text(v) for v in column.values[:SHOWN_VALUES])
                said.append(f"{column.name} holds {some}")
    return "; ".join(said)


def held_elsewhere(sql: str, catalog: Sequence[TableInfo], *, listed: bool = False) -> list[str]:
    """A query's text values that the column it compares lacks and another column lists.

    "ship_name = 'Federal Shipping'" found no rows: "'Federal Shipping' is a value of
    company_name in shippers, not of ship_name" (the name of the shipper, not of the ship).
    Only the values the catalog lists (a column's few values) are read. ``listed``: only
    where every column of the compared name lists all its values (else one may hold the
    value unlisted), as for a query whose answer the dead comparison made 0.
    """
    found = []
    query = read_sql(sql)
    read = {t.lower() for t in query.tables}  # the query's own tables' columns named first
    near = sorted(catalog, key=lambda t: t.name.lower() not in read)
    for name, value in query.equalities():
        column = name.split(".")[-1].lower()
        compared = [c for t in catalog for c in t.columns if c.name.lower() == column]
        if any(value.lower() in {v.lower() for v in c.values} for c in compared):
            continue
        if listed and (not compared or any(len(c.values) < c.distinct for c in compared)):
            continue
        holders = [
            f"{c.name} in {t.name}"
            for t in near
            for c in t.columns
            if value.lower() in {v.lower() for v in c.values}
        ]
        if holders:
            found.append(
                f"{sql_text(value)} is a value of {', '.join(holders[:2])}, not of {column}"
            )
    return found


def misspelled(sql: str, tables: Sequence[TableInfo]) -> list[str]:
    """A query's values that its column holds spelled otherwise, as feedback for a retry."""
    columns = {c.name.lower(): c for t in tables for c in t.columns if c.values}
    said = []
    for name, value in read_sql(sql).equalities():
        column = columns.get(name.lower())
        if column is None or value.lower() in {v.lower() for v in column.values}:
            continue
        near = near_value(value, column)
        if near:
            said.append(f"{name} holds {sql_text(near)}, not {sql_text(value)}")
    return said


def format_cell(value: Cell, plain: bool = False) -> str:
    """A result value as an answer gives it: 2,550; 15,000.5; text as it is.

    ``plain``: a year or a code, whose digits are never grouped (1913, not 1,913).
    """
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if plain and isinstance(value, (int, float)) and float(value).is_integer():
        if abs(value) < 1e15:
            return str(int(value))
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        if abs(value) >= 1:
            return f"{value:,.2f}".rstrip("0").rstrip(".")
        return f"{value:.3g}"
    return str(value)


_YEAR_NAME = re.compile(r"(?:^|_)(?:year|yr|id|code|zip|iso)(?:_|$|s$)|^year", re.I)
_ASKS_YEAR = re.compile(r"\b(?:which|what) year\b|\bwhen\b", re.I)


def plain_cell(column: str, value: Cell, question: str = "") -> bool:
    """Whether a result's whole number is written without grouping: a year or a code.

    Its column's name says so ("year", "iso_num"), or the question asks which year and the
    number is one (1000 to 2100).
    """
    if _YEAR_NAME.search(column):
        return True
    year = isinstance(value, (int, float)) and 1000 <= value <= 2100
    return bool(year and _ASKS_YEAR.search(question))


def result_answer(result: QueryResult, question: str = "") -> str:
    """The answer a result gives, or "" when it gives none (no rows, or only empty values).

    One value is the answer; one column is a list (each value once); more columns name each
    value's column, but a person's name held in parts (``first_name``, ``last_name``) is
    said whole, "Nancy Edwards", before the others. Years and codes keep their digits
    ungrouped (``plain_cell``).
    """
    rows = [r for r in result.rows if any(v is not None and v != "" for v in r)]
    if not rows:
        return ""
    columns = result.columns
    if len(columns) == 1:  # a list names each value once
        said = (format_cell(r[0], plain_cell(columns[0], r[0], question)) for r in rows)
        values = list(dict.fromkeys(said))
        more = len(values) > MAX_LISTED or result.truncated
        text = ", ".join(values[:MAX_LISTED])
    else:
        more = len(rows) > MAX_LISTED or result.truncated
        text = "; ".join(_row_text(columns, r, question) for r in rows[:MAX_LISTED])
    return text + (" (and more)" if more else "")


_NAME_PART = re.compile(r"(\w*?)(?:first|given|middle|last|family|sur)name")
"""A column holding part of a person's name (``first_name``, ``LastName``,
``contact_first_name``), words joined; its first group says whose name (``contact``)."""


def _row_text(columns: Sequence[str], row: Sequence[Any], question: str) -> str:
    """One row of several columns: each name held in parts said as one, then ``column: value``.

    The parts of one name share what comes before them (``contact_first_name`` and
    ``contact_last_name``); a lone ``last_name`` is a value like any other.
    """
    cells = [(c, v) for c, v in zip(columns, row, strict=True) if c != "_row"]
    whose = {c: m.group(1) for c, _ in cells if (m := _NAME_PART.fullmatch("".join(words_of(c))))}
    people = Counter(whose.values())
    parts = {c: w for c, w in whose.items() if people[w] >= 2}
    names = [
        " ".join(str(v) for c, v in cells if parts.get(c) == w and v not in (None, ""))
        for w in dict.fromkeys(parts.values())
    ]
    said = [
        f"{c}: {format_cell(v, plain_cell(c, v, question))}" for c, v in cells if c not in parts
    ]
    return ", ".join([n for n in names if n] + said)
