"""A name compared with a column of codes: the feedback names the subquery through the key."""

from __future__ import annotations

from typing import Any

import pytest

from crag_core.text.sql import says_name
from nodes.tools.table_keys import (
    codes_said,
    identifier_hint,
    tables_asked,
    through_keys,
    with_identifiers,
)
from nodes.tools.table_query import empty_cells, run_query
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


def test_a_code_of_a_name_the_question_says_is_said(store):
    """'LGA' is the airport the question calls La Guardia, 'MQ' the airline it calls Envoy Air
    (the table's 'Envoy Air' has no "Inc." here; a closing abbreviation is left out anyway)."""
    catalog = store.catalog()
    q = "How many flights did Envoy Air fly out of La Guardia?"
    sql = "SELECT COUNT(*) FROM flights WHERE carrier = 'MQ' AND origin = 'LGA'"
    assert codes_said(store, sql, catalog, q) == {"MQ": "Envoy Air", "LGA": "La Guardia"}
    _, _, answer, _, why = run_query(store, sql, [_table(store, "flights")], catalog, q)
    assert (answer, why) == ("1", "")
    # a code of a name the question does not say is a condition it did not ask for
    other = "SELECT COUNT(*) FROM flights WHERE carrier = 'B6' AND origin = 'LGA'"
    assert codes_said(store, other, catalog, q) == {"LGA": "La Guardia"}
    _, _, _, _, why = run_query(store, other, [_table(store, "flights")], catalog, q)
    assert "carrier = 'B6', which the question does not say" in why


def test_a_key_guessed_right_is_the_name_the_question_says(tmp_path):
    """``category_id = 3`` where 3 is the row of categories the question names: said, and
    no check calls the number unsaid or the name left out; 2 (another row) stays a guess."""
    files: dict[str, list[list[Any]]] = {
        "products.csv": [
            ["product_id", "product_name", "category_id", "discontinued"],
            [1, "Chai", 1, 1],
            [2, "Aniseed Syrup", 2, 1],
            [3, "Teatime Biscuits", 3, 1],
            [4, "Chocolade", 3, 0],
        ],
        "categories.csv": [
            ["category_id", "category_name"],
            [1, "Beverages"],
            [2, "Condiments"],
            [3, "Confections"],
        ],
    }
    store = make_table_store(tmp_path / "t.sqlite3", files)
    catalog = store.catalog()
    q = "Which of our Confections products have been discontinued?"
    right = "SELECT product_name FROM products WHERE discontinued = 1 AND category_id = 3"
    assert codes_said(store, right, catalog, q) == {"3": "Confections"}
    _, _, answer, _, why = run_query(store, right, [_table(store, "products")], catalog, q)
    assert (answer, why) == ("Teatime Biscuits", "")
    wrong = right.replace("= 3", "= 2")
    assert codes_said(store, wrong, catalog, q) == {}
    _, _, _, _, why = run_query(store, wrong, [_table(store, "products")], catalog, q)
    assert "compares category_id, a key of categories, with 2" in why
    assert "names 'Confections'" in why


def test_a_closing_abbreviation_is_how_people_leave_a_name(tmp_path):
    files: dict[str, list[list[Any]]] = {
        "flights.csv": [["carrier", "n"], ["EV", 1], ["UA", 2]],
        "airlines.csv": [
            ["carrier", "name"],
            ["EV", "ExpressJet Airlines Inc."],
            ["UA", "United Air Lines Inc."],
        ],
    }
    store = make_table_store(tmp_path / "t.sqlite3", files)
    sql = "SELECT n FROM flights WHERE carrier = 'EV'"
    said = codes_said(store, sql, store.catalog(), "How many did ExpressJet Airlines fly?")
    assert said == {"EV": "ExpressJet Airlines Inc."}
    assert codes_said(store, sql, store.catalog(), "How many did ExpressJet fly?") == {}
    # the name as people write it, compared with the codes: no false premise, and the
    # subquery names it as the table spells it
    q = "How many did ExpressJet Airlines fly?"
    bare = "SELECT n FROM flights WHERE carrier = 'ExpressJet Airlines'"
    _, _, _, premise, why = run_query(store, bare, [_table(store, "flights")], store.catalog(), q)
    assert not premise
    assert "WHERE name = 'ExpressJet Airlines Inc.')" in why


def test_a_name_the_question_says_and_the_query_leaves_out_is_a_lost_condition(store):
    """ "How many flights did Envoy Air fly out of La Guardia?" counted over every airline's."""
    catalog = store.catalog()
    flights = [_table(store, "flights")]
    q = "How many flights did Envoy Air fly out of La Guardia?"
    lost = "SELECT COUNT(*) FROM flights WHERE origin = 'LGA'"
    _, _, answer, _, why = run_query(store, lost, flights, catalog, q)
    assert answer == "2"
    assert "the question names 'Envoy Air' (a value of name in airlines)" in why
    for kept in (
        "SELECT COUNT(*) FROM flights WHERE origin = 'LGA' AND carrier = 'MQ'",  # its code
        "SELECT COUNT(*) FROM flights WHERE origin = 'LGA' AND carrier IN "
        "(SELECT carrier FROM airlines WHERE name LIKE '%Envoy Air%')",
    ):
        assert run_query(store, kept, flights, catalog, q)[2:] == ("1", False, "")


