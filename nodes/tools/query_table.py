"""query_table: answer from the collection's tables with SQL the model writes.

The model sees the named tables (at most ``MAX_TABLES``) as ``CREATE TABLE`` statements
with a few rows each, each column's range and the values the question names
(``crag_core.text.sql.schema``), and writes one SELECT (the embedded model under a grammar
that lets it name only those tables and their columns: ``crag_core.text.sql_grammar``);
the query runs read-only behind the table store's authorizer, row limit and time budget
(``crag_core.clients.table_store``).

A difference or a rank of rows the question names by value, over one number column it
names, is first queried as written in code (``crag_core.text.table_checks.
computed_query``, kind ``table:<shape>:0``); when that does not pass, the model writes it.

The result is an answer only when it passes the checks that need no model
(``crag_core.text.table_checks.problems``: one of two named values, one row for a
superlative, one number for a count, every value and number the question names used). A
query that fails, finds nothing, misspells a value or does not pass is written once more,
told why. If that fails too, the warning says why (the table's answer that did not pass,
and what was wrong with it); with ``planner`` ``auto`` the agent loop takes the question
on; otherwise the answer is "I don't know" when the tables are
spreadsheets: the text cannot compute over their rows ("how many", "average", "…: A or
B?": ``computes``), and what it holds of them is the rows the query read (on the
calibration sets, 10 such searches gave 0 right, 1 wrong and took 10-52 s each). A
question about a table inside a page searches the page's text instead.

A query that compares a column with a value no table of the collection holds answers
that the table has no such value, and what it has (a false premise is said, not answered
"0") — from a spreadsheet only: a table inside a page (an HTML page's table of
statistics) is incidental to its text, which is searched instead.

The answer's confidence is the share of right table answers of its kind (one value, a
row, a list, a false premise; first query or retry) on the tools benchmark's calibration
split (``nodes.shared.confidence.tool_confidence``); one under ``min_confidence`` is not given
(and the text is searched only for a table inside a page).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from crag_core.clients.llm import complete, takes_grammar
from crag_core.clients.services import Services
from crag_core.clients.table_store import TableStore
from crag_core.errors import CragError, TableQueryError
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate, Source, Withheld
from crag_core.text.answer_text import NO_ANSWER
from crag_core.text.sql import (
    Span,
    did_you_mean,
    extract_sql,
    held_by,
    incidental,
    missing_values,
    misspelled,
    result_answer,
    schema,
    unasked_values,
)
from crag_core.text.sql_grammar import select_grammar
from crag_core.text.sql_tree import read as read_sql
from crag_core.text.table_checks import (
    computed_query,
    computes,
    idiom,
    misread_years,
    problems,
)
from crag_core.text.table_shapes import QueryResult, TableInfo
from nodes.shared.common import question_of, reports
from nodes.shared.confidence import table_kind, table_signals, tool_confidence
from nodes.shared.prompting import render

SQL_ATTEMPTS = 2
"""Queries written per question: the first, and one retry told the database's error."""
RESULT_ROWS = 1_000
"""Rows read of a result: a list the model wrote without DISTINCT is named each value once
from all of them (the answer lists at most ``crag_core.text.sql.MAX_LISTED``)."""


def describe(update: Mapping[str, Any]) -> str:
    """The SQL and what it gave, or why the text is searched instead."""
    if update.get("answer"):
        return f"{update['sql']} -> {update['answer']!r}"
    return f"no table answered ({update.get('sql') or 'no query'}): searching the text"


