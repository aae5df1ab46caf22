"""query_table: answer from the collection's tables with SQL the model writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.clients.llm import complete, takes_grammar
from crag_core.clients.services import Services
from crag_core.clients.table_store import TableStore
from crag_core.errors import CragError, TableQueryError
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import RAGState, Source, Update
from crag_core.text.sql import (
    asked_tables,
    did_you_mean,
    extract_sql,
    missing_values,
    result_answer,
    schema,
)
from crag_core.text.sql_grammar import select_grammar
from crag_core.text.table_shapes import QueryResult, TableInfo
from nodes.common import question_of, reports
from nodes.confidence import tool_confidence
from nodes.prompting import render

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
def query_table(state: RAGState, runtime: Runtime[Context], services: Services) -> Update:
    """Write a SELECT for the question over the tables it names, run it, answer from it.

    The model sees the named tables (at most ``MAX_TABLES``) as ``CREATE TABLE`` statements
    with a few rows each and writes one SELECT (the embedded model under a grammar that lets it
    name only those tables and their columns: ``crag_core.text.sql_grammar``); the query runs
    read-only behind the table store's authorizer, row limit and time budget
    (``crag_core.clients.table_store``). A query that
    fails or finds nothing is written once more with the database's error (and the closest
    real names); if that fails too, the pass searches the text instead, with a warning. The
    answer is read off the result (one value, a list, or named values), cited by the tables it
    read, with the SQL; its confidence is the share of right table answers on the calibration
    split (``nodes.confidence.tool_confidence``). A
    query that compares a column with a value the column never holds answers that the table
    has no such value, and what it has (a false premise is said, not answered "0").
    """
    ctx = context_of(runtime)
    question = question_of(state)
    store = services.tables
    assert store is not None  # ``choose_tool`` sends no question here without a table store
    update: Update = {"prompt_versions": {}}
    sql, feedback, reason = "", "", ""
    try:
        catalog = store.catalog()
        tables = asked_tables(question, catalog)
        text = schema_of(store, tables)
    except CragError as exc:
        return {"sql": "", "warnings": [f"The collection's tables could not be read: {exc}"]}
    grammar = select_grammar(tables) if takes_grammar(ctx.model) else ""
    for _ in range(SQL_ATTEMPTS):
        prompt, recorded = render(
            state, ctx, "write_sql", schema=text, question=question, feedback=feedback
        )
        update["prompt_versions"] |= recorded.get("prompt_versions", {})
        sql = extract_sql(complete(services.llm, prompt, grammar=grammar))
        result, answer, reason = run_query(store, sql, catalog)
        if result and answer:
            return update | {
                "sql": sql,
                "answer": answer,
                "sources": _sources(result, catalog, sql),
                "confidence": tool_confidence("table"),
            }
        feedback = f"-- This query failed: {sql}\n-- Why: {reason}\n-- Write a corrected query.\n"
    return update | {
        "sql": sql,
        "warnings": [f"No table answered the question ({reason}); the text was searched."],
    }


def schema_of(store: TableStore, tables: list[TableInfo]) -> str:
    """The schema the model writes against: ``tables`` with a few of their rows each."""
    return schema(tables, [store.sample(t.name) for t in tables])


def run_query(
    store: TableStore, sql: str, tables: list[TableInfo]
) -> tuple[QueryResult | None, str, str]:
    """Run ``sql``: its result, the answer read off it, and why there is none (else "").

    A comparison with a value its column never holds answers that the table has no such
    value (a false premise), not what the query found.
    """
    if not sql:
        return None, "", "the reply held no SELECT"
    try:
        result = store.query(sql, max_rows=RESULT_ROWS)
    except TableQueryError as exc:
        return None, "", did_you_mean(str(exc), tables)
    premise = missing_values(sql, tables)
    answer = " ".join(premise) if premise else result_answer(result)
    return result, answer, "" if answer else "it returned no rows"


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
