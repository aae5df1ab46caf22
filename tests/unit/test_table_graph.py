"""The table tool's own graph: write SQL, run and check it, write it again told why."""

from __future__ import annotations

import time
from typing import Any

from crag_core.clients.llm import takes_grammar
from crag_core.schema.context import Context
from crag_core.schema.state import Cost
from crag_core.text.sql import asked_tables
from crag_core.text.table_checks import choice_hint
from nodes.shared.common import deadline
from nodes.tools.table_graph import (
    SQL_TOKENS,
    Asked,
    TableState,
    ask_tables,
    attempt_seconds,
    measured,
    route_after_run,
    table_graph,
)
from tests.fakes import make_llm, make_services, make_table_store
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


def test_each_attempt_is_two_steps_with_a_cost_entry_each_and_the_retry_is_told_why(
    store,  # noqa: F811
    monkeypatch,
):
    _judging(monkeypatch, False)
    llm = make_llm(sql_responder(UNNAMED, RIGHT))
    out = table_graph(asked(store, llm)).invoke({"attempt": 1, "tried": [], "cost": []})
    first, second = out["tried"]
    assert (first.attempt, first.passed, second.attempt, second.passed) == (1, False, 2, True)
    assert "the query does not use it" in first.reason and second.answer == "4.5"
    assert [c["node"] for c in out["cost"]] == ["write_sql", "run_sql"] * 2
    assert [c["calls"] for c in out["cost"]] == [1, 0, 1, 0]  # the model writes, code runs
    retry = [c["text"] for c in llm.calls if c["prompt"] == "write_sql"][1]
    assert f"This query failed: {UNNAMED}" in retry and "does not use it" in retry
    written = [c["kwargs"] for c in llm.calls if c["prompt"] == "write_sql"]
    assert [k.get("max_tokens") for k in written] == [SQL_TOKENS] * 2  # a query, not an essay


def test_a_passing_first_query_ends_the_graph_and_attempts_are_bounded(store, monkeypatch):  # noqa: F811
    _judging(monkeypatch, False)
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
    assert {("run_sql", "judge_sql"), ("judge_sql", "__end__")} <= edges


def _judging(monkeypatch, judged: bool) -> None:
    """The fitted confidence reads the judge (or not), whatever the shipped fit says."""
    monkeypatch.setattr("nodes.tools.table_graph.judges_tables", lambda: judged)


def judge_responder(p_yes: float, *sqls: str):
    """The happy model writing ``sqls``, its verdict on a query P(yes) ``p_yes``."""
    write = sql_responder(*sqls)
    return lambda prompt, text: p_yes if prompt == "judge_sql" else write(prompt, text)


def test_a_query_that_passed_is_judged_once_on_the_prefix_it_was_written_from(store, monkeypatch):  # noqa: F811
    _judging(monkeypatch, True)
    llm = make_llm(judge_responder(0.3, UNNAMED, RIGHT))
    a = asked(store, llm)
    out = table_graph(a).invoke({"attempt": 1, "tried": [], "cost": []})
    assert [c["node"] for c in out["cost"]] == ["write_sql", "run_sql"] * 2 + ["judge_sql"]
    assert [c["calls"] for c in out["cost"]] == [1, 0, 1, 0, 1]
    assert round(out["judged"], 3) == 0.3 and out["judge_versions"] == {"judge_sql": "v1"}
    a = asked(store, make_llm(judge_responder(0.3, UNNAMED, RIGHT)))
    tried = ask_tables(a.services, a.ctx, {}, QUESTION, a.tables, a.catalog, a.ranges, a.schema)
    assert tried[0].judged is None and round(tried[-1].judged or 0, 3) == 0.3  # the one passed
    assert tried[-1].versions == {"write_sql": "v1", "judge_sql": "v1"}
    written = next(c["text"] for c in llm.calls if c["prompt"] == "write_sql")
    judge = next(c["text"] for c in llm.calls if c["prompt"] == "judge_sql")
    opening = written.split(f"-- Question: {QUESTION}\n")[0] + f"-- Question: {QUESTION}\n"
    assert judge.startswith(opening)  # the model server reuses what it processed
    assert judge[len(opening) :].startswith(RIGHT) and "-- Its result: 4.5" in judge


def test_no_judge_where_the_confidence_does_not_read_it_nor_for_a_false_premise(store, monkeypatch):  # noqa: F811
    _judging(monkeypatch, False)
    llm = make_llm(judge_responder(0.9, RIGHT))
    a = asked(store, llm)
    tried = ask_tables(a.services, a.ctx, {}, QUESTION, a.tables, a.catalog, a.ranges, a.schema)
    assert tried[-1].passed and tried[-1].judged is None
    assert "judge_sql" not in [c["prompt"] for c in llm.calls]
    _judging(monkeypatch, True)
    premise = "SELECT murder_rate FROM crime WHERE state = 'Atlantis' AND year = 2009"
    asks = "What was the murder rate in Atlantis in 2009?"
    llm = make_llm(judge_responder(0.9, premise))
    a = asked(store, llm)
    tried = ask_tables(a.services, a.ctx, {}, asks, a.tables, a.catalog, a.ranges, a.schema)
    assert tried[-1].premise and tried[-1].judged is None
    assert "judge_sql" not in [c["prompt"] for c in llm.calls]


