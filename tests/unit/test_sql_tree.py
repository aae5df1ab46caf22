"""A query read once into a tree: every check reads the same comparisons, however written."""

from __future__ import annotations

from crag_core.text.sql import held_by, missing_values, misspelled
from crag_core.text.sql_tree import Comparison, read
from tests.unit.test_table_checks import store  # noqa: F401  (the fixture)


def test_comparisons_are_read_from_the_columns_side_however_written():
    query = read(
        "SELECT \"Name\" FROM t WHERE t.\"Name\" = 'O''Brien' AND 1987 < year "
        "AND kind IN ('a', 'b') AND w BETWEEN 3 AND 4 AND v == -2 AND c = (SELECT MAX(c) FROM t)"
    )
    assert query.parsed
    assert query.comparisons == (
        Comparison("Name", "=", "O'Brien", text=True),
        Comparison("year", ">", "1987", text=False),  # the value first: the side flipped
        Comparison("kind", "in", "a", text=True),
        Comparison("kind", "in", "b", text=True),
        Comparison("w", ">=", "3", text=False),
        Comparison("w", "<=", "4", text=False),
        Comparison("v", "=", "-2", text=False),
        Comparison("c", "=", None, text=False),  # a subquery is no literal
    )
    assert query.equalities() == [("Name", "O'Brien"), ("kind", "a"), ("kind", "b")]
    assert query.numbers_equal() == [("v", "-2")]
    assert query.compared() == ["Name", "year", "kind", "w", "v", "c"]


def test_a_date_function_marks_its_column_and_is_no_equality():
    query = read("SELECT COUNT(*) FROM t WHERE strftime('%Y', day) = '2001' AND julianday(d) > 3")
    assert query.dated == ("day", "d")
    assert [c.dated for c in query.comparisons] == [True, True]
    assert query.equalities() == [] and query.numbers_equal() == []


def test_a_query_that_does_not_parse_compares_nothing():
    assert read("SELECT FROM WHERE ((").comparisons == ()
    assert read("SELECT FROM WHERE ((").parsed is False


def test_a_quoted_column_no_longer_escapes_the_checks(store):  # noqa: F811
    catalog = store.catalog()
    tips = [t for t in catalog if t.name == "tips"]
    crime = [t for t in catalog if t.name == "crime"]
    for sql in (
        "SELECT AVG(tip) FROM tips WHERE \"day\" = 'Sunday'",
        "SELECT AVG(tip) FROM tips WHERE 'Sunday' = day",
    ):
        assert misspelled(sql, tips) == ["day holds 'Sun', not 'Sunday'"], sql
    assert missing_values("SELECT murder_rate FROM crime WHERE \"state\" = 'Italy'", crime)
    assert "state holds" in held_by(
        "SELECT murder_rate FROM crime WHERE \"state\" IN ('Italy')", crime, {}
    )


def test_a_negated_comparison_names_no_value_the_column_should_hold():
    query = read(
        "SELECT 1 FROM t WHERE country NOT IN ('Total') AND name NOT LIKE 'World' "
        "AND NOT v = 1 AND w = 'x' COLLATE NOCASE"
    )
    assert [c.op for c in query.comparisons] == ["not in", "not like", "!=", "="]
    assert query.equalities() == [("w", "x")]  # COLLATE does not hide the value


def test_a_query_nested_too_deep_for_the_parser_compares_nothing():
    deep = "SELECT 1 FROM t WHERE " + "(" * 200 + "x = 1" + ")" * 200
    assert read(deep).comparisons == () and not read(deep).parsed
