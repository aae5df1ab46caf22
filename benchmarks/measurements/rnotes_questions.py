"""A calibration set of table-and-text questions: the sample shop's tables beside country notes.

Every calibration set before this one asks a table question or a text question; none asks a
question whose answer needs both, the shape a new user's folder of tables and notes is full
of ("how many customers in the country whose capital is Ottawa?", "what is the capital of
the country this supplier is in?"). This set puts the joined-tables set's seven Northwind
tables (``benchmarks/data/rjoins``) beside a short note per country the shop trades with
(``benchmarks/data/rnotes``: each a Wikipedia summary, see its README), and asks questions
that cross from a note to a table or from a table to a note:

- the note first: a country named by its capital, then counted, listed or summed in a table;
- the table first: a supplier's, customer's or product's country, then its capital from the
  note (the notes name the United States and the United Kingdom; the tables say USA and UK).

Each gold is computed from the CSV files by SQL and from the note's text (the capital a note
names, checked present in it); instances are drawn with a fixed seed. Every question is
``calibration``: the set is for studying and choosing, never for reporting.
``python -m benchmarks.measurements.tools build --set rnotes`` writes the notes from the
Wikipedia summaries (``../shared``, at build time only) and rewrites ``questions.jsonl``.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks import DATA
from benchmarks.measurements.rjoins_questions import FILES as TABLES
from benchmarks.measurements.rjoins_questions import MODIFIED as TABLES_MODIFIED
from benchmarks.measurements.rjoins_questions import Shop, _checked, _draw, _others
from benchmarks.measurements.tools_questions import numbered, q

RNOTES = DATA / "rnotes"
QUESTIONS = RNOTES / "questions.jsonl"
SEED = 47
PER_TEMPLATE = 3

TITLES = {"USA": "United States", "UK": "United Kingdom"}
"""The article a table's country is named by, where the table abbreviates it."""
CAPITALS = {
    "Argentina": "Buenos Aires",
    "Austria": "Vienna",
    "Belgium": "Brussels",
    "Brazil": "Brasília",
    "Canada": "Ottawa",
    "Finland": "Helsinki",
    "France": "Paris",
    "Germany": "Berlin",
    "Italy": "Rome",
    "Japan": "Tokyo",
    "Mexico": "Mexico City",
    "Norway": "Oslo",
    "Poland": "Warsaw",
    "Portugal": "Lisbon",
    "Spain": "Madrid",
    "Sweden": "Stockholm",
    "UK": "London",
    "USA": "Washington",
    "Venezuela": "Caracas",
}
"""The capital each country's note names (checked in ``notes``); a note that names none is
only there to be read past."""


def _note_name(country: str) -> str:
    """A country's note's file name: ``united_states.md``."""
    return TITLES.get(country, country).lower().replace(" ", "_") + ".md"


def _countries(shop: Shop) -> list[str]:
    """Every country a customer or a supplier is in, as the tables spell it."""
    return sorted(
        {
            *shop.column("SELECT DISTINCT country FROM customers"),
            *shop.column("SELECT DISTINCT country FROM suppliers"),
        }
    )