def test_a_name_is_said_as_people_write_it():
    assert says_name("ExpressJet Airlines Inc.", "How many did ExpressJet Airlines fly?")
    assert says_name("BOMBARDIER INC", "planes made by Bombardier")
    assert says_name("La Guardia", "flights out of la guardia")
    assert not says_name("La Guardia", "flights out of Guardia")
    assert not says_name("AA", "AA flights")  # under four letters: a code, not a name


def test_a_share_over_rows_some_of_which_are_empty_is_refused(tmp_path):
    """ "Of the flights that departed, what share left late?" over COUNT(*): the cancelled
    flight, with no delay, counts as on time (2 of 4 late is 50%; of those that left, 67%)."""
    files: dict[str, list[list[Any]]] = {
        "flights.csv": [["carrier", "delay"], ["DL", 20], ["DL", 30], ["DL", 0], ["DL", None]]
    }
    store = make_table_store(tmp_path / "t.sqlite3", files)
    catalog = store.catalog()
    q = "Of the flights that departed, what percentage left more than 15 minutes late?"
    late = "SELECT SUM(CASE WHEN delay > 15 THEN 1 ELSE 0 END) * 100.0 / "
    _, _, answer, _, why = run_query(store, late + "COUNT(*) FROM flights", catalog, catalog, q)
    assert answer == "50"
    assert "delay is empty in 1 rows, which the share counts as failing its test" in why
    assert empty_cells(store, late + "COUNT(*) FROM flights", catalog) == {"delay": 1}
    _, _, answer, _, why = run_query(store, late + "COUNT(delay) FROM flights", catalog, catalog, q)
    assert (answer, why) == ("66.67", "")
    kept = late + "COUNT(*) FROM flights WHERE delay IS NOT NULL"
    assert run_query(store, kept, catalog, catalog, q)[2:] == ("66.67", False, "")


def test_the_subquery_quotes_a_key_named_as_an_sql_word(tmp_path):
    files: dict[str, list[list[Any]]] = {
        "sales.csv": [["region", "units"], ["N", 1], ["S", 2], ["N", 3]],
        "regions.csv": [["key", "label"], ["N", "North"], ["S", "South"]],
    }
    store = make_table_store(tmp_path / "t.sqlite3", files)
    sql = "SELECT SUM(units) FROM sales WHERE region = 'North'"
    said = through_keys(store, sql, [_table(store, "sales")], store.catalog())
    fix = """region IN (SELECT "key" FROM regions WHERE label = 'North')"""
    assert said == [f"region matches regions.key: write {fix}"]
    assert store.query(f"SELECT SUM(units) FROM sales WHERE {fix}").rows == ((4,),)


def test_a_column_read_where_the_question_says_its_neighbours_word_is_another_quantity(tmp_path):
    data: dict[str, list[list[Any]]] = {
        "flights.csv": [
            ["carrier", "dep_delay", "arr_delay"],
            ["MQ", 10, -4],
            ["MQ", 30, 12],
        ],
        "orders.csv": [["order_date", "required_date"], ["1997-01-02", "1997-01-30"]],
    }
    store = make_table_store(tmp_path / "t.sqlite3", data)
    catalog = store.catalog()
    flights = [_table(store, "flights")]
    q = "On average, how many minutes late did MQ flights depart?"
    sql = "SELECT avg(arr_delay) FROM flights WHERE carrier = 'MQ'"
    *_, why = run_query(store, sql, flights, catalog, q)
    assert "the question says 'depart', the word of dep_delay, but the query reads arr_delay" in why
    assert not run_query(store, sql.replace("arr_", "dep_"), flights, catalog, q)[-1]
    # the question says both words: the query reads what it chose; a table's name says no column
    both = "How late did MQ flights that departed late arrive?"
    assert not run_query(store, sql, flights, catalog, both)[-1]
    orders = [_table(store, "orders")]
    placed = "How many orders fell due in 1997?"
    dated = "SELECT count(*) FROM orders WHERE strftime('%Y', required_date) = '1997'"
    assert not run_query(store, dated, orders, catalog, placed)[-1]


