"""How tables join by keys, and the scope a question is asked over (``crag_core.text.joins``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from crag_core.text.joins import bridged, links, reaches, referred
from crag_core.text.sql import asked_matches, match_tables
from tests.fakes import make_table_store

SHOP: dict[str, list[list[Any]]] = {
    "customers.csv": [
        ["customer_id", "company_name", "country"],
        [1, "Around the Horn", "UK"],
        [2, "Ernst Handel", "Austria"],
    ],
    "orders.csv": [
        ["order_id", "customer_id", "shipper_id", "order_date", "ship_name"],
        [10, 1, 1, "1997-01-02", "Around the Horn"],
        [11, 2, 2, "1997-03-04", "Ernst Handel"],
    ],
    "order_details.csv": [
        ["order_detail_id", "order_id", "product_id", "quantity"],
        [100, 10, 7, 3],
        [101, 11, 8, 5],
    ],
    "products.csv": [
        ["product_id", "product_name", "category_id"],
        [7, "Perth Pasties", 1],
        [8, "Konbu", 2],
    ],
    "categories.csv": [["category_id", "category_name"], [1, "Meat/Poultry"], [2, "Seafood"]],
    "shippers.csv": [["shipper_id", "company_name"], [1, "Speedy Express"], [2, "United Package"]],
    "salaries.csv": [["sex", "salary"], ["Male", 100], ["Female", 110]],
}


@pytest.fixture
def catalog(tmp_path):
    return make_table_store(tmp_path / "shop.sqlite3", SHOP).catalog()


def _named(catalog, *names):
    by_name = {t.name: t for t in catalog}
    return [by_name[n] for n in names]


def test_a_key_refers_to_the_table_it_is_named_after(catalog):
    assert referred("customer_id", catalog) == "customers"
    assert referred("category_id", catalog) == "categories"
    assert referred("quantity", catalog) == ""
    assert links(catalog)["orders"] == {"customers", "order_details", "shippers"}
    assert links(catalog)["salaries"] == set()


def test_the_tables_between_two_asked_tables_are_added(catalog):
    asked = _named(catalog, "customers", "order_details")
    assert [t.name for t in bridged(asked, catalog)] == ["customers", "order_details", "orders"]
    # two tables between at most: customers to categories takes three (orders,
    # order_details, products), so they are left as asked
    far = _named(catalog, "customers", "categories")
    assert bridged(far, catalog) == far
    near = _named(catalog, "customers", "products")
    assert [t.name for t in bridged(near, catalog)] == [
        "customers",
        "products",
        "orders",
        "order_details",
    ]
    # tables that join already, or that nothing joins, are left as they are
    joined = _named(catalog, "orders", "customers")
    assert bridged(joined, catalog) == joined
    alone = _named(catalog, "customers", "salaries")
    assert bridged(alone, catalog) == alone


def test_a_table_reaches_another_through_two_tables_at_most(catalog):
    assert reaches(_named(catalog, "customers"), _named(catalog, "products")[0], catalog)
    assert not reaches(_named(catalog, "customers"), _named(catalog, "salaries")[0], catalog)
    assert not reaches(_named(catalog, "shippers"), _named(catalog, "categories")[0], catalog)


def test_a_question_is_asked_of_the_tables_that_join_what_it_names(catalog):
    q = "Which of our customers in the UK have ordered Perth Pasties?"
    names = [m.table.name for m in asked_matches(q, catalog)]
    assert {"customers", "orders", "order_details", "products"} <= set(names)
    # a value of a table nothing joins is no reason to ask it ("males": salaries' "Male")
    q2 = "How many orders did male customers in Austria place?"
    assert "salaries" not in [m.table.name for m in asked_matches(q2, catalog)]


def test_no_rows_says_which_table_holds_the_value_compared(tmp_path):
    """ "orders sent with United Package": ship_name holds no shipper; shippers does."""
    from nodes.tools.table_query import run_query

    store = make_table_store(tmp_path / "shop.sqlite3", SHOP)
    catalog = store.catalog()
    tables = _named(catalog, "orders", "shippers")
    sql = "SELECT order_date FROM orders WHERE ship_name = 'United Package'"
    q = "When was the order sent with United Package placed?"
    _, result, answer, premise, why = run_query(store, sql, tables, catalog, q)
    assert not premise  # a table holds the value: not a false premise
    assert "'United Package' is a value of company_name in shippers, not of ship_name" in why


LEAGUE: dict[str, list[list[Any]]] = {
    "people.csv": [
        ["player_id", "first_name", "birth_country", "birth_city"],
        ["ab01", "Ana", "Venezuela", "Atlanta"],
        ["cd02", "Cy", "Cuba", "Havana"],
        ["ef03", "Ed", "Venezuela", "Caracas"],
    ],
    "batting.csv": [
        ["player_id", "year", "team_id", "hr"],
        ["ab01", 2012, "SDN", 10],
        ["ab01", 2013, "ATL", 12],
        ["cd02", 2012, "SDN", 3],
        ["ef03", 2012, "ATL", 7],
    ],
    "salaries.csv": [
        ["player_id", "year", "team_id", "salary"],
        ["ab01", 2012, "SDN", 500],
        ["ab01", 2013, "ATL", 550],
        ["cd02", 2012, "SDN", 600],
        ["ef03", 2012, "ATL", 700],
    ],
    "teams.csv": [
        ["team_id", "year", "name", "w"],
        ["SDN", 2012, "San Diego Padres", 76],
        ["ATL", 2012, "Atlanta Braves", 94],
        ["SDN", 2013, "San Diego Padres", 76],
        ["ATL", 2013, "Atlanta Braves", 96],
    ],
}


@pytest.fixture
def league(tmp_path):
    return make_table_store(tmp_path / "league.sqlite3", LEAGUE).catalog()


def test_a_key_no_table_is_named_for_refers_to_the_one_table_it_is_every_rows_own(league):
    # no table is called "players": people holds each player_id once, the others many times
    assert referred("player_id", league) == "people"
    assert referred("team_id", league) == "teams"  # by name, though teams holds it per year
    assert links(league)["people"] == {"batting", "salaries"}
    # a key every row of two tables holds once is no one table's
    twins: dict[str, list[list[Any]]] = {
        "a.csv": [["item_id", "x"], [1, 2], [2, 3]],
        "b.csv": [["item_id", "y"], [1, 4], [2, 5]],
    }
    assert referred("item_id", make_table_store_catalog(twins)) == ""


def make_table_store_catalog(tables: dict[str, list[list[Any]]]):
    import tempfile
    from pathlib import Path

    return make_table_store(Path(tempfile.mkdtemp()) / "t.sqlite3", tables).catalog()


def test_players_of_a_country_on_a_team_are_asked_of_both_tables_and_the_one_between(league):
    q = "How many players born in Venezuela played for the San Diego Padres in 2012?"
    names = [m.table.name for m in asked_matches(q, league)]
    assert {"people", "teams", "batting"} <= set(names)


def test_a_value_inside_a_longer_one_of_another_table_is_not_named(league):
    # "the Atlanta Braves" is a team, not the birthplace 'Atlanta' of people
    q = "How many games did the Atlanta Braves win in 2013?"
    assert [m.table.name for m in match_tables(q, league)] == ["teams"]
    assert [m.table.name for m in asked_matches(q, league)] == ["teams"]
    # the birthplace alone is named
    q2 = "How many players born in Atlanta hit a home run in 2012?"
    assert "people" in [m.table.name for m in match_tables(q2, league)]


def test_of_paths_as_short_the_bridge_is_a_table_the_question_names(league):
    batting, salaries = _named(league, "batting", "salaries")
    # batting and salaries join through people (player_id) or teams (team_id)
    assert [t.name for t in bridged([batting, salaries], league)][-1] == "people"
    chosen = bridged([batting, salaries], league, preferred=["teams", "people"])
    assert [t.name for t in chosen] == ["batting", "salaries", "teams"]


def test_a_quantity_no_column_names_of_a_named_row_is_looked_for_in_the_tables_of_its_key(league):
    # "paid" names no column: the tables that hold a player's key are shown beside people
    q = "How much was Ana paid in 2012?"
    names = [m.table.name for m in asked_matches(q, league)]
    assert names[0] == "people" and {"batting", "salaries"} <= set(names)
    # a question that names the column, or asks no quantity, is asked of what it names
    assert [m.table.name for m in asked_matches("What is the birth_city of Ana?", league)] == [
        "people"
    ]
    assert "salaries" not in [m.table.name for m in asked_matches("Where was Ana born?", league)]


def test_which_kind_of_a_named_row_is_its_column_of_that_kind(league):
    from crag_core.text.sql import asked_column, table_plan

    people = _named(league, "people")[0]
    assert asked_column("In which country was Ana born?", people) == "birth_country"
    use, why = table_plan("In which country was Ana born?", league)
    assert use and "asks its birth_country" in why
    # a kind no column has, or several share, asks no column
    assert asked_column("Which sport did Ana play?", people) == ""
    two = [c for c in people.columns if c.name != "birth_country"]
    both = replace(
        people, columns=(*two, replace(people.columns[2], name="death_city", original="death_city"))
    )
    assert asked_column("In which city was Ana born?", both) == ""
    assert not table_plan("Which sport did Ana play?", league)[0]