def notes(wikipedia: Path) -> list[Path]:
    """Write a note per country from its Wikipedia summary; the capitals checked in them."""
    wanted = {TITLES.get(c, c): c for c in _countries(Shop())}
    found: dict[str, str] = {}
    with gzip.open(wikipedia, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["title"] in wanted:
                found[row["title"]] = row["text"].strip()
    missing = sorted(set(wanted) - set(found))
    assert not missing, f"no summary for {missing}"
    written = []
    for title, country in sorted(wanted.items()):
        text = found[title]
        capital = CAPITALS.get(country)
        assert capital is None or capital in text, f"{title}'s summary does not name {capital}"
        path = RNOTES / _note_name(country)
        path.write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        written.append(path)
    return written


FILES = TABLES | {p.name: p for p in sorted(RNOTES.glob("*.md")) if p.name != "README.md"}
"""The seven tables and the country notes (the README and the questions are about the set)."""
MODIFIED = TABLES_MODIFIED | {n: "2025-05-10" for n in FILES if n.endswith(".md")}


def _by_capital(s: Shop, rng: random.Random) -> Iterable[dict[str, Any]]:
    """A country named by the capital its note gives, then read in a table."""
    customers = s.score("SELECT country, COUNT(*) FROM customers GROUP BY country")
    suppliers = s.score("SELECT country, COUNT(*) FROM suppliers GROUP BY country")
    known = sorted(CAPITALS)

    def customers_in(country: str) -> dict[str, Any] | None:
        if country not in customers:
            return None
        return q(
            "rn-customers-by-capital",
            f"How many customers does the shop have in the country whose capital is "
            f"{CAPITALS[country]}?",
            "both",
            "multi-hop",
            "number",
            int(customers[country]),
        )

    def suppliers_in(country: str) -> dict[str, Any] | None:
        if country not in suppliers:
            return None
        return q(
            "rn-suppliers-by-capital",
            f"How many suppliers are based in the country whose capital is {CAPITALS[country]}?",
            "both",
            "multi-hop",
            "number",
            int(suppliers[country]),
        )

    def supplier_in(country: str) -> dict[str, Any] | None:
        if suppliers.get(country) != 1:
            return None
        gold = s.one("SELECT company_name FROM suppliers WHERE country = ?", country)
        return q(
            "rn-supplier-by-capital",
            f"Which supplier is based in the country whose capital is {CAPITALS[country]}?",
            "both",
            "multi-hop",
            "text",
            gold,
            universe=_others(s.suppliers, gold),
        )

    def orders_in(pair: tuple[str, int]) -> dict[str, Any] | None:
        country, year = pair
        if country not in customers or not s.country_orders_agree(country, year):
            return None
        n = s.one(
            "SELECT COUNT(*) FROM orders o JOIN customers c USING (customer_id) "
            "WHERE c.country = ? AND strftime('%Y', o.order_date) = ?",
            country,
            str(year),
        )
        if not n:
            return None
        return q(
            "rn-orders-by-capital",
            f"How many orders did customers in the country whose capital is "
            f"{CAPITALS[country]} place in {year}?",
            "both",
            "multi-hop",
            "number",
            int(n),
        )

    yield from _draw(rng, known, customers_in, PER_TEMPLATE)
    yield from _draw(rng, known, suppliers_in, PER_TEMPLATE)
    yield from _draw(rng, known, supplier_in, PER_TEMPLATE)
    yield from _draw(rng, [(c, y) for c in known for y in (1997, 1998)], orders_in, PER_TEMPLATE)


def _capital_of(s: Shop, rng: random.Random) -> Iterable[dict[str, Any]]:
    """A country read in a table, then its capital from the note.

    The country of a supplier, of a customer, or of the supplier of a product.
    """
    capitals = sorted(set(CAPITALS.values()))
    asked = (
        (
            "rn-capital-of-supplier",
            s.suppliers,
            "What is the capital of the country where the supplier {} is based?",
            "SELECT country FROM suppliers WHERE company_name = ?",
        ),
        (
            "rn-capital-of-customer",
            s.customers,
            "What is the capital of the country the customer {} is in?",
            "SELECT country FROM customers WHERE company_name = ?",
        ),
        (
            "rn-capital-of-product",
            s.products,
            "What is the capital of the country {} is supplied from?",
            "SELECT s.country FROM products p JOIN suppliers s USING (supplier_id) "
            "WHERE p.product_name = ?",
        ),
    )
    for template, pool, question, where in asked:

        def capital(
            name: str, template: str = template, question: str = question, where: str = where
        ) -> dict[str, Any] | None:
            country = s.one(where, name)
            if country not in CAPITALS:
                return None
            gold = CAPITALS[country]
            universe = _others(capitals, gold)
            return q(template, question.format(name), "both", "multi-hop", "text", gold, universe)

        yield from _draw(rng, pool, capital, PER_TEMPLATE)


def build(wikipedia: Path | None = None) -> list[dict[str, Any]]:
    """Every question, with an id; all of them ``calibration``.

    With ``wikipedia`` (the vital articles' summaries) the notes are written from it first.
    """
    if wikipedia is not None:
        notes(wikipedia)
    shop = Shop()
    rng = random.Random(SEED)
    made = [*_by_capital(shop, rng), *_capital_of(shop, rng)]
    return _checked(numbered(made, "calibration"))


__all__ = ["FILES", "MODIFIED", "QUESTIONS", "build", "notes"]