@reports(describe)
def query_table(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Write a SELECT over the tables the plan names, run it, check it, answer.

    How, and what happens when it does not pass: the module's docstring.
    """
    ctx = context_of(runtime)
    question = question_of(state)
    plan = state.get("plan")
    store = services.tables
    if plan is None or plan["tool"] != "table" or store is None:
        raise ValueError("query_table queries choose_tool's table plan, and there is none")
    update: PassUpdate = {"prompt_versions": {}}
    sql, reason, rejected = "", "", ""
    try:
        catalog = store.catalog()
        by_name = {t.name: t for t in catalog}
        tables = [by_name[t["name"]] for t in plan["tables"] if t["name"] in by_name]
        ranges = {t.name: spans(store, t) for t in tables}
        text = schema_of(store, tables, question, ranges)
    except CragError as exc:
        return {"sql": "", "warnings": [f"The collection's tables could not be read: {exc}"]}
    for tried in attempts(state, ctx, services.llm, store, tables, catalog, question, ranges, text):
        update["prompt_versions"] |= tried.versions
        sql, answer, reason = tried.sql, tried.answer, tried.reason
        if tried.passed:
            update |= table_answer(ctx, question, tried, tables, catalog)
            if "answer" in update:
                return update
            rejected = _withheld(update, ctx)
            break
        if answer:
            rejected = f"{answer!r} ({reason})"
    if "withheld" in update:
        why = f"its answer {rejected} is not given"
    else:
        why = f"its answer {rejected} did not pass its checks" if rejected else reason
    if sql:
        why += f"; its last query: {sql}"
    return update | {"sql": sql} | _unanswered(ctx, question, tables, why)


def _unanswered(ctx: Context, question: str, tables: list[TableInfo], why: str) -> PassUpdate:
    """Where a question no table answered goes, and the warning that says so and why.

    ``planner`` ``auto``: the agent loop (``route_after_table``); a spreadsheet's question:
    "I don't know" (the text cannot compute over its rows); a table inside a page: its text.
    """
    if ctx.planner == "auto":
        return {"warnings": [f"No table answered the question ({why}); the agent loop took it on."]}
    if tables and not any(incidental(t) for t in tables):
        said = "the text was not searched: " + (
            "it cannot compute over a table's rows"
            if computes(question)
            else "it holds the spreadsheet's rows the query read"
        )
        return {
            "answer": NO_ANSWER,
            "confidence": None,
            "warnings": [f"No table answered the question ({why}); {said}."],
        }
    return {"warnings": [f"No table answered the question ({why}); the text was searched."]}


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

    @property
    def passed(self) -> bool:
        """Whether the query ran, gave an answer and passed every check."""
        return self.result is not None and bool(self.answer) and not self.reason


def attempts(
    state: Mapping[str, Any],
    ctx: Context,
    llm: BaseChatModel,
    store: TableStore,
    tables: list[TableInfo],
    catalog: list[TableInfo],
    question: str,
    ranges: dict[str, dict[str, Span]],
    text: str,
) -> Iterator[Attempted]:
    """Queries for ``question`` over ``tables``, each run and checked, until the caller stops.

    First the query written in code for a difference or rank of named rows (when there is
    one), then the model's (under the tables' grammar on a llama.cpp server), then once more
    told what was wrong (``SQL_ATTEMPTS`` of the model's at most). ``query_table`` and the
    loop's ``query_table`` tool both ask through here.
    """
    grammar = select_grammar(tables) if takes_grammar(ctx.model) else ""
    computed = computed_query(question, tables)
    feedback = ""
    for attempt in range(0 if computed else 1, SQL_ATTEMPTS + 1):
        versions: dict[str, str] = {}
        if attempt:
            prompt, versions = render(
                state, ctx, "write_sql", schema=text, question=question, feedback=feedback
            )
            sql = extract_sql(complete(llm, prompt, grammar=grammar))
        else:
            sql = computed  # a difference or rank of named rows: written in code
        result, answer, premise, reason = run_query(store, sql, tables, catalog, question, ranges)
        yield Attempted(attempt, sql, result, answer, premise, reason, versions)
        if not attempt:
            continue  # the model writes its own query, told nothing of this one
        shape = idiom(question, tables)
        example = f"-- A query of this kind: {shape}\n" if shape and "e.g." not in reason else ""
        feedback = (
            f"-- This query failed: {sql}\n-- Why: {reason}\n{example}-- Write a corrected query.\n"
        )


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
) -> tuple[QueryResult | None, str, bool, str]:
    """Run ``sql``: its result, its answer, whether that is a false premise, what is wrong.

    What is wrong is "" when nothing is.
    A comparison with a value no table of the collection holds answers that the table has no
    such value (a false premise), not what the query found; a value the column holds spelled
    otherwise, or a result that does not pass ``problems``, is an answer with what is wrong
    with it. Tables inside pages give no false premise (their text may hold the value).
    """
    if not sql:
        return None, "", False, "the reply held no SELECT"
    try:
        result = store.query(sql, max_rows=RESULT_ROWS)
    except TableQueryError as exc:
        return None, "", False, did_you_mean(str(exc), tables)
    spelled = misspelled(sql, tables)
    if spelled:
        return result, "", False, "; ".join(spelled)
    read = [t for t in tables if t.name in result.tables]
    unasked = unasked_values(sql, read, question) if question else []
    if unasked:
        return result, "", False, "; ".join(unasked)
    misread = misread_years(question, sql, read, ranges or {})
    if misread:
        return result, "", False, "; ".join(misread)
    premise = missing_values(sql, read, catalog) or absent_numbers(store, sql, read, ranges)
    if premise and not any(incidental(t) for t in read):
        return result, " ".join(premise), True, ""
    answer = result_answer(result, question)
    if not answer:
        held = held_by(sql, read or tables, ranges or {})
        why = premise[0] if premise else held
        return result, "", False, "it returned no rows" + (f" ({why})" if why else "")
    found = problems(question, sql, result, tables, ranges)
    return result, answer, False, "; ".join(found)


def absent_numbers(
    store: TableStore,
    sql: str,
    tables: list[TableInfo],
    ranges: dict[str, dict[str, Span]] | None = None,
) -> list[str]:
    """A query's ``column = number`` that no row of its table holds, as sentences.

    "year = 1960" where the years are 1952, 1957…: "gapminder.csv has no year 1960 (it has
    1952 to 2007)." ``ranges``: the tables' ``spans``, when already measured.
    """
    missing = []
    for name, number in read_sql(sql).numbers_equal():
        for table in tables:
            column = next((c for c in table.columns if c.name == name.lower()), None)
            if column is None or column.type not in ("INTEGER", "REAL"):
                continue
            held = store.query(
                f'SELECT COUNT(*) FROM "{table.name}" WHERE "{column.name}" = {number}', max_rows=1
            ).rows[0][0]
            if held == 0:
                measured = (ranges or {}).get(table.name) or spans(store, table)
                low, high = measured.get(column.name, (None, None))
                missing.append(
                    f"{table.label} has no {column.original} {number} (it has {low} to {high})."
                )
    return list(dict.fromkeys(missing))


def table_answer(
    ctx: Context,
    question: str,
    tried: Attempted,
    tables: list[TableInfo],
    catalog: list[TableInfo],
) -> PassUpdate:
    """A query that passed its checks as the graph's answer (or, under ``min_confidence``, not).

    The answer, its sources and confidence; under ``min_confidence`` no answer, but what was
    withheld.
    The confidence is the share of right table answers of its kind
    (``nodes.shared.confidence.tool_confidence``, from the answer's signals); the rules' plan
    and the loop's ``query_table`` tool give a table's answer through this one function.
    """
    assert tried.result is not None
    kind = table_kind(tried.result, tried.premise, tried.attempt)
    measured = table_signals(question, tried.sql, tried.result, tables, tried.answer, kind)
    confidence = tool_confidence(kind, measured)
    update: PassUpdate = {"answer_kind": kind, "tool_signals": measured, "sql": tried.sql}
    if confidence is not None and confidence < ctx.min_confidence:
        return update | {"withheld": Withheld(answer=tried.answer, confidence=confidence)}
    return update | {
        "answer": tried.answer,
        "sources": _sources(tried.result, catalog, tried.sql),
        "confidence": confidence,
    }


def _withheld(update: PassUpdate, ctx: Context) -> str:
    """What a withheld table answer's warning says of it."""
    withheld = update.get("withheld")
    if not withheld:
        return ""
    return (
        f"{withheld['answer']!r} (confidence {withheld['confidence']:.2f}, "
        f"under {ctx.min_confidence:.2f})"
    )


def _sources(result: QueryResult, tables: list[TableInfo], sql: str) -> list[Source]:
    read = [t for t in tables if t.name in result.tables]
    return [
        Source(
            id=f"table:{t.name}",
            source=t.label,
            location=f"sheet {t.sheet}" if t.sheet else "table",
            sql=sql,
        )
        for t in read
    ]
