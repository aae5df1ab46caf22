"""A name compared with a column of codes: the feedback names the subquery through the key."""

from __future__ import annotations

from typing import Any

import pytest

from nodes.tools.table_keys import through_keys
from nodes.tools.table_query import run_query
from tests.fakes import make_table_store

FLIGHTS: dict[str, list[list[Any]]] = {
    "flights.csv": [
        ["carrier", "origin", "dest", "dep_delay"],
        ["MQ", "LGA", "ORF", 10],
        ["MQ", "JFK", "MKE", 30],
        ["B6", "JFK", "MKE", 5],
        ["B6", "LGA", "BQN", 7],  # BQN: an airport with no row
    ],
    "airlines.csv": [["carrier", "name"], ["MQ", "Envoy Air"], ["B6", "JetBlue Airways"]],
    "airports.csv": [
        ["faa", "name", "alt"],
        ["LGA", "La Guardia", 22],
        ["JFK", "John F Kennedy Intl", 13],
        ["ORF", "Norfolk Intl", 26],
        ["MKE", "General Mitchell Intl", 723],
    ],
    "staff.csv": [["name", "origin"], ["Envoy Air", "x"], ["Ann", "y"]],
}


@pytest.fixture
def store(tmp_path):
    return make_table_store(tmp_path / "flights.sqlite3", FLIGHTS)


def _table(store, name):
    return next(t for t in store.catalog() if t.name == name)


def test_a_name_in_another_table_is_compared_through_its_key(store):
    catalog = store.catalog()
    sql = "SELECT avg(dep_delay) FROM flights WHERE carrier = 'Envoy Air'"
    q = "On average, how many minutes late did Envoy Air flights depart?"
    _, result, answer, premise, why = run_query(store, sql, [_table(store, "flights")], catalog, q)
    assert not answer and not premise
    fix = "write carrier IN (SELECT carrier FROM airlines WHERE name = 'Envoy Air')"
    assert f"carrier matches airlines.carrier: {fix}" in why
    # the subquery it says answers: the mean of Envoy Air's two flights
    mended = sql.replace("carrier = 'Envoy Air'", fix.removeprefix("write "))
    assert store.query(mended).rows == ((20.0,),)


def test_a_key_named_otherwise_is_found_in_the_data(store):
    """dest holds airports.faa's codes (three of its four), a name no key rule reads."""
    catalog = store.catalog()
    sql = "SELECT carrier FROM flights WHERE dest = 'General Mitchell Intl'"
    said = through_keys(store, sql, [_table(store, "flights")], catalog)
    assert said == [
        "dest matches airports.faa: write dest IN "
        "(SELECT faa FROM airports WHERE name = 'General Mitchell Intl')"
    ]


def test_a_code_the_model_made_up_is_replaced_by_the_name_the_question_says(store):
    catalog = store.catalog()
    q = "Which airline flew the most flights to Norfolk Intl?"
    sql = "SELECT carrier FROM flights WHERE dest = 'NORF' GROUP BY carrier"
    said = through_keys(store, sql, [_table(store, "flights")], catalog, q)
    assert said == [
        "dest matches airports.faa: write dest IN "
        "(SELECT faa FROM airports WHERE name = 'Norfolk Intl')"
    ]


def test_no_key_no_subquery(store):
    catalog = store.catalog()
    flights = [_table(store, "flights")]
    # staff lists 'Envoy Air' too, but no column of staff holds flights' carriers
    sql = "SELECT * FROM flights WHERE carrier = 'Envoy Air'"
    assert [s.split(":")[0] for s in through_keys(store, sql, flights, catalog)] == [
        "carrier matches airlines.carrier"
    ]
    # a value the column holds, whatever its case, needs none
    assert through_keys(store, "SELECT * FROM flights WHERE carrier = 'mq'", flights, catalog) == []
    # a name no table lists, nor the question says: nothing to compare through
    q = "How many flights did Pan Am fly?"
    sql = "SELECT COUNT(*) FROM flights WHERE carrier = 'PA'"
    assert through_keys(store, sql, flights, catalog, q) == []
