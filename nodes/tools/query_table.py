"""query_table: answer from the collection's tables with SQL the model writes.

The model sees the named tables (at most ``MAX_TABLES``, and the tables their keys join
through: ``crag_core.text.sql.asked_matches``) as ``CREATE TABLE`` statements
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
question about a table inside a page searches the page's text instead, and so does a
part's look-up (a step of a described question may be a note's).

A query that compares a column with a value no table of the collection holds answers
that the table has no such value, and what it has (a false premise is said, not answered
"0") — from a spreadsheet only: a table inside a page (an HTML page's table of
statistics) is incidental to its text, which is searched instead.

The answer's confidence is P(right) from the judge's verdict on its query (the model asked
whether the query computes exactly what the question asks: ``nodes.tools.table_graph``),
fitted on calibration answers with real mistakes, leaving a collection out
(``nodes.shared.confidence.tool_confidence``); a false premise, never judged, keeps its
kind's share (0.54; 11 of 23 such calibration answers were right). One under
``min_confidence`` is not given (and the text is searched only for a table inside a page).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.errors import CragError
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate, Source
from crag_core.text.answer_text import NO_ANSWER
from crag_core.text.sql import (
    incidental,
)
from crag_core.text.table_checks import (
    computes,
)
from crag_core.text.table_shapes import QueryResult, TableInfo
from nodes.shared.common import deadline, question_of, reports
from nodes.shared.confidence import gate, held_back, table_kind, table_signals, tool_confidence
from nodes.tools.table_graph import ask_tables, measured
from nodes.tools.table_query import Attempted


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
    try:
        catalog = store.catalog()
        by_name = {t.name: t for t in catalog}
        tables = [by_name[t["name"]] for t in plan["tables"] if t["name"] in by_name]
        ranges, schema = measured(store, tables, question)
    except CragError as exc:
        return {"sql": "", "warnings": [f"The collection's tables could not be read: {exc}"]}
    tried = ask_tables(
        services,
        ctx,
        state,
        question,
        tables,
        catalog,
        ranges,
        schema,
        deadline=deadline(state, ctx),
    )
    update: PassUpdate = {"prompt_versions": {k: v for t in tried for k, v in t.versions.items()}}
    last = tried[-1]
    if last.passed:
        assert last.result is not None
        joined = [t for t in catalog if t.name in last.result.tables and t not in tables]
        update |= table_answer(ctx, question, last, [*tables, *joined], catalog)
        if "answer" in update:
            return update
        withheld = update.get("withheld")
        assert withheld is not None  # table_answer gives the answer or withholds it
        update["warnings"] = [held_back(withheld, ctx.min_confidence)]
        why = "its answer is under min_confidence"
    else:
        rejected = next((f"{t.answer!r} ({t.reason})" for t in reversed(tried) if t.answer), "")
        why = f"its answer {rejected} did not pass its checks" if rejected else last.reason
    if last.sql:
        why += f"; its last query: {last.sql}"
    loop = loop_takes_over(state, ctx)
    unanswered = _unanswered(question, tables, why, loop=loop, look_up=looks_up(state))
    warnings = [*update.get("warnings", []), *unanswered.get("warnings", [])]
    return update | {"sql": last.sql} | unanswered | {"warnings": warnings}


def loop_takes_over(state: Mapping[str, Any], ctx: Context) -> bool:
    """Whether the agent loop takes on a question no table answered (``route_after_table``).

    With ``planner`` ``auto``, where the rules have no other way for it; not for:

    - a described question's whole pass (``nested``): the turn asks it in its steps next
      (``route_after_question``), each step choosing its own tool. Asked whole first, the
      loop spent the time the steps needed;
    - a part's look-up that computes nothing (a step of a described question, a part of one
      asked in parts): the rules search the text for it (``_unanswered``), where a note
      states it ("What is the capital of Japan?"). Given to the loop, such a step's answer
      came back right but under ``min_confidence``.

    On the table-and-text calibration set the rules answered 15 of 21 right, ``auto`` with
    both going to the loop 9 (docs/benchmarks/tools/cal-8331c4d/rnotes).
    """
    if ctx.planner != "auto" or state.get("nested"):
        return False
    return not looks_up(state)


def looks_up(state: Mapping[str, Any]) -> bool:
    """Whether the pass is a part's look-up that computes nothing (its text is searched)."""
    return "part_index" in state and not computes(question_of(state))


def _unanswered(
    question: str, tables: list[TableInfo], why: str, *, loop: bool, look_up: bool
) -> PassUpdate:
    """Where a question no table answered goes, and the warning that says so and why.

    ``loop`` (``loop_takes_over``): the agent loop (``route_after_table``); a spreadsheet's
    question: "I don't know" (the text cannot compute over its rows); a table inside a page:
    its text.
    A part's look-up that computes nothing (``look_up``: a step of a described question, a
    part of one asked in parts) searches the text: the question was split because its parts
    may be in different documents ("What is the capital of Norway?" is a note's, though
    "Norway" is a value of a table's).
    """
    if loop:
        return {"warnings": [f"No table answered the question ({why}); the agent loop took it on."]}
    if tables and not look_up and not any(incidental(t) for t in tables):
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
    The confidence is the fitted P(right) of the answer's signals, the judge's verdict among
    them (``nodes.shared.confidence.tool_confidence``); the rules' plan and the loop's
    ``query_table`` tool give a table's answer through this one function.
    """
    assert tried.result is not None
    kind = table_kind(tried.result, tried.premise, tried.attempt)
    measured = table_signals(
        question, tried.sql, tried.result, tables, tried.answer, kind, tried.judged, catalog=catalog
    )
    confidence = tool_confidence(kind, measured)
    update: PassUpdate = {"answer_kind": kind, "tool_signals": measured, "sql": tried.sql}
    if withheld := gate(tried.answer, confidence, ctx.min_confidence):
        return update | {"withheld": withheld}
    return update | {
        "answer": tried.answer,
        "sources": _sources(tried.result, catalog, tried.sql),
        "confidence": confidence,
    }


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
