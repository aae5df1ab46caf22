"""The table tool's own small graph: write SQL, run and check it, write it again told why.

::

    START -> write_sql -> run_sql --no attempt left, or passed (no judge)--> END
                 ^           |  \
                 +--retry----+   +--passed--> judge_sql --> END
                (told what was wrong)

``ask_tables`` runs it for one question over the tables chosen for it, on its own state
(``TableState``): the rules' ``query_table`` node and the loop's ``query_table`` tool both ask
the tables through it, so there is one way to write, run, check and retry a query. Each
attempt is two steps, each with its cost entry (``TableState.cost``: the model calls and the
seconds of that step); they are also counted in the meter of the node that runs the graph,
so the turn's ledger misses none (``crag_core.clients.usage.metered``).

The first attempt is the query written in code for a difference or rank of named rows
(``computed_query``), when there is one; then the model's, under the tables' grammar on a
llama.cpp server (``SQL_ATTEMPTS`` of them at most). A retry writes against the tables it was
asked over, and the tables a failed query's keys refer to (``_widened``: told to join
``artists`` on ``artist_id``, its schema and grammar hold ``artists``). Run in the node's
thread and its LangGraph run, so its steps are seen in the stream and in a LangSmith trace; it
keeps no checkpoint of its own (its state is the node's to keep).

A query that passed is judged once when the table answers' fitted confidence reads the judge
(``nodes.shared.confidence.judges_tables``): the model asked whether the query computes
exactly what the question asks, after the same schema, instructions and question it wrote the
query from (prompt ``judge_sql``, whose opening is ``write_sql``'s, so the model server reuses
what it processed then: about a hundred new prompt tokens and one token out). Its P(yes) is a
signal of the answer's confidence, not a veto. A false premise is not judged (no query can
compute what it asks).
"""

from __future__ import annotations

import operator
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from crag_core.clients.llm import complete, takes_grammar, yes_probability
from crag_core.clients.services import Services
from crag_core.clients.table_store import TableStore
from crag_core.schema.context import Context
from crag_core.schema.state import Cost, costed
from crag_core.text.sql import Span, extract_sql
from crag_core.text.sql_grammar import select_grammar
from crag_core.text.table_checks import choice_hint, computed_query, idiom, referred_tables
from crag_core.text.table_shapes import TableInfo
from nodes.shared.confidence import judges_tables
from nodes.shared.prompting import render
from nodes.tools.table_keys import identifier_hint
from nodes.tools.table_query import SQL_ATTEMPTS, Attempted, run_query, schema_of, spans


class TableState(TypedDict, total=False):
    """One question's attempts at the tables."""

    attempt: int
    """The attempt under way: 0 the query written in code, 1… the model's."""
    sql: str
    """Its query."""
    versions: dict[str, str]
    """The prompt versions it was written with."""
    feedback: str
    """What the next attempt is told of the last one ("" for none)."""
    tried: Annotated[list[Attempted], operator.add]
    """Every attempt, run and checked, in order."""
    scope: Scope
    """What the next attempt writes against, when not the asked tables (``_widened``)."""
    judged: float | None
    """The judge's P(yes) for the last attempt, when it passed and was judged."""
    judge_versions: dict[str, str]
    """The judge's prompt version, when it was asked."""
    cost: Annotated[list[Cost], operator.add]
    """Each step's cost entry."""


@dataclass(frozen=True)
class Scope:
    """The tables an attempt writes against and is checked over: their ranges and schema."""

    tables: list[TableInfo]
    ranges: dict[str, dict[str, Span]]
    schema: str


SQL_TOKENS = 256
"""Tokens a written query may take: the longest any calibration run wrote is 369 characters
(about 110 tokens). A reply that runs on (the 1.5B model once wrote 384 tokens twice for one
question, a query too deep to parse) stops there, fails to run and is retried told why,
about 6 s sooner at 20 tokens a second than at the model's ``max_tokens``."""

JOINED_TABLES = 2
"""Tables a retry adds at most: those a failed query's keys refer to (``_widened``)."""