KEYED: dict[str, list[list[Any]]] = {
    "albums.csv": [["album_id", "title", "artist_id"], [1, "Pop", 150], [2, "War", 151]],
    "artists.csv": [["artist_id", "name"], [150, "U2"], [151, "Queen"]],
}


def test_a_retry_told_to_join_the_table_a_key_refers_to_can_read_it(tmp_path, monkeypatch):
    """ "Who recorded the album Pop?" names only ``albums``; ``SELECT artist_id`` fails the key
    check, which says to join ``artists``: the retry's schema and grammar hold it."""
    _judging(monkeypatch, False)
    keyed = make_table_store(tmp_path / "k.sqlite3", KEYED)
    question = "Who recorded the album Pop?"
    catalog = keyed.catalog()
    tables = asked_tables(question, catalog)
    assert [t.name for t in tables] == ["albums"]  # the tables the rules ask
    ranges, schema = measured(keyed, tables, question)
    key = "SELECT artist_id FROM albums WHERE title = 'Pop'"
    joined = (
        "SELECT artists.name FROM albums JOIN artists ON artists.artist_id = albums.artist_id "
        "WHERE albums.title = 'Pop'"
    )
    llm = make_llm(sql_responder(key, joined))
    services = make_services(llm=llm, tables=keyed)
    ctx = Context()
    tried = ask_tables(services, ctx, {}, question, tables, catalog, ranges, schema)
    assert [t.attempt for t in tried] == [1, 2]
    assert "a key of artists" in tried[0].reason and tried[-1].passed
    assert tried[-1].answer == "U2"
    first, retry = [c for c in llm.calls if c["prompt"] == "write_sql"]
    assert "artists" not in first["text"].split("-- Question:")[0]
    assert "CREATE TABLE artists" in retry["text"]
    if takes_grammar(ctx.model):  # the embedded model writes under the tables' grammar
        assert "artists" in str(retry["kwargs"]) and "artists" not in str(first["kwargs"])


def test_no_retry_begins_that_would_end_past_the_deadline(store, monkeypatch):  # noqa: F811
    """A failed attempt is retried only when one more, as long as it took, ends in time."""
    _judging(monkeypatch, False)
    a = asked(store, make_llm(sql_responder(UNNAMED, RIGHT)))
    late = time.time() + 0.5  # the first attempt's pace is timed: here it is made 1 s
    timed = [_cost("write_sql", 0.5), _cost("run_sql", 0.5)]
    failed = ask_tables(a.services, a.ctx, {}, QUESTION, a.tables, a.catalog, a.ranges, a.schema)[0]
    state: TableState = {"tried": [failed], "cost": timed}
    assert not failed.passed
    assert route_after_run(state, deadline=late) == "done"  # 1 s more would pass it
    assert route_after_run(state, deadline=time.time() + 60) == "retry"
    assert route_after_run(state) == "retry"  # no deadline
    assert attempt_seconds({"cost": [_cost("judge_sql", 9.0), *timed]}) == 1.0
    gone = time.time() - 1
    a = asked(store, make_llm(sql_responder(UNNAMED, RIGHT)))
    tried = ask_tables(
        a.services, a.ctx, {}, QUESTION, a.tables, a.catalog, a.ranges, a.schema, deadline=gone
    )
    assert [t.attempt for t in tried] == [1] and not tried[0].passed  # no time for the retry


def _cost(node: str, seconds: float) -> Cost:
    return Cost(
        node=node,
        part=None,
        calls=0,
        prompt_tokens=0,
        cached_tokens=0,
        completion_tokens=0,
        llm_seconds=0.0,
        seconds=seconds,
    )


def test_the_question_deadline_is_the_earlier_of_the_turns_and_the_loops():
    ctx = Context(answer_seconds=180, loop_seconds=90)
    assert deadline({}, ctx) is None  # a pass run alone
    assert deadline({"asked_at": 1000.0}, ctx) == 1180.0
    assert deadline({"asked_at": 1000.0, "loop_started": 1050.0}, ctx) == 1140.0
    assert deadline({"asked_at": 1000.0, "loop_started": 1100.0}, ctx) == 1180.0


def test_the_first_query_of_a_choice_between_two_rows_is_told_its_shape(store, monkeypatch):  # noqa: F811
    _judging(monkeypatch, False)
    catalog = store.catalog()
    choice = "Which had the higher murder rate in 2009: Ohio or Texas?"
    llm = make_llm(sql_responder(*[RIGHT] * 8))  # a query each attempt
    for question in (choice, QUESTION):
        tables = asked_tables(question, catalog)
        ranges, schema = measured(store, tables, question)
        services = make_services(llm=llm, tables=store)
        ask_tables(services, Context(), {}, question, tables, catalog, ranges, schema)
    written = [c["text"] for c in llm.calls if c["prompt"] == "write_sql"]
    first, plain = written[0], written[-1]
    shape = (
        "-- The question chooses between two rows. A query of this kind: SELECT state FROM "
        "crime WHERE state IN ('Ohio', 'Texas') AND <the condition on 2009> ORDER BY <the "
        "column compared> DESC LIMIT 1"
    )
    assert shape in first and "chooses" not in plain
    # two columns compared in one row (votes per candidate) is no choice between rows
    district = [t for t in catalog if t.name == "election"]
    assert choice_hint("Who got more votes in Bois-de-Liesse: Coderre or Joly?", district) == ""