@pytest.mark.parametrize(
    ("question", "sql"),
    [
        ("What was the highest closing price?", "SELECT max(close_price) FROM prices"),
        ("Who was hired last?", "SELECT first_name FROM staff ORDER BY hired DESC LIMIT 1"),
        ("List the products over 50.", "SELECT product FROM prices WHERE unit_price > 50"),
        ("What is the longest time in minutes?", "SELECT max(max_time) FROM prices"),
        (  # "arrive" is arr_delay's word, read already: sched_arr_time is not asked
            "How late did flights scheduled before noon arrive?",
            "SELECT avg(arr_delay) FROM flights WHERE sched_dep_time < 1200",
        ),
        ("How late did flights depart?", "SELECT avg(DepDelay) FROM flights"),
    ],
)
def test_ordinary_words_and_words_read_already_name_no_neighbour(tmp_path, question, sql):
    data: dict[str, list[list[Any]]] = {
        "prices.csv": [
            ["product", "close_price", "high_price", "unit_price", "list_price", "min_time"]
            + ["max_time"],
            ["tea", 3, 4, 60, 70, 1, 9],
        ],
        "staff.csv": [["first_name", "last_name", "hired"], ["Ann", "Lee", "2020-01-01"]],
        "flights.csv": [
            ["arr_delay", "dep_delay", "sched_dep_time", "sched_arr_time", "DepDelay"]
            + ["ArrDelay"],
            [3, 4, 900, 1100, 4, 3],
        ],
    }
    store = make_table_store(tmp_path / "t.sqlite3", data)
    catalog = store.catalog()
    *_, why = run_query(store, sql, catalog, catalog, question)
    assert "another quantity" not in why


def test_a_neighbour_named_in_camel_case_is_read_too(tmp_path):
    data: dict[str, list[list[Any]]] = {"flights.csv": [["DepDelay", "ArrDelay"], [4, 3]]}
    store = make_table_store(tmp_path / "t.sqlite3", data)
    catalog = store.catalog()
    q = "How late did flights depart?"
    *_, why = run_query(store, "SELECT avg(ArrDelay) FROM flights", catalog, catalog, q)
    assert "the word of depdelay" in why.lower()


def test_a_value_compared_with_a_column_that_lists_it_not_is_a_dead_condition(store):
    catalog = store.catalog()
    flights = [_table(store, "flights")]
    q = "How many flights did MQ fly to ORF?"
    sql = "SELECT count(*) FROM flights WHERE carrier = 'MQ' AND origin = 'ORF'"
    _, result, answer, premise, why = run_query(store, sql, flights, catalog, q)
    assert answer == "0" and not premise
    assert "'ORF' is a value of dest in flights" in why and "not of origin" in why
    assert not run_query(store, sql.replace("origin", "dest"), flights, catalog, q)[-1]
    # a comparison under OR, or one value of a list, may be one of several that matched
    either = "SELECT count(*) FROM flights WHERE origin = 'ORF' OR dest = 'ORF'"
    listed = "SELECT count(*) FROM flights WHERE origin IN ('JFK', 'ORF')"
    for sql in (either, listed):
        assert "matches no row" not in run_query(store, sql, flights, catalog, q)[-1]


def test_a_returned_column_of_another_tables_keys_is_no_name(tmp_path):
    data: dict[str, list[list[Any]]] = {
        "codes.csv": [["state", "name"], [1, "Alabama"], [35, "North Dakota"], [4, "Ohio"]],
        "fatality.csv": [
            ["state", "year", "rate"],
            [1, 1986, 2.1],
            [35, 1986, 3.0],
            [4, 1986, 1.5],
        ],
    }
    store = make_table_store(tmp_path / "t.sqlite3", data)
    catalog = store.catalog()
    fatality = [_table(store, "fatality")]
    sql = "SELECT state FROM fatality WHERE year = 1986 ORDER BY rate DESC LIMIT 1"
    q = "Which state had the highest traffic fatality rate in 1986?"
    _, _, answer, _, why = run_query(store, sql, fatality, catalog, q)
    assert answer == "35"
    assert "returns state, which holds the keys of codes.state (named by name)" in why
    asked = "What is the code of the state with the highest fatality rate in 1986?"
    assert not run_query(store, sql, fatality, catalog, asked)[-1]  # a code asked for
    rate = "SELECT max(rate) FROM fatality WHERE year = 1986"  # computed: no key returned
    assert not run_query(store, rate, fatality, catalog, "What was the highest rate in 1986?")[-1]


def test_a_code_whose_rows_all_name_one_thing_stands_for_that_name(tmp_path):
    """'SDN' is 'San Diego Padres' in every season's row of teams; a league's rows name many."""
    teams: list[list[Any]] = [
        ["year", "team_id", "league", "name"],
        [2012, "SDN", "NL", "San Diego Padres"],
        [2013, "SDN", "NL", "San Diego Padres"],
        [2013, "SFN", "NL", "San Francisco Giants"],
    ]
    store = make_table_store(tmp_path / "c.sqlite3", {"teams.csv": teams})
    catalog = store.catalog()
    q = "What was the San Diego Padres payroll in 2013 in the National League?"
    sql = "SELECT * FROM teams WHERE team_id = 'SDN' AND league = 'NL'"
    assert codes_said(store, sql, catalog, q) == {"SDN": "San Diego Padres"}


