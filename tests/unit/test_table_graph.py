"""The table tool's own graph: write SQL, run and check it, write it again told why."""

from __future__ import annotations

from crag_core.schema.context import Context
from nodes.tools.table_graph import Asked, ask_tables, measured, table_graph
from tests.fakes import make_llm, make_services
from tests.unit.test_table_checks import store  # noqa: F401  (the fixture)
from tests.unit.test_table_questions import sql_responder

QUESTION = "What was the murder rate in Ohio in 2009?"
UNNAMED = "SELECT murder_rate FROM crime WHERE year = 2009"  # Ohio left out: a check finds it
RIGHT = "SELECT murder_rate FROM crime WHERE state = 'Ohio' AND year = 2009"


def asked(store, llm):  # noqa: F811
    catalog = store.catalog()
    tables = [t for t in catalog if t.name == "crime"]
    ranges, schema = measured(store, tables, QUESTION)
    services = make_services(llm=llm, tables=store)
    return Asked(services, Context(), {}, QUESTION, tables, catalog, ranges, schema, "")


def test_each_attempt_is_two_steps_with_a_cost_entry_each_and_the_retry_is_told_why(store):  # noqa: F811
    llm = make_llm(sql_responder(UNNAMED, RIGHT))
    out = table_graph(asked(store, llm)).invoke({"attempt": 1, "tried": [], "cost": []})
    first, second = out["tried"]
    assert (first.attempt, first.passed, second.attempt, second.passed) == (1, False, 2, True)
    assert "the query does not use it" in first.reason and second.answer == "4.5"
    assert [c["node"] for c in out["cost"]] == ["write_sql", "run_sql"] * 2
    assert [c["calls"] for c in out["cost"]] == [1, 0, 1, 0]  # the model writes, code runs
    retry = [c["text"] for c in llm.calls if c["prompt"] == "write_sql"][1]
    assert f"This query failed: {UNNAMED}" in retry and "does not use it" in retry


def test_a_passing_first_query_ends_the_graph_and_attempts_are_bounded(store):  # noqa: F811
    passing = make_llm(sql_responder(RIGHT))
    a = asked(store, passing)
    tried = ask_tables(a.services, a.ctx, {}, QUESTION, a.tables, a.catalog, a.ranges, a.schema)
    assert [t.attempt for t in tried] == [1] and tried[0].passed
    failing = make_llm(sql_responder(UNNAMED, UNNAMED, UNNAMED))
    a = asked(store, failing)
    tried = ask_tables(a.services, a.ctx, {}, QUESTION, a.tables, a.catalog, a.ranges, a.schema)
    assert [t.attempt for t in tried] == [1, 2] and not tried[-1].passed  # SQL_ATTEMPTS
    edges = {(e.source, e.target) for e in table_graph(a).get_graph().edges}
    assert {("write_sql", "run_sql"), ("run_sql", "write_sql"), ("run_sql", "__end__")} <= edges
