"""A query refused for a column its table lacks, mended by the catalog's keys (``sql_repair``)."""

from __future__ import annotations

import pytest

from crag_core.errors import TableQueryError
from crag_core.text.sql_repair import rejoined
from tests.fakes import make_table_store
from tests.unit.test_joins import SHOP


@pytest.fixture
def store(tmp_path):
    return make_table_store(tmp_path / "shop.sqlite3", SHOP)


def _rows(store, sql):
    return store.query(sql, max_rows=100).rows


SPENT = (
    "SELECT SUM(T2.quantity) FROM customers AS T1 JOIN order_details AS T2 "
    "ON T1.customer_id = T2.customer_id WHERE T1.company_name = 'Ernst Handel'"
)


def test_a_join_on_a_key_the_joined_table_lacks_goes_through_the_table_between(store):
    with pytest.raises(TableQueryError):
        _rows(store, SPENT)
    mended = rejoined(SPENT, store.catalog())
    assert 'JOIN "orders" AS "orders" ON "T1"."customer_id" = "orders"."customer_id"' in mended
    assert '"orders"."order_id" = "T2"."order_id"' in mended
    assert _rows(store, mended) == ((5,),)


def test_a_join_written_the_other_way_round_is_bridged_too(store):
    sql = (
        "SELECT c.company_name FROM order_details od LEFT JOIN customers c "
        "ON od.customer_id = c.customer_id WHERE od.quantity = 3"
    )
    mended = rejoined(sql, store.catalog())
    assert 'LEFT JOIN "orders"' in mended  # the bridge keeps the join's side
    assert _rows(store, mended) == (("Around the Horn",),)


def test_a_column_read_off_a_table_that_lacks_it_is_read_from_the_one_that_has_it(store):
    sql = SPENT.replace("WHERE", "WHERE strftime('%Y', T2.order_date) = '1997' AND")
    mended = rejoined(sql, store.catalog())
    assert '"orders".order_date' in mended
    assert _rows(store, mended) == ((5,),)


def test_a_join_goes_through_the_table_between_when_the_query_joins_it_later(store):
    sql = (
        "SELECT SUM(T2.quantity) FROM customers AS T1 JOIN order_details AS T2 ON "
        "T1.customer_id = T2.customer_id JOIN orders AS T3 ON T2.order_id = T3.order_id "
        "WHERE T1.company_name = 'Ernst Handel'"
    )
    mended = rejoined(sql, store.catalog())
    assert '"T1"."customer_id" = "T3"."customer_id" AND "T3"."order_id" = "T2"."order_id"' in (
        mended
    )
    assert _rows(store, mended) == ((5,),)


def test_a_column_its_table_lacks_is_read_through_the_key_that_leads_to_it(store):
    """``T2.product_name`` of ``order_details``: its ``product_id`` stands for ``products``."""
    sql = (
        "SELECT T2.product_name FROM order_details AS T2 WHERE T2.quantity > 4 "
        "GROUP BY T2.product_name"
    )
    mended = rejoined(sql, store.catalog())
    assert mended.count('JOIN "products"') == 1  # one join for both columns
    assert _rows(store, mended) == (("Konbu",),)
    # a table of the query holds the column: which one is meant is not for code to say
    held = (
        "SELECT o.company_name FROM orders AS o JOIN customers AS c "
        "ON o.customer_id = c.customer_id"
    )
    assert rejoined(held, store.catalog()) == held