@dataclass(frozen=True)
class Asked:
    """What stays fixed while one question is asked of the tables."""

    services: Services
    ctx: Context
    state: Mapping[str, Any]
    """The pass's state, for the prompt's variables (a part's own question, its language)."""
    question: str
    tables: list[TableInfo]
    catalog: list[TableInfo]
    ranges: dict[str, dict[str, Span]]
    schema: str
    computed: str
    """The query written in code ("" when the question has no such shape)."""
    judge: bool = True
    """Whether a query that passed is judged: not when nothing would read the verdict (the
    loop's query of a part of its question, whose rows the model reads, not the answer's
    confidence)."""
    deadline: float | None = None
    """When the question's time ends (``time.time()`` seconds; ``common.deadline``): no retry
    begins that would end past it at the pace of the attempt before. None: no deadline."""

    @property
    def scope(self) -> Scope:
        """The asked tables, what the first attempt writes against."""
        return Scope(self.tables, self.ranges, self.schema)


def measured(
    store: TableStore, tables: list[TableInfo], question: str
) -> tuple[dict[str, dict[str, Span]], str]:
    """The tables' ranges (``spans``) and the schema the model writes against (``schema_of``)."""
    ranges = {t.name: spans(store, t) for t in tables}
    return ranges, schema_of(store, tables, question, ranges)


def ask_tables(
    services: Services,
    ctx: Context,
    state: Mapping[str, Any],
    question: str,
    tables: list[TableInfo],
    catalog: list[TableInfo],
    ranges: dict[str, dict[str, Span]],
    schema: str,
    judge: bool = True,
    deadline: float | None = None,
) -> list[Attempted]:
    """Every attempt at ``question`` over ``tables``: the last passed, or none was left.

    ``ranges`` and ``schema``: ``measured(store, tables, question)``. The last attempt
    carries the judge's P(yes) and prompt version when it was judged (``judge``: see
    ``Asked.judge``); ``deadline``: ``Asked.deadline``.
    """
    computed = computed_query(question, tables)
    asked = Asked(
        services, ctx, state, question, tables, catalog, ranges, schema, computed, judge, deadline
    )
    store = services.tables
    assert store is not None
    # the model's first query is told its shape
    hint = choice_hint(question, tables) or identifier_hint(question, tables, catalog, store)
    out: dict[str, Any] = table_graph(asked).invoke(
        {"attempt": 0 if computed else 1, "tried": [], "cost": [], "feedback": hint}
    )
    tried = list(out["tried"])
    if "judged" in out:
        last = tried[-1]
        versions = last.versions | out.get("judge_versions", {})
        tried[-1] = replace(last, judged=out["judged"], versions=versions)
    return tried


def table_graph(asked: Asked) -> Any:
    """The graph for one question (its steps closed over what stays fixed: ``Asked``)."""

    def write_sql(state: TableState) -> dict[str, Any]:
        """The attempt's query: the one written in code, or the model's (told why, again)."""
        with costed("write_sql") as cost:
            attempt, scope = state["attempt"], state.get("scope", asked.scope)
            versions: dict[str, str] = {}
            if attempt == 0:
                sql = asked.computed
            else:
                grammar = select_grammar(scope.tables) if takes_grammar(asked.ctx.model) else ""
                prompt, versions = render(
                    asked.state,
                    asked.ctx,
                    "write_sql",
                    schema=scope.schema,
                    question=asked.question,
                    feedback=state.get("feedback", ""),
                )
                reply = complete(asked.services.llm, prompt, grammar=grammar, max_tokens=SQL_TOKENS)
                sql = extract_sql(reply)
        return {"sql": sql, "versions": versions, "cost": cost}

    def run_sql(state: TableState) -> dict[str, Any]:
        """Run the query behind the store's guards and check its answer."""
        with costed("run_sql") as cost:
            store = asked.services.tables
            assert store is not None
            sql, attempt, scope = state["sql"], state["attempt"], state.get("scope", asked.scope)
            ran = run_query(store, sql, scope.tables, asked.catalog, asked.question, scope.ranges)
            tried = Attempted(attempt, *ran, state.get("versions", {}))
            update: dict[str, Any] = {"tried": [tried], "cost": cost, "attempt": attempt + 1}
            if attempt:  # the query written in code teaches the model nothing
                update["feedback"] = _feedback(asked, tried)
            if not tried.passed and (widened := _widened(asked, scope, tried.sql)) is not None:
                update["scope"] = widened
        return update

    def judge_sql(state: TableState) -> dict[str, Any]:
        """The model's P(yes) that the query that passed computes what the question asks."""
        with costed("judge_sql") as cost:
            scope = state.get("scope", asked.scope)  # the prefix the query was written after
            within = replace(asked, tables=scope.tables, ranges=scope.ranges, schema=scope.schema)
            judged, versions = judge_query(within, state["tried"][-1])
        return {"judged": judged, "judge_versions": versions, "cost": cost}

    builder = StateGraph(TableState)
    builder.add_node("write_sql", write_sql)
    builder.add_node("run_sql", run_sql)
    builder.add_node("judge_sql", judge_sql)
    builder.add_edge(START, "write_sql")
    builder.add_edge("write_sql", "run_sql")
    builder.add_conditional_edges(
        "run_sql",
        lambda state: route_after_run(state, asked.judge, asked.deadline),
        {"retry": "write_sql", "judge": "judge_sql", "done": END},
    )
    builder.add_edge("judge_sql", END)
    return builder.compile(checkpointer=False, name="query_tables")


