"""A calibration set of table questions that need joins: a sample shop's seven tables.

The table answers' confidence is fitted on questions asked of one table at a time (every
calibration set before this one: ``rtables``, ``rquantities``, the tools benchmark's split),
and it does not carry over to files that join on keys. This set asks its questions of the
Northwind sample database (``benchmarks/data/rjoins``, see its README for the source and
licence): ``customers``, ``orders``, ``order_details``, ``products``, ``suppliers``,
``categories`` and ``shippers``, joined by ``<table>_id`` keys, with dates, money and the
contacts' names in a first-name and a last-name column.

The questions are a shop keeper's, in plain words, and most of them cross a key: a name held
in another table than the one the question names (who supplies a product, which category it
is filed under), a contact's full name from two columns, counts, sums and averages across a
join, the top or second of a group, two named things compared, short lists, a change from
one year to the next or a share, two conditions at once, an order number or a customer code
asked for (a key that is the answer), and things the shop never had (a false premise). Each
gold is computed from the CSV files by SQL (``sqlite3`` in memory), instances are drawn with
a fixed seed, and an instance whose answer is tied, or that reads two ways (a customer's
country and the country an order was shipped to disagree), is skipped.

Every question is ``calibration``: the set is for fitting and choosing, never for reporting.
``python -m benchmarks.measurements.tools build --set rjoins`` rewrites ``questions.jsonl``.
"""

from __future__ import annotations

import csv
import random
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import DATA
from benchmarks.measurements.tools_questions import named, numbered, q

RJOINS = DATA / "rjoins"
QUESTIONS = RJOINS / "questions.jsonl"
FILES = {p.name: p for p in sorted(RJOINS.iterdir()) if p.suffix == ".csv"}
"""The seven tables (the README and the questions are about the set, not in it)."""
MODIFIED = {name: f"2025-05-0{1 + i}" for i, name in enumerate(sorted(FILES))}
SEED = 31
PER_TEMPLATE = 5
YEARS = (1996, 1997, 1998)
SALES = "SUM(d.unit_price * d.quantity * (1 - d.discount))"
"""What a sale brought in: price times quantity, less its discount."""

ABSENT_PRODUCTS = ("Earl Grey Tea", "Kona Coffee", "Maple Walnut Granola")
ABSENT_CUSTOMERS = ("GREEN VALLEY MARKET", "NORDIC FINE FOODS")
ABSENT_SHIPPERS = ("Rapid Freight Lines",)


def cell(text: str) -> int | float | str | None:
    """A CSV cell as an integer or a number where it is one; an empty cell None."""
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def connect() -> sqlite3.Connection:
    """The seven tables in an in-memory SQLite database, a table per file."""
    db = load(FILES.values())
    _check_keys(db)
    return db


def load(files: Iterable[Path]) -> sqlite3.Connection:
    """CSV ``files`` in an in-memory SQLite database, a table per file named for it."""
    db = sqlite3.connect(":memory:")
    for path in files:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            head = next(reader)
            rows = [[cell(c) for c in r] for r in reader]
        table = path.stem
        db.execute(f"CREATE TABLE {table} ({', '.join(head)})")
        db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(head))})", rows)
    return db


def _check_keys(db: sqlite3.Connection) -> None:
    """Every key column's value names a row of the table it refers to."""
    for table, key, parent in (
        ("products", "supplier_id", "suppliers"),
        ("products", "category_id", "categories"),
        ("orders", "customer_id", "customers"),
        ("orders", "shipper_id", "shippers"),
        ("order_details", "order_id", "orders"),
        ("order_details", "product_id", "products"),
    ):
        lost = db.execute(
            f"SELECT COUNT(*) FROM {table} WHERE {key} NOT IN (SELECT {key} FROM {parent})"
        ).fetchone()[0]
        assert lost == 0, f"{table}.{key}: {lost} rows refer to no {parent} row"