def test_a_query_the_keys_do_not_mend_one_way_is_left_as_it_is(store):
    catalog = store.catalog()
    # the table between is in the query, and the join to mend keeps unmatched rows (LEFT)
    written = (
        "SELECT SUM(T2.quantity) FROM customers AS T1 LEFT JOIN order_details AS T2 ON "
        "T1.customer_id = T2.customer_id JOIN orders AS o ON T2.order_id = o.order_id"
    )
    assert rejoined(written, catalog) == written
    # no keys join them
    unjoined = "SELECT * FROM salaries s JOIN customers c ON s.customer_id = c.customer_id"
    assert rejoined(unjoined, catalog) == unjoined
    # two tables of the query hold company_name: which one is meant is not for code to say
    two = (
        "SELECT o.company_name FROM orders o JOIN customers c ON o.customer_id = c.customer_id "
        "JOIN shippers s ON o.shipper_id = s.shipper_id"
    )
    assert rejoined(two, catalog) == two
    assert rejoined("SELECT FROM WHERE (", catalog) == "SELECT FROM WHERE ("
    assert rejoined("SELECT quantity FROM order_details", catalog) == (
        "SELECT quantity FROM order_details"
    )


def test_run_query_answers_from_the_mended_query_and_says_which_it_ran(store):
    from nodes.tools.table_query import run_query

    catalog = store.catalog()
    q = "How many units did Ernst Handel order?"
    sql, result, answer, premise, why = run_query(store, SPENT, catalog, catalog, q)
    assert result is not None and answer == "5" and not premise
    assert sql != SPENT and '"orders"' in sql
    broken = "SELECT colour FROM order_details"
    sql, result, _, _, why = run_query(store, broken, catalog, catalog, q)
    assert sql == broken and result is None and "no such column: colour" in why


def test_a_table_finds_its_column_by_name_whatever_the_case(store):
    orders = next(t for t in store.catalog() if t.name == "orders")
    assert orders.column("CUSTOMER_ID") is orders.column("customer_id") is not None
    assert orders.column("product_name") is None  # order_details and products hold it


def test_a_condition_on_a_column_of_a_table_with_a_key_to_it_is_asked_of_that_table(store):
    """``customers WHERE order_id = 11``: ``orders`` holds order_id and customers' key."""
    sql = "SELECT company_name FROM customers WHERE order_id = 11"
    with pytest.raises(TableQueryError):
        _rows(store, sql)
    mended = rejoined(sql, store.catalog())
    assert 'IN (SELECT "orders"."customer_id" FROM "orders" WHERE order_id = 11)' in mended
    assert _rows(store, mended) == (("Ernst Handel",),)
    # a subquery, not a join (a customer's row is not repeated per order); its alias kept
    aliased = "SELECT c.company_name FROM customers AS c WHERE c.order_date >= '1997-03-01'"
    mended = rejoined(aliased, store.catalog())
    assert 'WHERE "c"."customer_id" IN (SELECT' in mended and "JOIN" not in mended
    assert _rows(store, mended) == (("Ernst Handel",),)
    # a count or a group counts orders, which one row per customer does not: left as written
    counted = "SELECT COUNT(*) FROM customers WHERE order_date >= '1997-01-01'"
    assert rejoined(counted, store.catalog()) == counted
    grouped = "SELECT country FROM customers WHERE order_id > 0 GROUP BY country"
    assert rejoined(grouped, store.catalog()) == grouped
    # order_details holds quantity but no key of customers: left to the database's error
    unkeyed = "SELECT company_name FROM customers WHERE quantity = 3"
    assert rejoined(unkeyed, store.catalog()) == unkeyed


def test_a_condition_on_a_column_of_the_table_a_key_stands_for_is_asked_of_that_table(store):
    """``orders WHERE country = 'UK'``: orders holds customers' key, customers the country.

    A filter on the row the key names keeps each order once, so a count is mended too.
    """
    sql = "SELECT COUNT(*) FROM orders WHERE country = 'Austria'"
    with pytest.raises(TableQueryError):
        _rows(store, sql)
    mended = rejoined(sql, store.catalog())
    assert (
        '"orders"."customer_id" IN (SELECT "customers"."customer_id" FROM "customers" '
        "WHERE country = 'Austria')"
    ) in mended
    assert _rows(store, mended) == ((1,),)