def route_after_run(state: TableState, judge: bool = True, deadline: float | None = None) -> str:
    """Judge a query that passed (when the confidence reads it), retry one that did not.

    Done when it passed and is not judged (a false premise, no judge in the fitted
    confidence, or ``judge`` False: no confidence will read it), when no attempt is left, or
    when a retry taking as long as the attempt before would end past ``deadline``.
    """
    last = state["tried"][-1]
    if last.passed:
        return "judge" if judge and judgeable(last) and judges_tables() else "done"
    if last.attempt >= SQL_ATTEMPTS:
        return "done"
    if deadline is not None and time.time() + attempt_seconds(state) >= deadline:
        return "done"
    return "retry"


def attempt_seconds(state: TableState) -> float:
    """Seconds the last attempt took: its steps' cost entries since the last ``write_sql``."""
    spent = 0.0
    for entry in reversed(state.get("cost") or []):
        spent += entry["seconds"]
        if entry["node"] == "write_sql":
            break
    return spent


def judgeable(tried: Attempted) -> bool:
    """Whether an attempt is one the judge is asked of: it passed, and is no false premise."""
    return tried.passed and not tried.premise


SHOWN_ROWS = 5
"""Rows of a result the judge sees."""
SHOWN_CHARS = 600
"""Characters of those rows the judge sees."""


def judge_query(asked: Asked, tried: Attempted) -> tuple[float | None, dict[str, str]]:
    """The judge's P(yes) for ``tried`` (prompt ``judge_sql``), and its prompt version."""
    assert tried.result is not None
    rows = tried.result.rows[:SHOWN_ROWS]
    shown = "; ".join(", ".join(str(v) for v in row) for row in rows) or "(no rows)"
    prompt, versions = render(
        asked.state,
        asked.ctx,
        "judge_sql",
        schema=asked.schema,
        question=asked.question,
        sql=tried.sql.strip(),
        rows=shown[:SHOWN_CHARS],
    )
    return yes_probability(asked.services.judge, prompt), versions


def judged(
    services: Services, ctx: Context, question: str, tried: Attempted, catalog: list[TableInfo]
) -> Attempted:
    """A query written outside the graph (the loop's own SQL), judged as the graph judges.

    Against the schema of the tables it read; unchanged where the graph would not judge it.
    """
    store = services.tables
    if not judgeable(tried) or not judges_tables() or store is None:
        return tried
    assert tried.result is not None
    read = [t for t in catalog if t.name in tried.result.tables]
    ranges, schema = measured(store, read, question)
    asked = Asked(services, ctx, {}, question, read, catalog, ranges, schema, "")
    verdict, versions = judge_query(asked, tried)
    return replace(tried, judged=verdict, versions=tried.versions | versions)


def _widened(asked: Asked, scope: Scope, sql: str) -> Scope | None:
    """The scope with the tables a failed query's keys refer to, or None when it has them.

    "Who made the album Pop?" is asked of ``albums``; ``SELECT artist_id …`` fails the
    ``key`` check, which says to join ``artists``: the retry's schema and grammar then hold
    ``artists``, or it could not.
    """
    held = {t.name for t in scope.tables}
    named = [n for n in referred_tables(sql, asked.catalog) if n not in held][:JOINED_TABLES]
    joined = [t for t in asked.catalog if t.name in named]
    store = asked.services.tables
    if not joined or store is None:
        return None
    ranges, schema = measured(store, [*scope.tables, *joined], asked.question)
    return Scope([*scope.tables, *joined], ranges, schema)


def _feedback(asked: Asked, tried: Attempted) -> str:
    """What the next attempt is told: the query, why it failed, a query of its kind."""
    shape = idiom(asked.question, asked.tables)
    example = f"-- A query of this kind: {shape}\n" if shape and "e.g." not in tried.reason else ""
    return (
        f"-- This query failed: {tried.sql}\n-- Why: {tried.reason}\n{example}"
        "-- Write a corrected query.\n"
    )