class Tables:
    """A set's tables in SQLite and the look-ups its templates share."""

    db: sqlite3.Connection

    def rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """The rows a query returns."""
        return list(self.db.execute(sql, args).fetchall())

    def one(self, sql: str, *args: Any) -> Any:
        """The single value a query returns."""
        return self.db.execute(sql, args).fetchone()[0]

    def column(self, sql: str, *args: Any) -> list[str]:
        """A query's first column as sorted text."""
        return sorted(str(r[0]) for r in self.rows(sql, *args))

    def score(self, sql: str, *args: Any) -> dict[str, float]:
        """A query's (name, value) rows as a mapping."""
        return {str(k): float(v) for k, v in self.rows(sql, *args)}


class Shop(Tables):
    """The shop's database and the names the templates draw from."""

    def __init__(self) -> None:
        """Read the tables and the names the templates draw from."""
        self.db = connect()
        self.products = self.column("SELECT product_name FROM products")
        self.suppliers = self.column("SELECT company_name FROM suppliers")
        self.categories = self.column("SELECT category_name FROM categories")
        self.shippers = self.column("SELECT company_name FROM shippers")
        self.customers = self.column("SELECT company_name FROM customers")
        self.countries = self.column(
            "SELECT DISTINCT c.country FROM customers c JOIN orders o USING (customer_id)"
        )

    def contacts(self, table: str) -> list[str]:
        """The contacts' full names of ``customers`` or ``suppliers``: first and last name."""
        return self.column(f"SELECT contact_first_name || ' ' || contact_last_name FROM {table}")

    def country_orders_agree(self, country: str, year: int | None = None) -> bool:
        """Whether a customer country's orders are the ones shipped to that country."""
        when = "" if year is None else f"AND strftime('%Y', o.order_date) = '{year}'"
        by_customer = self.one(
            f"SELECT COUNT(*) FROM orders o JOIN customers c USING (customer_id) "
            f"WHERE c.country = ? {when}",
            country,
        )
        shipped = self.one(
            f"SELECT COUNT(*) FROM orders o WHERE o.ship_country = ? {when}", country
        )
        return bool(by_customer == shipped)


def _r(x: float) -> float:
    """A sum of money, an average or a share, as the sets round them: two places."""
    return round(float(x), 2)


def _place(country: str) -> str:
    """A country as a sentence names it: "the USA", "the UK", "Germany"."""
    return f"the {country}" if country in ("USA", "UK") else country


def _others(pool: Iterable[str], *said: str) -> list[str]:
    """The values of ``pool`` an answer must not name: none of them inside what it may say."""
    return sorted({p for p in pool if p not in said and not any(named(p, s) for s in said)})


def _top(score: dict[str, float], rank: int = 1) -> str | None:
    """The name ranked ``rank`` by ``score`` (highest first); None where a tie touches it."""
    ordered = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(ordered) <= rank:
        return None
    values = [v for _, v in ordered]
    if values[rank - 1] == values[rank] or (rank > 1 and values[rank - 2] == values[rank - 1]):
        return None
    return ordered[rank - 1][0]


def _draw(
    rng: random.Random,
    pool: Sequence[Any],
    make: Callable[[Any], dict[str, Any] | None],
    n: int = PER_TEMPLATE,
) -> Iterable[dict[str, Any]]:
    """Up to ``n`` questions ``make`` builds from ``pool`` in a seeded order; None is skipped."""
    made = 0
    for item in rng.sample(list(pool), len(pool)):
        if made == n:
            return
        row = make(item)
        if row is not None:
            made += 1
            yield row


# --- names reached through a key ---------------------------------------------------------------