SHOP: dict[str, list[list[Any]]] = {
    "customers.csv": [
        ["customer_id", "company_name", "contact_first_name", "contact_last_name"],
        [1, "Around the Horn", "Thomas", "Hardy"],
        [2, "Ernst Handel", "Roland", "Mendel"],
    ],
    "orders.csv": [
        ["order_id", "customer_id", "shipper_id", "freight"],
        [10922, 1, 1, 62.74],
        [10923, 2, 2, 68.26],
    ],
    "order_details.csv": [
        ["order_id", "product_id", "unit_price", "quantity"],
        [10922, 7, 32.8, 15],
        [10923, 8, 6.0, 10],
    ],
    "shippers.csv": [["shipper_id", "company_name"], [1, "Speedy Express"], [2, "United Package"]],
}


@pytest.fixture
def shop(tmp_path):
    return make_table_store(tmp_path / "shop.sqlite3", SHOP)


def _values(catalog, table, column):
    return next(c for t in catalog if t.name == table for c in t.columns if c.name == column).values


def test_a_row_named_by_its_identifier_is_found_in_the_data(shop):
    from crag_core.text.sql import asked_matches, table_plan

    q = "Who is the contact person of the customer that placed order 10922?"
    assert table_plan(q, shop.catalog()) == (
        False,
        "it names 'order_id', 'customer_id' of orders.csv but asks for no computation or row",
    )
    catalog = with_identifiers(q, shop.catalog(), shop)
    assert _values(catalog, "orders", "order_id") == ("10922",)
    assert _values(catalog, "order_details", "order_id") == ("10922",)
    assert _values(catalog, "orders", "customer_id") == ()  # "order" is not its word
    assert table_plan(q, catalog) == (
        True,
        "it names 'order_id', 'customer_id' of orders.csv and a row of it",
    )
    # "contact" is a word of customers' columns alone: the table of the answer is asked
    assert "customers" in [m.table.name for m in asked_matches(q, catalog)]
    assert [t.name for t in tables_asked(q, shop.catalog(), shop)] == [
        "orders",
        "order_details",
        "customers",
    ]
    said = "What is the freight of order number 10923?"
    assert _values(with_identifiers(said, shop.catalog(), shop), "orders", "order_id") == ("10923",)


def test_an_identifier_no_row_holds_or_no_column_word_says_is_no_row(shop):
    for q in (
        "Who placed order 20000?",  # no such order
        "How many orders were placed in 10922?",  # no column of the word before it
        "Which customer is customer 1?",  # too short to be told from a count
    ):
        assert with_identifiers(q, shop.catalog(), shop) == shop.catalog(), q


def test_a_value_the_question_names_touches_no_column(shop):
    """ "United Package" names a shipper: its "united" is not ``unit_price``'s word."""
    from crag_core.text.sql import asked_matches

    q = "What was the total freight we paid on orders sent with United Package?"
    assert "order_details" not in [m.table.name for m in asked_matches(q, shop.catalog())]


def test_a_row_named_through_another_tables_identifier_is_shown_its_subquery(tmp_path):
    """ "…the customer that placed order 10922?" asks of customers by a row of orders: the
    first query is shown the subquery through orders' customer_id, which answers; no hint
    where the tables asked hold the identifier's column, or no row holds it."""
    files: dict[str, list[list[Any]]] = {
        "customers.csv": [
            ["customer_id", "company_name", "contact_name"],
            ["RICAR", "Ricardo Adocicados", "Janete Limeira"],
            ["FAMIA", "Familia Arquibaldo", "Aria Cruz"],
        ],
        "orders.csv": [
            ["order_id", "customer_id", "freight"],
            [10922, "FAMIA", 62.7],
            [10923, "RICAR", 1.2],
        ],
    }
    store = make_table_store(tmp_path / "o.sqlite3", files)
    catalog = store.catalog()
    q = "Who is the contact person of the customer that placed order 10922?"
    hint = identifier_hint(q, [_table(store, "customers")], catalog, store)
    shown = (
        "SELECT <column> FROM customers WHERE customer_id IN "
        "(SELECT customer_id FROM orders WHERE order_id = 10922)"
    )
    assert hint.startswith("-- ") and shown in hint
    assert store.query(shown.replace("<column>", "contact_name")).rows == (("Aria Cruz",),)
    assert identifier_hint(q, [_table(store, "orders")], catalog, store) == ""
    absent = q.replace("10922", "99999")
    assert identifier_hint(absent, [_table(store, "customers")], catalog, store) == ""
