"""The grammar the embedded model writes SQL under: real names only, SQL's words, any values.

llama.cpp reads the grammar (the integration tests send it to the real server); here it is
read as what it is, a regular language: each rule inlined into a Python regular expression,
so a reply can be checked against it exactly as the sampler would constrain it.
"""

from __future__ import annotations

import json
import re

import pytest

from crag_core.text.sql_grammar import select_grammar
from crag_core.text.table_shapes import ColumnInfo, TableInfo

PENGUINS = TableInfo(
    name="penguins",
    doc_id="d1",
    label="tables/penguins.csv",
    sheet="",
    rows=344,
    columns=tuple(
        ColumnInfo(name, name, kind, 3, ())
        for name, kind in [("species", "TEXT"), ("island", "TEXT"), ("body_mass_g", "REAL")]
    ),
)
SALES = TableInfo(
    name="sales",
    doc_id="d2",
    label="docs/sales.csv",
    sheet="",
    rows=4,
    columns=(ColumnInfo("units_sold", "Units Sold", "INTEGER", 4, ()),),
)
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|[a-zA-Z][\w-]*|[()|*+?]|\s+')


def as_regex(grammar: str) -> re.Pattern[str]:
    """The grammar's root rule as a regular expression (its rules inlined: none recurses)."""
    rules = dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())

    def expand(name: str, depth: int = 0) -> str:
        assert depth < 10, f"rule {name} recurses"
        out = []
        for token in _TOKEN.findall(rules[name]):
            if token.isspace():
                continue
            if token.startswith('"'):
                out.append(re.escape(json.loads(token)))
            elif token.startswith("[") or token in "()|*+?":
                out.append("(?:" if token == "(" else token)
            else:
                assert token in rules, f"rule {name} refers to {token}, which is not defined"
                out.append(f"(?:{expand(token, depth + 1)})")
        return "".join(out)

    return re.compile(expand("root"))


@pytest.fixture(scope="module")
def allowed():
    pattern = as_regex(select_grammar([PENGUINS]))
    return lambda sql: pattern.fullmatch(sql) is not None


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT species FROM penguins",
        "select COUNT(*) from penguins where island = 'Dream';",
        "SELECT AVG(body_mass_g) AS mean_mass FROM penguins WHERE species IN ('Adelie', 'Gentoo')",
        "SELECT T1.species FROM penguins AS T1 WHERE T1.body_mass_g >= 4000.5",
        'SELECT "species", `island` FROM "penguins" GROUP BY species ORDER BY COUNT(*) DESC',
        "SELECT CAST(SUM(body_mass_g) AS REAL) / COUNT(*) FROM penguins",
        "SELECT species FROM penguins WHERE island = 'O''Brien''s rock'",
        "SELECT\n  species\nFROM penguins\nWHERE body_mass_g IS NOT NULL",
        "SELECT DISTINCT species FROM penguins WHERE species LIKE 'A%'",
        "SELECT strftime('%Y', '2012-01-01')",
        "SELECT species FROM penguins WHERE island = 'C:\\data\\dream'",
        "SELECT COUNT(DISTINCT species),lower(upper(island)) FROM(SELECT * FROM penguins)",
        "SELECT T1.species FROM penguins AS T1 JOIN penguins AS T2 ON T1.island=T2.island",
        "SELECT species FROM penguins WHERE body_mass_g>-3 LIMIT 1",
    ],
)
def test_sql_over_the_real_names_is_allowed(allowed, sql):
    assert allowed(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT wingspan FROM penguins",  # a column the table does not have
        "SELECT species FROM birds",  # a table that is not there
        "SELECT units_sold FROM penguins",  # another table's column: not asked of it
        "SELECT * FROM sqlite_master",
        "SELECT load_extension('evil.so')",  # a function the store does not allow
        "```sql\nSELECT species FROM penguins\n```",  # a fence: the reply is the query
        "Here is the query: SELECT species FROM penguins",
        "DELETE FROM penguins",
        "SELECT species FROM penguins; DROP TABLE penguins",
        "SELECT species FROM penguins p",  # an alias without AS is a made-up name
        "SELECT species FROM penguins ORDER BY avg_mass.species",  # no made-up qualifier
        "SELECT species FROM penguins ORDER BY avg_massDESCLIMIT1._row",
        # a quote escaped as Python writes it: SQL ends the string there (the model wrote
        # this for "Cote d'Ivoire" and then ran on for hundreds of tokens)
        "SELECT species FROM penguins WHERE island = 'Cote d\\'Ivoire'",
        # a column written as a table, after FROM or JOIN
        "SELECT species FROM island",
        "SELECT T1.species FROM penguins AS T1 INNER JOIN `island` AS T2 ON T1.island = T2.island",
        # words written on with nothing between: a name no table has (islands2.species)
        "SELECT species FROM penguins WHERE islands2.species = 'Adelie'",
        "SELECT speciesFROM penguins",
    ],
)
def test_anything_else_cannot_be_written(allowed, sql):
    assert not allowed(sql)


def test_only_the_tables_asked_of_are_named():
    both = as_regex(select_grammar([PENGUINS, SALES]))
    assert both.fullmatch("SELECT SUM(units_sold) FROM sales")
    assert not as_regex(select_grammar([SALES])).fullmatch("SELECT species FROM penguins")