def _lookups(s: Shop, rng: random.Random) -> Iterable[dict[str, Any]]:
    """A name held in another table than the one the question names, or a contact's name."""

    def supplier(product: str) -> dict[str, Any]:
        """Who supplies a product: the supplier's company name."""
        gold = s.one(
            "SELECT s.company_name FROM products p JOIN suppliers s USING (supplier_id) "
            "WHERE p.product_name = ?",
            product,
        )
        return q(
            "rj-supplier-of",
            f"Who supplies {product}?",
            "table",
            "simple",
            "text",
            gold,
            universe=_others(s.suppliers, gold, product),
        )

    yield from _draw(rng, s.products, supplier, 6)

    def category(product: str) -> dict[str, Any]:
        """The category a product is filed under."""
        gold = s.one(
            "SELECT c.category_name FROM products p JOIN categories c USING (category_id) "
            "WHERE p.product_name = ?",
            product,
        )
        return q(
            "rj-category-of",
            f"What kind of product is {product}: which category is it sold under?",
            "table",
            "simple",
            "text",
            gold,
            universe=_others(s.categories, gold, product),
        )

    yield from _draw(rng, s.products, category)

    def contact(product: str) -> dict[str, Any]:
        """The contact at a product's supplier, first and last name."""
        gold = s.one(
            "SELECT s.contact_first_name || ' ' || s.contact_last_name FROM products p "
            "JOIN suppliers s USING (supplier_id) WHERE p.product_name = ?",
            product,
        )
        return q(
            "rj-supplier-contact",
            f"Who is our contact person at the company that supplies {product}?",
            "table",
            "multi-hop",
            "text",
            gold,
            universe=_others(s.contacts("suppliers"), gold),
        )

    yield from _draw(rng, s.products, contact, 6)

    orders = [r[0] for r in s.rows("SELECT order_id FROM orders")]

    def buyer(order: int) -> dict[str, Any]:
        """The contact of the customer that placed an order."""
        gold = s.one(
            "SELECT c.contact_first_name || ' ' || c.contact_last_name FROM orders o "
            "JOIN customers c USING (customer_id) WHERE o.order_id = ?",
            order,
        )
        return q(
            "rj-order-contact",
            f"Who is the contact person of the customer that placed order {order}?",
            "table",
            "multi-hop",
            "text",
            gold,
            universe=_others(s.contacts("customers"), gold),
        )

    yield from _draw(rng, orders, buyer)


# --- keys as answers ---------------------------------------------------------------------------


