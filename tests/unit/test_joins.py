"""How tables join by keys, and the scope a question is asked over (``crag_core.text.joins``)."""

from __future__ import annotations

from typing import Any

import pytest

from crag_core.text.joins import bridged, links, reaches, referred
from crag_core.text.sql import asked_matches
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
