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


def test_an_order_and_the_rows_it_skips_are_read_from_the_tree():
    second = read('SELECT name FROM t ORDER BY "hp" DESC LIMIT 1 OFFSET 1')
    assert (second.order, second.offsets) == ("DESC", (1,))
    assert read("SELECT name FROM t ORDER BY hp LIMIT 1, 1").offsets == (1,)  # LIMIT skip, n
    inner_first = read("SELECT a FROM (SELECT a, b FROM t ORDER BY a DESC) ORDER BY b")
    assert inner_first.order == "ASC"  # the last ORDER BY written decides
    below = read("SELECT name FROM t WHERE hp < (SELECT MAX(hp) FROM t) ORDER BY hp DESC")
    assert below.below_extreme and below.bounded and below.nested
    assert read("SELECT name FROM t ORDER BY hp / wt DESC").order_computed
    assert not read("SELECT name FROM t ORDER BY hp DESC").order_computed


def test_what_a_query_computes_is_read_from_the_tree_not_its_text():
    assert read('SELECT CAST("a" AS REAL) - CAST(a AS REAL) FROM t').self_subtracted
    assert not read("SELECT t1.a - t2.a FROM t t1, t t2").self_subtracted
    assert read('SELECT SUM("Total") - SUM(total) FROM invoices').self_subtracted
    same = "(SELECT SUM(total) FROM i WHERE y = 2010)"
    assert read(f"SELECT {same} - {same}").self_subtracted
    assert not read(f"SELECT {same} - {same.replace('2010', '2009')}").self_subtracted
    assert not read("SELECT SUM(a) - SUM(b), a - 1 FROM t").self_subtracted
    dated = read("SELECT x FROM t WHERE d = '2015-04-30' AND v = -3")
    assert not dated.subtracts and dated.texts == ("2015-04-30",) and 3.0 in dated.numbers
    assert read("SELECT pct * 100 FROM t WHERE x = 'a'").selects_computed
    assert read("SELECT TOTAL(x) FROM t").selects_computed
    assert not read("SELECT t.pct FROM t WHERE x = 'a' AND y = 2").selects_computed
    assert read('SELECT "pct", t.x FROM t').selected == ("pct", "x")
    limited = read("SELECT a * 1000 FROM t WHERE b > 7 LIMIT 5 OFFSET 2")
    assert limited.constants == (1000.0, 7.0) and set(limited.numbers) == {1000.0, 7.0, 5.0, 2.0}
    counted = read("SELECT COUNT(*) FROM t WHERE name = 'x'")
    assert counted.counts and not counted.nested and not counted.bounded


def test_the_table_checks_questions_are_answered_by_the_tree():
    """Tables, NULLs, scaling, averages and groups: read from the tree, quoted names too."""
    joined = read('SELECT "Mean Price" * 1000 FROM "cars" c JOIN makes m ON c.id = m.id')
    assert joined.tables == ("cars", "makes") and joined.scales == (1000.0,)
    assert joined.averages  # a column of means is an average already
    assert joined.reads("mean price") and not joined.reads("makes")  # a table is no column
    assert read("SELECT COUNT(*) FROM t WHERE x IS NOT NULL").nulls
    assert not read("SELECT COUNT(*) FROM t WHERE note = 'null'").nulls  # a text, not NULL
    grouped = read("SELECT s, SUM(x) / COUNT(x) AS avg_x FROM t GROUP BY s")
    assert grouped.grouped and grouped.averages  # named for an average
    gap = "SELECT SUM(CASE WHEN a = 'x' THEN d END) - SUM(CASE WHEN a = 'y' THEN d END) AS avg_gap"
    assert not read(gap + " FROM t").averages  # a difference of sums named for an average
    late = "SUM(CASE WHEN delay > 15 THEN 1 ELSE 0 END)"
    assert read(f"SELECT {late} * 100.0 / COUNT(*) FROM f").share_tested == ("delay",)
    assert read("SELECT AVG(CASE WHEN delay > 15 THEN 1.0 ELSE 0 END) FROM f").share_tested
    assert not read(f"SELECT {late} * 100.0 / COUNT(delay) FROM f").share_tested  # its rows
    assert not read("SELECT AVG(delay) FROM f").share_tested
    plain = read("SELECT SUM(x) FROM t WHERE label = 'x * 1000'")
    assert not (plain.averages or plain.grouped or plain.scales)  # a text holds no operator