def _keys(s: Shop, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Questions whose answer is a key: an order number, a customer code."""
    buyers = s.column(
        "SELECT DISTINCT c.company_name FROM customers c JOIN orders o USING (customer_id)"
    )

    def latest(customer: str) -> dict[str, Any] | None:
        """The order number of a customer's latest order (a tie on its date: None)."""
        placed = s.rows(
            "SELECT o.order_id, o.order_date FROM orders o JOIN customers c USING (customer_id) "
            "WHERE c.company_name = ? ORDER BY o.order_date DESC",
            customer,
        )
        if len(placed) < 2 or placed[0][1] == placed[1][1]:
            return None
        gold = str(placed[0][0])
        return q(
            "rj-key-latest-order",
            f"What is the order number of the most recent order from {customer}?",
            "table",
            "simple",
            "text",
            gold,
            universe=_others((str(o) for o, _ in placed), gold),
        )

    yield from _draw(rng, buyers, latest)

    codes = s.column("SELECT customer_code FROM customers")
    orders = [r[0] for r in s.rows("SELECT order_id FROM orders")]

    def code(order: int) -> dict[str, Any]:
        """The customer code of an order's customer."""
        gold = s.one(
            "SELECT c.customer_code FROM orders o JOIN customers c USING (customer_id) "
            "WHERE o.order_id = ?",
            order,
        )
        return q(
            "rj-key-customer-code",
            f"What is the customer code of whoever placed order {order}?",
            "table",
            "simple",
            "text",
            gold,
            universe=_others(codes, gold),
        )

    yield from _draw(rng, orders, code, 4)


# --- counts, sums and averages across a join ---------------------------------------------------

BY_COUNTRY = "FROM orders o JOIN customers c USING (customer_id) WHERE c.country = ?"
IN_YEAR = "strftime('%Y', o.order_date) = ?"


def _aggregations(s: Shop, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Counts, sums and averages over rows that a key joins."""

    def orders(country: str) -> dict[str, Any] | None:
        """How many orders a country's customers placed."""
        if not s.country_orders_agree(country):
            return None
        return q(
            "rj-orders-country",
            f"How many orders did customers in {_place(country)} place?",
            "table",
            "aggregation",
            "number",
            s.one(f"SELECT COUNT(*) {BY_COUNTRY}", country),
        )

    yield from _draw(rng, s.countries, orders, 6)

    pairs = [(c, y) for c in s.countries for y in YEARS]

    def orders_in(pair: tuple[str, int]) -> dict[str, Any] | None:
        """How many orders a country's customers placed in a year (none: None)."""
        country, year = pair
        n = s.one(f"SELECT COUNT(*) {BY_COUNTRY} AND {IN_YEAR}", country, str(year))
        if n == 0 or not s.country_orders_agree(country, year):
            return None
        return q(
            "rj-orders-country-year",
            f"How many orders came in from customers in {_place(country)} during {year}?",
            "table",
            "condition",
            "number",
            n,
        )

    yield from _draw(rng, pairs, orders_in, 6)

    def late(country: str) -> dict[str, Any] | None:
        """How many of a country's orders were shipped after their required date."""
        n = s.one(f"SELECT COUNT(*) {BY_COUNTRY} AND o.shipped_date > o.required_date", country)
        if n == 0 or not s.country_orders_agree(country):
            return None
        return q(
            "rj-late-country",
            f"How many orders from customers in {_place(country)} went out later than the date "
            "they were required by?",
            "table",
            "condition",
            "number",
            n,
        )

    yield from _draw(rng, s.countries, late)

    by_shipper = [(sh, y) for sh in s.shippers for y in YEARS]

    def freight(pair: tuple[str, int]) -> dict[str, Any]:
        """The freight of a shipper's orders in a year."""
        shipper, year = pair
        total = s.one(
            f"SELECT SUM(o.freight) FROM orders o JOIN shippers sh USING (shipper_id) "
            f"WHERE sh.company_name = ? AND {IN_YEAR}",
            shipper,
            str(year),
        )
        return q(
            "rj-freight-shipper",
            f"What was the total freight we paid on orders sent with {shipper} in {year}?",
            "table",
            "aggregation",
            "number",
            _r(total),
        )

    yield from _draw(rng, by_shipper, freight)

    by_category = [(c, y) for c in s.categories for y in YEARS]

    def units(pair: tuple[str, int]) -> dict[str, Any]:
        """The units of a category's products sold in a year."""
        category, year = pair
        n = s.one(
            "SELECT SUM(d.quantity) FROM order_details d JOIN orders o USING (order_id) "
            "JOIN products p USING (product_id) JOIN categories c USING (category_id) "
            f"WHERE c.category_name = ? AND {IN_YEAR}",
            category,
            str(year),
        )
        return q(
            "rj-units-category",
            f"How many units of {category} did we sell in {year}?",
            "table",
            "aggregation",
            "number",
            n,
        )

    yield from _draw(rng, by_category, units)

    def average(country: str) -> dict[str, Any] | None:
        """The average freight of a country's orders."""
        if not s.country_orders_agree(country):
            return None
        return q(
            "rj-avg-freight-country",
            f"What was the average freight charge on orders from customers in {_place(country)}?",
            "table",
            "aggregation",
            "number",
            _r(s.one(f"SELECT AVG(o.freight) {BY_COUNTRY}", country)),
        )

    yield from _draw(rng, s.countries, average)

    buyers = [
        (c, y)
        for c, y in s.rows(
            "SELECT DISTINCT c.company_name, strftime('%Y', o.order_date) "
            "FROM orders o JOIN customers c USING (customer_id)"
        )
    ]

    def spend(pair: tuple[str, str]) -> dict[str, Any]:
        """What a customer spent in a year, after discounts."""
        customer, year = pair
        total = s.one(
            f"SELECT {SALES} FROM order_details d JOIN orders o USING (order_id) "
            f"JOIN customers c USING (customer_id) WHERE c.company_name = ? AND {IN_YEAR}",
            customer,
            year,
        )
        return q(
            "rj-spend-customer",
            f"How much did {customer} spend with us in {year}, after discounts?",
            "table",
            "aggregation",
            "number",
            _r(total),
        )

    yield from _draw(rng, sorted(buyers), spend)


# --- the top, the second, the top of a group ---------------------------------------------------


def _ranks(s: Shop, rng: random.Random) -> Iterable[dict[str, Any]]:
    """The first or second by a sum or a count over a join, overall or within a group."""
    buyers = s.column(
        "SELECT DISTINCT c.company_name FROM customers c JOIN orders o USING (customer_id)"
    )

    def favourite(customer: str) -> dict[str, Any] | None:
        """The product a customer bought the most units of (a tie: None)."""
        score = s.score(
            "SELECT p.product_name, SUM(d.quantity) FROM order_details d "
            "JOIN orders o USING (order_id) JOIN customers c USING (customer_id) "
            "JOIN products p USING (product_id) WHERE c.company_name = ? GROUP BY 1",
            customer,
        )
        top = _top(score)
        if top is None or len(score) < 3:
            return None
        return q(
            "rj-customer-top-product",
            f"Which product has {customer} bought the most units of?",
            "table",
            "aggregation",
            "text",
            top,
            universe=_others(score, top, customer),
        )

    yield from _draw(rng, buyers, favourite)

    def busiest(country: str) -> dict[str, Any] | None:
        """A country's customer with the most orders (a tie: None)."""
        score = s.score(f"SELECT c.company_name, COUNT(*) {BY_COUNTRY} GROUP BY 1", country)
        top = _top(score)
        if top is None or len(score) < 3:
            return None
        return q(
            "rj-country-top-customer",
            f"Which customer in {_place(country)} has placed the most orders?",
            "table",
            "aggregation",
            "text",
            top,
            universe=_others(score, top),
        )

    yield from _draw(rng, s.countries, busiest)

    def liked(country: str) -> dict[str, Any] | None:
        """The category a country's customers bought the most units of (a tie: None)."""
        score = s.score(
            "SELECT k.category_name, SUM(d.quantity) FROM order_details d "
            "JOIN orders o USING (order_id) JOIN customers c USING (customer_id) "
            "JOIN products p USING (product_id) JOIN categories k USING (category_id) "
            "WHERE c.country = ? GROUP BY 1",
            country,
        )
        top = _top(score)
        if top is None:
            return None
        return q(
            "rj-country-top-category",
            f"Which category of products sells the most units to customers in {_place(country)}?",
            "table",
            "aggregation",
            "text",
            top,
            universe=_others(s.categories, top),
        )

    yield from _draw(rng, s.countries, liked)

    def second_product(category: str) -> dict[str, Any] | None:
        """A category's product second by sales (a tie: None)."""
        score = s.score(
            f"SELECT p.product_name, {SALES} FROM order_details d "
            "JOIN products p USING (product_id) JOIN categories k USING (category_id) "
            "WHERE k.category_name = ? GROUP BY 1",
            category,
        )
        second = _top(score, 2)
        if second is None:
            return None
        return q(
            "rj-second-product",
            f"Among our {category}, which product brought in the second highest sales "
            "after discounts?",
            "table",
            "post-processing",
            "text",
            second,
            universe=_others(score, second, category),
        )

    yield from _draw(rng, s.categories, second_product)


# --- two named things compared -----------------------------------------------------------------


def _comparisons(s: Shop, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Which of two named things is ahead by a sum or a count over a join."""
    sold = s.score(
        "SELECT p.product_name, SUM(d.quantity) FROM order_details d "
        "JOIN products p USING (product_id) GROUP BY 1"
    )
    names = sorted(sold)
    pairs = [tuple(rng.sample(names, 2)) for _ in range(20)]

    def more(pair: tuple[str, str]) -> dict[str, Any] | None:
        """Which of two products sold more units (equal, or one named in the other: None)."""
        a, b = pair
        if sold[a] == sold[b] or named(a, b) or named(b, a):
            return None
        return q(
            "rj-pair-products",
            f"Which sold more units: {a} or {b}?",
            "table",
            "comparison",
            "text",
            a if sold[a] > sold[b] else b,
            universe=[a, b],
        )

    yield from _draw(rng, pairs, more, 6)

    carried = [(c, a, b) for c in s.countries for a in s.shippers for b in s.shippers if a < b]

    def carrier(triple: tuple[str, str, str]) -> dict[str, Any] | None:
        """Which of two shippers carried more of a country's orders (equal: None)."""
        country, a, b = triple
        if not s.country_orders_agree(country):
            return None
        score = s.score(
            "SELECT sh.company_name, COUNT(*) FROM orders o JOIN customers c USING (customer_id) "
            "JOIN shippers sh USING (shipper_id) WHERE c.country = ? GROUP BY 1",
            country,
        )
        na, nb = score.get(a, 0.0), score.get(b, 0.0)
        if na == nb:
            return None
        first, second = (a, b) if rng.random() < 0.5 else (b, a)
        return q(
            "rj-pair-shippers",
            f"Which shipping company carried more orders to our customers in {_place(country)}: "
            f"{first} or {second}?",
            "table",
            "comparison",
            "text",
            a if na > nb else b,
            universe=[a, b],
        )

    yield from _draw(rng, carried, carrier)


# --- short lists --------------------------------------------------------------------------------


def _sets(s: Shop, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Lists of two to eight names that a join selects."""

    def range_of(supplier: str) -> dict[str, Any] | None:
        """A supplier's products (fewer than two or more than eight: None)."""
        members = s.column(
            "SELECT p.product_name FROM products p JOIN suppliers s USING (supplier_id) "
            "WHERE s.company_name = ?",
            supplier,
        )
        if not 2 <= len(members) <= 8:
            return None
        return q(
            "rj-set-supplier-products",
            f"Which products do we buy from {supplier}?",
            "table",
            "set",
            "set",
            members,
            universe=_others(s.products, *members, supplier),
        )

    yield from _draw(rng, s.suppliers, range_of)

    gone = s.column(
        "SELECT DISTINCT k.category_name FROM products p JOIN categories k USING (category_id) "
        "WHERE p.discontinued = 1"
    )

    def dropped(category: str) -> dict[str, Any] | None:
        """A category's discontinued products."""
        members = s.column(
            "SELECT p.product_name FROM products p JOIN categories k USING (category_id) "
            "WHERE k.category_name = ? AND p.discontinued = 1",
            category,
        )
        if not 1 <= len(members) <= 8:
            return None
        return q(
            "rj-set-discontinued",
            f"Which of our {category} products have been discontinued?",
            "table",
            "set",
            "set",
            members,
            universe=_others(s.products, *members, category),
        )

    yield from _draw(rng, gone, dropped, 4)

    pairs = [(c, p) for c in s.countries for p in s.products]

    def buyers(pair: tuple[str, str]) -> dict[str, Any] | None:
        """A country's customers that ordered a product (two to six, else None)."""
        country, product = pair
        members = s.column(
            "SELECT DISTINCT c.company_name FROM order_details d JOIN orders o USING (order_id) "
            "JOIN customers c USING (customer_id) JOIN products p USING (product_id) "
            "WHERE c.country = ? AND p.product_name = ?",
            country,
            product,
        )
        if not 2 <= len(members) <= 6:
            return None
        pool = s.column("SELECT company_name FROM customers WHERE country = ?", country)
        return q(
            "rj-set-country-buyers",
            f"Which of our customers in {_place(country)} have ordered {product}?",
            "table",
            "set",
            "set",
            members,
            universe=_others(pool, *members, product),
        )

    yield from _draw(rng, pairs, buyers)


# --- a change, a difference, a share -----------------------------------------------------------


def _arithmetic(s: Shop, rng: random.Random) -> Iterable[dict[str, Any]]:
    """A difference between two years, or a share, worked out from sums over a join."""

    def growth(country: str) -> dict[str, Any] | None:
        """How many more orders a country placed in 1997 than in 1996 (not more: None)."""
        n = {
            y: s.one(f"SELECT COUNT(*) {BY_COUNTRY} AND {IN_YEAR}", country, str(y))
            for y in (1996, 1997)
        }
        if n[1997] <= n[1996] or not all(s.country_orders_agree(country, y) for y in n):
            return None
        return q(
            "rj-orders-growth",
            f"How many more orders did customers in {_place(country)} place in 1997 than in 1996?",
            "table",
            "post-processing",
            "number",
            n[1997] - n[1996],
        )

    yield from _draw(rng, s.countries, growth)

    shares = [(c, sh) for c in s.countries for sh in s.shippers]

    def share(pair: tuple[str, str]) -> dict[str, Any] | None:
        """The percentage of a country's orders a shipper carried."""
        country, shipper = pair
        if not s.country_orders_agree(country):
            return None
        total = s.one(f"SELECT COUNT(*) {BY_COUNTRY}", country)
        sent = s.one(
            "SELECT COUNT(*) FROM orders o JOIN customers c USING (customer_id) "
            "JOIN shippers sh USING (shipper_id) WHERE c.country = ? AND sh.company_name = ?",
            country,
            shipper,
        )
        if total < 5 or sent == 0:
            return None
        return q(
            "rj-shipper-share",
            f"What percentage of the orders from customers in {_place(country)} were sent "
            f"with {shipper}?",
            "table",
            "post-processing",
            "number",
            _r(100 * sent / total),
        )

    yield from _draw(rng, shares, share)


# --- false premises ----------------------------------------------------------------------------


def _premises(s: Shop) -> Iterable[dict[str, Any]]:
    """Questions about a product, customer or shipper the shop never had."""
    assert not set(ABSENT_PRODUCTS) & set(s.products)
    assert not set(ABSENT_CUSTOMERS) & set(s.customers)
    assert not set(ABSENT_SHIPPERS) & set(s.shippers)
    asked = [
        f"Who supplies {ABSENT_PRODUCTS[0]}?",
        f"How many units of {ABSENT_PRODUCTS[1]} did we sell in 1997?",
        f"Which category is {ABSENT_PRODUCTS[2]} sold under?",
        f"How many orders has {ABSENT_CUSTOMERS[0]} placed?",
        f"Who is the contact person at {ABSENT_CUSTOMERS[1]}?",
        f"What was the total freight on orders sent with {ABSENT_SHIPPERS[0]} in 1997?",
    ]
    for question in asked:
        yield q("rj-premise", question, "table", "false premise", "premise", "")


def build() -> list[dict[str, Any]]:
    """Every question, with an id; all of them ``calibration``."""
    shop = Shop()
    rng = random.Random(SEED)
    made = [
        *_lookups(shop, rng),
        *_keys(shop, rng),
        *_aggregations(shop, rng),
        *_ranks(shop, rng),
        *_comparisons(shop, rng),
        *_sets(shop, rng),
        *_arithmetic(shop, rng),
        *_premises(shop),
    ]
    return _checked(numbered(made, "calibration"))


def _checked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows``, after the checks every set must pass: no question twice, no empty gold."""
    twice = [x for x, n in Counter(r["question"] for r in rows).items() if n > 1]
    assert not twice, twice
    assert len({r["id"] for r in rows}) == len(rows)
    empty = [
        r["id"] for r in rows if r["gold"] in (None, "", [], {}) and r["gold_kind"] != "premise"
    ]
    assert not empty, empty
    return rows


__all__ = ["FILES", "MODIFIED", "QUESTIONS", "build"]
