"""A table's answer checked like a text's: structural checks, rows named by any value, years,
false premises only where nothing holds the value, and a confidence by the answer's kind."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from crag.run import run_question
from crag_core.errors import TableQueryError
from crag_core.schema.context import Context
from crag_core.text.answer_type import alternatives
from crag_core.text.sql import (
    held_by,
    incidental,
    match_tables,
    missing_values,
    misspelled,
    named_values,
    names_column,
    result_answer,
    said_values,
    schema,
    table_plan,
    unasked_values,
)
from crag_core.text.sql_tree import conditions, contradictions
from crag_core.text.table_checks import (
    CHECKS,
    choice_hint,
    computed_query,
    findings,
    idiom,
    initialled,
    misread_years,
    problems,
    referred_tables,
    refused_for_good,
)
from crag_core.text.table_shapes import ColumnInfo, QueryResult, TableInfo, sql_name
from nodes.shared import confidence as confidence_module
from nodes.shared.confidence import table_kind
from nodes.tools.table_query import absent_numbers, checked, run_query, spans
from tests.fakes import make_llm, make_table_store
from tests.unit.test_table_questions import sql_responder

STATES = ["Alabama", "Alaska", "Arizona", "Ohio", "Oregon", "Texas", "Utah", "Vermont"]
CRIME: list[list[Any]] = [["State", "Year", "Murder rate", "Poverty"]] + [
    [s, 2009, 1.5 + i, 10 + i] for i, s in enumerate(STATES * 4)
][: len(STATES)]
DISTRICTS: list[list[Any]] = [
    ["district", "Coderre", "Joly", "winner"],
    ["101-Bois-de-Liesse", 2481, 3024, "Joly"],
    ["102-Cap-Saint-Jacques", 2525, 2675, "Joly"],
    ["111-Mile-End", 1300, 900, "Coderre"],
]
TIPS: list[list[Any]] = [
    ["total_bill", "tip", "day"],
    [16.99, 1.01, "Sun"],
    [10.34, 1.66, "Sat"],
    [21.0, 3.5, "Thur"],
]
WIDE: list[list[Any]] = [
    ["country", "1952", "1957", "1962"],
    ["Italy", 65.9, 67.8, 69.2],
    ["Spain", 64.9, 66.7, 69.7],
]
for extra in range(40):  # a many-valued key: more values than a schema lists
    CRIME.append([f"Territory {extra}", 2009, 2.0, 12])


@pytest.fixture
def store(tmp_path):
    return make_table_store(
        tmp_path / "tables.sqlite3",
        {
            "crime.csv": CRIME,
            "election.csv": DISTRICTS,
            "tips.xlsx": TIPS,
            "life.xlsx": WIDE,
        },
    )


def result(columns: tuple[str, ...], *rows: tuple[Any, ...]) -> QueryResult:
    return QueryResult(columns, tuple(rows), False, ())


def test_two_named_values_are_read_off_the_question():
    assert alternatives("Which had the higher GDP per capita in 2007: Italy or Spain?") == (
        "Italy",
        "Spain",
    )
    assert alternatives("Which species is larger: Adelie or Gentoo penguins?") == (
        "Adelie",
        "Gentoo penguins",
    )
    assert alternatives("How many votes did Joly get?") is None
    # the question's own first words are no alternative: the teams of either year
    assert alternatives("Which teams won their league's pennant in 2011 or 2012?") is None
    assert alternatives("Who hit more home runs, Alex Rodriguez or Evan Longoria?") == (
        "Alex Rodriguez",
        "Evan Longoria",
    )


def test_a_tables_name_in_the_question_does_not_ask_for_its_own_id_column(tmp_path):
    tracks: list[list[Any]] = [
        ["track_id", "name", "genre_id"],
        [1, "Aria", 7],
        [2, "Overture", 7],
        [3, "Riff", 1],
    ]
    store = make_table_store(tmp_path / "t.sqlite3", {"tracks.csv": tracks})
    tables = store.catalog()
    q = "How many Opera tracks does the store have?"
    counted = "SELECT COUNT(*) FROM tracks WHERE genre_id = 7"
    assert not [p for p in problems(q, counted, result(("n",), (2,)), tables) if "names" in p]
    # a column the question names that is not the table's own id still must be read
    q2 = "How many tracks have the name Aria and which genre_id do they have?"
    found = problems(
        q2, "SELECT COUNT(*) FROM tracks WHERE name = 'Aria'", result(("n",), (1,)), tables
    )
    assert "the question names the column genre_id but the query does not read it" in found


def test_a_key_is_no_answer_unless_the_question_asks_for_one(tmp_path):
    """ "Who made the album Pop?" answered by the album's artist_id (150) names no artist: the
    name is in artists, the table the key refers to. A key of no table held is left alone."""
    albums: list[list[Any]] = [["album_id", "title", "artist_id"], [1, "Pop", 150]]
    artists: list[list[Any]] = [["ArtistId", "Name"], [150, "U2"]]
    sales: list[list[Any]] = [["store_id", "total"], [4, 10.0]]
    store = make_table_store(
        tmp_path / "k.sqlite3",
        {"albums.csv": albums, "artists.csv": artists, "sales.csv": sales},
    )
    tables = store.catalog()
    q = "Who recorded the album Pop?"
    key = "SELECT artist_id FROM albums WHERE title = 'Pop'"
    asked = [t for t in tables if t.name == "albums"]  # the tables the question names
    found = findings(q, key, result(("artist_id",), (150,)), asked, catalog=tables)
    assert any(c == "key" and "a key of artists" in t for c, t in found)
    genres = make_table_store(
        tmp_path / "g.sqlite3",
        {
            "tracks.csv": [["track_id", "genre_id"], [1, 1]],
            "genres.csv": [["genre_id", "name"], [1, "Rock"]],
        },
    ).catalog()
    most = "SELECT genre_id FROM tracks GROUP BY genre_id ORDER BY COUNT(*) DESC LIMIT 1"
    found = findings("Which genre sells most?", most, result(("genre_id",), (1,)), genres)
    assert any(c == "key" and "a key of genres" in t for c, t in found)  # "genres": genr
    joined = (
        "SELECT a.name FROM albums b JOIN artists a ON a.artistid = b.artist_id "
        "WHERE b.title = 'Pop'"
    )
    assert not [c for c, _ in findings(q, joined, result(("name",), ("U2",)), tables) if c == "key"]
    said = "What is the artist id of the album Pop?"
    assert not [
        c for c, _ in findings(said, key, result(("artist_id",), (150,)), tables) if c == "key"
    ]
    no_table = "Which store sold most?"
    top = "SELECT store_id FROM sales ORDER BY total DESC LIMIT 1"
    assert not [
        c for c, _ in findings(no_table, top, result(("store_id",), (4,)), tables) if c == "key"
    ]


def test_a_code_of_the_rows_own_table_is_no_answer_for_which_of_them(tmp_path):
    """ "Which customer in Mexico placed the most orders?" answered by customer_code ("REGGC")
    names no customer: the table names its rows in company_name, and the feedback says so."""
    customers: list[list[Any]] = [
        ["customer_id", "customer_code", "company_name", "country"],
        [1, "REGGC", "Reggiani Caseifici", "Mexico"],
        [2, "TORTU", "Tortuga Restaurante", "Mexico"],
    ]
    tables = make_table_store(tmp_path / "c.sqlite3", {"customers.csv": customers}).catalog()
    q = "Which customer in Mexico has placed the most orders?"
    coded = "SELECT customer_code FROM customers WHERE country = 'Mexico' LIMIT 1"
    found = findings(q, coded, result(("customer_code",), ("REGGC",)), tables, catalog=tables)
    assert any(c == "key" and "company_name" in t for c, t in found)
    named = "SELECT company_name FROM customers WHERE country = 'Mexico' LIMIT 1"
    answer = result(("company_name",), ("Reggiani Caseifici",))
    assert not [c for c, _ in findings(q, named, answer, tables, catalog=tables) if c == "key"]
    asked = "What is the customer code of the first customer in Mexico?"
    answer = result(("customer_code",), ("REGGC",))
    assert not [c for c, _ in findings(asked, coded, answer, tables, catalog=tables) if c == "key"]


FLEET: dict[str, list[list[Any]]] = {
    "flights.csv": [
        ["flight", "carrier", "tailnum"],
        [1701, "UA", "N14923"],
        [4322, "EV", "N717EV"],
        [4368, "EV", "N717EV"],
    ],
    "airlines.csv": [["carrier", "name"], ["UA", "United Air Lines Inc."], ["EV", "ExpressJet"]],
    "planes.csv": [["tailnum", "manufacturer"], ["N14923", "BOEING"], ["N717EV", "EMBRAER"]],
}


def test_which_kind_is_answered_by_a_row_of_that_kinds_table(tmp_path):
    """ "Which airline flew the plane …?" answered with the plane's maker: 'EMBRAER' is no value
    of airlines, the one table "airline" names; its name or its code answers."""
    catalog = make_table_store(tmp_path / "f.sqlite3", FLEET).catalog()
    q = "Which airline flew the plane with tail number N717EV?"
    maker = "SELECT manufacturer FROM planes WHERE tailnum = 'N717EV'"
    found = findings(q, maker, result(("manufacturer",), ("EMBRAER",)), catalog, catalog=catalog)
    assert [c for c, _ in found] == ["kind"]
    assert "'EMBRAER' is no value of airlines" in found[0][1]
    joined = "FROM flights JOIN airlines USING (carrier) WHERE tailnum = 'N717EV'"
    named = f"SELECT DISTINCT name {joined}"
    said = findings(q, named, result(("name",), ("ExpressJet",)), catalog, catalog=catalog)
    assert "kind" not in [c for c, _ in said], said
    # its code is no name of an airline: the table names its rows in name
    coded = f"SELECT DISTINCT carrier {joined}"
    found = findings(q, coded, result(("carrier",), ("EV",)), catalog, catalog=catalog)
    assert "'EV' is no value of airlines (name)" in dict(found)["kind"]
    # a kind no table is named for, or a count, is not read
    maker_q = "Which maker built the plane with tail number N717EV?"
    assert not findings(maker_q, maker, result(("manufacturer",), ("EMBRAER",)), catalog)
    count = "SELECT COUNT(*) FROM flights WHERE tailnum = 'N717EV'"
    twice = findings("Which airline flew N717EV twice?", count, result(("n",), (2,)), catalog)
    assert "kind" not in [c for c, _ in twice]
    # refused for good: the loop reads those rows but cannot cite them
    assert refused_for_good(q, coded, result(("carrier",), ("EV",)), catalog)
    assert not refused_for_good(q, named, result(("name",), ("ExpressJet",)), catalog)
    # the same reading routes it: a row named, and a kind a table holds, is a table question
    assert table_plan(q, catalog)[0] is True
    assert table_plan("In which city was the plane N717EV built?", catalog)[0] is False


def test_the_rows_counted_are_the_tables_read(tmp_path):
    """ "How many flights did ExpressJet fly?" counts flights WHERE carrier = 'EV': airlines' one
    row per carrier is not what was counted; "flights" names the rows, not the column flight."""
    catalog = make_table_store(tmp_path / "f.sqlite3", FLEET).catalog()
    q = "How many flights did ExpressJet fly?"
    counted = "SELECT COUNT(*) FROM flights WHERE carrier = 'EV'"
    assert (
        findings(
            q, counted, result(("n",), (2,)), catalog, catalog=catalog, codes={"EV": "ExpressJet"}
        )
        == []
    )
    one = "SELECT COUNT(*) FROM airlines WHERE carrier = 'EV'"
    assert "one row counted" in [c for c, _ in findings(q, one, result(("n",), (1,)), catalog)]


def test_a_choice_between_two_must_name_one_of_them(store):
    q = "Who got more votes in Mile-End: Coderre or Joly?"
    tables = store.catalog()
    sql = "SELECT district FROM election WHERE district = '111-Mile-End'"
    both = result(("winner", "votes"), ("Coderre", 1300), ("Joly", 900))
    assert any("which of 'Coderre' or 'Joly'" in p for p in problems(q, sql, both, tables))
    third = result(("district",), ("111-Mile-End",))
    assert problems(q, sql, third, tables)  # names neither
    one = result(("name",), ("Coderre",))
    chosen = "SELECT CASE WHEN coderre > joly THEN 'Coderre' ELSE 'Joly' END FROM election"
    assert problems(q, chosen + " WHERE district = '111-Mile-End'", one, tables) == []
    assert problems(q, sql, one, tables) == [  # it read neither count
        "the question names the column coderre but the query does not read it",
        "the question names the column joly but the query does not read it",
    ]
    q2 = "Which species is larger: Adelie or Gentoo penguins?"
    assert problems(q2, "SELECT 1", result(("species",), ("Gentoo",)), []) == []


def test_a_choice_between_two_teams_said_with_the_is_shown_the_query_of_those_rows(tmp_path):
    teams: list[list[Any]] = [
        ["name", "year", "w"],
        ["Atlanta Braves", 2014, 79],
        ["Washington Nationals", 2014, 96],
        ["Los Angeles Angels", 2014, 98],
    ]
    catalog = make_table_store(tmp_path / "t.sqlite3", {"teams.csv": teams}).catalog()
    q = "Who won more games in 2014, the Atlanta Braves or the Washington Nationals?"
    # no column named ("w"), no computation asked: a choice between two of its rows
    assert table_plan(q, catalog) == (
        True,
        "it asks which of two rows of teams.csv: 'the Atlanta Braves' or 'the Washington "
        "Nationals'",
    )
    city = "Who won more games in 2014, the Atlanta Bees or the Washington Nationals?"
    assert table_plan(city, catalog)[0] is False  # one alternative is no row
    sql = "SELECT name FROM teams WHERE year = 2014 ORDER BY w DESC LIMIT 1"
    found = problems(q, sql, result(("name",), ("Los Angeles Angels",)), catalog)
    assert any(
        "WHERE name IN ('Atlanta Braves', 'Washington Nationals') AND <the condition on 2014> "
        "ORDER BY" in p
        for p in found
    )


def test_a_superlative_is_one_row_and_a_count_one_number(store):
    tables = store.catalog()
    many = result(("state", "murder_rate"), ("Ohio", 4.5), ("Utah", 7.5))
    q = "Which state had the highest murder rate in 2009?"
    sql = "SELECT state, murder_rate FROM crime WHERE year = 2009 ORDER BY murder_rate DESC"
    assert any("asks for one" in p for p in problems(q, sql, many, tables))
    assert problems(q, sql + " LIMIT 1", result(("state",), ("Utah",)), tables) == []
    count = "How many states had a poverty rate above 12 in 2009?"
    sql = "SELECT state FROM crime WHERE poverty > 12 AND year = 2009"
    assert any("one number" in p for p in problems(count, sql, many, tables))
    per = "How many states had a poverty rate above 12 in each year?"
    assert not any("one number" in p for p in problems(per, sql, many, tables))
    # each finding is named by its check (what the refusals benchmark counts)
    assert [name for name, _ in findings(count, sql, many, tables)] == ["one number"]
    assert set(CHECKS) >= {"one answer", "named", "numbers", "average"}


def test_what_was_the_value_of_one_thing_is_one_row(store):
    tables = store.catalog()
    many = result(("murder_rate",), (4.5,), (7.5,))
    q = "What was the murder rate of the state whose capital is Salt Lake City in 2009?"
    sql = "SELECT murder_rate FROM crime WHERE year = 2009"
    assert "one value" in dict(findings(q, sql, many, tables))
    one = result(("murder_rate",), (7.5,))
    assert "one value" not in dict(findings(q, sql + " AND state = 'Utah'", one, tables))
    each = "What was the murder rate of each state in 2009?"
    assert "one value" not in dict(findings(each, sql, many, tables))
    plural = "What were the murder rates of the states in 2009?"
    assert "one value" not in dict(findings(plural, sql, many, tables))


def test_a_place_past_the_first_skips_the_rows_before_it(store):
    tables = store.catalog()
    one = result(("state",), ("Utah",))
    q = "Which state had the second highest murder rate in 2009?"
    top = "SELECT state FROM crime WHERE year = 2009 ORDER BY murder_rate DESC LIMIT 1"
    assert any("second highest: one row" in p for p in problems(q, top, one, tables))
    assert problems(q, top + " OFFSET 1", one, tables) == []
    below_max = (
        "SELECT state FROM crime WHERE year = 2009 AND murder_rate < (SELECT MAX(murder_rate) "
        "FROM crime WHERE year = 2009) ORDER BY murder_rate DESC LIMIT 1"
    )
    assert problems(q, below_max, one, tables) == []
    third = "Which state had the third-lowest murder rate in 2009?"
    assert any("OFFSET 2" in p for p in problems(third, top + " OFFSET 1", one, tables))
    low = "SELECT state FROM crime WHERE year = 2009 ORDER BY murder_rate"
    assert problems(third, low + " LIMIT 2, 1", one, tables) == []
    assert problems(third, low + " ASC LIMIT 1 OFFSET 2", one, tables) == []
    assert any("ASC LIMIT 1 OFFSET 2" in p for p in problems(third, top + " OFFSET 2", one, tables))
    assert "ORDER BY <column> ASC LIMIT 1 OFFSET 2" in idiom(third, tables)


def test_a_name_no_column_holds_is_not_answered_from_another_column(store):
    tables = store.catalog()
    votes = result(("coderre",), (1300,))
    read = "SELECT coderre FROM election WHERE district = '111-Mile-End'"
    q = "How many votes did Trudeau get in Mile-End?"
    assert problems(q, read, votes, tables) == [
        "the question asks about 'Trudeau', which no column or value of election holds, and "
        "the query answers with coderre instead: if the table does not hold it, it cannot answer"
    ]
    assert problems("How many votes did Coderre get in Mile-End?", read, votes, tables) == []
    # a measure said in plain words is not flagged (column names are often abbreviations)
    tip = "What was the gratuity on Sunday?"
    assert problems(tip, "SELECT tip FROM tips WHERE day = 'Sun'", votes, tables) == []
    # nor a name its column abbreviates (a column per company, named by its ticker)
    stocks = TableInfo(
        "stocks",
        "d",
        "stocks.csv",
        "",
        3,
        tuple(ColumnInfo(n, n, t, 3, ()) for n, t in (("date", "DATE"), ("AAPL", "REAL"))),
    )
    price = "What was Apple's price in the first week?"
    assert problems(price, "SELECT AAPL FROM stocks LIMIT 1", votes, [stocks]) == []
    antarctica = "What was the price in Antarctica in the first week?"
    assert problems(antarctica, "SELECT AAPL FROM stocks LIMIT 1", votes, [stocks])
    # nor a name the query compares with (a value's premise: said by the premise rule)
    absent = "What was the murder rate in Puerto Rico?"
    sql = "SELECT murder_rate FROM crime WHERE state = 'Puerto Rico'"
    assert not any("no column or value" in p for p in problems(absent, sql, votes, tables))


def test_a_count_of_one_named_row_and_an_unsaid_constant_are_not_answers(store):
    tables = store.catalog()
    one = result(("n",), (1,))
    q = "What is the number of voters of 111-Mile-End?"
    counted = "SELECT COUNT(*) FROM election WHERE district = '111-Mile-End'"
    assert any("one row per district" in p for p in problems(q, counted, one, tables))
    rank = "Where does 111-Mile-End rank by votes for Joly, counting from the highest?"
    above = (
        "SELECT COUNT(*) + 1 FROM election WHERE joly > (SELECT joly FROM election WHERE "
        "district = '111-Mile-End')"
    )
    assert not any("one row per" in p for p in problems(rank, above, one, tables))
    made_up = "SELECT AVG(1000 * (1 - murder_rate)) FROM crime WHERE state = 'Ohio'"
    altitude = "What is the average altitude of Ohio?"
    assert any("computes with 1000" in p for p in problems(altitude, made_up, one, tables))
    scaled = "How many thousand votes did Joly get in 111-Mile-End?"
    thousands = "SELECT joly / 1000.0 FROM election WHERE district = '111-Mile-End'"
    assert not any("computes with" in p for p in problems(scaled, thousands, one, tables))
    month = "What was the murder rate in Ohio in May?"  # May is month 5
    by_month = "SELECT murder_rate FROM crime WHERE state = 'Ohio' AND year = 5"
    assert not any("computes with" in p for p in problems(month, by_month, one, tables))


def test_every_value_and_number_the_question_names_is_in_the_query(store):
    tables = store.catalog()
    q = "What was the murder rate in Ohio in 2009?"
    one = result(("murder_rate",), (4.5,))
    assert problems(q, "SELECT murder_rate FROM crime WHERE year = 2009", one, tables) == [
        "the question names 'Ohio' (a value of state) but the query does not use it"
    ]
    ok = "SELECT murder_rate FROM crime WHERE state = 'Ohio' AND year = 2009"
    assert problems(q, ok, one, tables) == []
    percent = "How many states had a poverty rate of more than 80 percent?"
    wrong = "SELECT COUNT(*) FROM crime WHERE poverty > 0.80"
    assert problems(percent, wrong, result(("n",), (51,)), tables) == [
        "the question says 80 but the query does not"
    ]
    assert problems(percent, "SELECT COUNT(*) FROM crime WHERE poverty > 80.0", one, tables) == []
    dated = "What was the tip on January 8, 2018?"  # a date's day and year are not constants
    assert not any("says 8" in p for p in problems(dated, "SELECT tip FROM tips", one, tables))


def test_a_name_used_as_a_value_or_inside_a_column_name_is_used(store):
    """A column the question names is read, or its name is a value the query compares with."""
    tables = store.catalog()
    two = result(("n",), (2,))
    wins = "How many districts did Coderre win?"  # a column of his votes is there too
    assert (
        problems(wins, "SELECT COUNT(*) FROM election WHERE winner = 'Coderre'", two, tables) == []
    )
    joly = problems(wins, "SELECT COUNT(*) FROM election WHERE winner = 'Joly'", two, tables)
    assert "the question names the column coderre but the query does not read it" in joly


def test_a_row_is_named_by_any_value_of_a_many_valued_column(store):
    catalog = store.catalog()
    crime = next(t for t in catalog if t.name == "crime")
    state = next(c for c in crime.columns if c.name == "state")
    assert state.distinct == len(STATES) + 40 == len(state.values)  # all listed, not 25
    use, reason = table_plan("What was the poverty in Ohio?", catalog)
    assert use, reason
    assert named_values("what was the poverty in territory 7", crime) == {"state": ("Territory 7",)}


def test_a_value_is_named_without_its_number_or_by_its_full_day(store):
    catalog = store.catalog()
    election = next(t for t in catalog if t.name == "election")
    tips = next(t for t in catalog if t.name == "tips")
    assert named_values("how many votes did joly get in bois de liesse", election) == {
        "district": ("101-Bois-de-Liesse",),
        "winner": ("Joly",),
    }
    assert named_values("what was the average tip on sunday", tips) == {"day": ("Sun",)}
    assert match_tables("What was the average tip on Thursday?", catalog)[0].table.name == "tips"
    assert misspelled("SELECT AVG(tip) FROM tips WHERE day = 'Sunday'", catalog) == [
        "day holds 'Sun', not 'Sunday'"
    ]
    sql = "SELECT joly FROM election WHERE district = 'Bois-de-Liesse'"
    assert missing_values(sql, catalog, catalog) == []  # a part of a value: not a premise
    assert misspelled(sql, catalog) == ["district holds '101-Bois-de-Liesse', not 'Bois-de-Liesse'"]


def test_the_schema_shows_ranges_named_values_and_a_wide_sheet(store):
    catalog = store.catalog()
    crime = next(t for t in catalog if t.name == "crime")
    life = next(t for t in catalog if t.name == "life")
    sample = store.sample("crime")
    text = schema(
        [crime], [sample], "What was the poverty in Ohio?", {"crime": {"poverty": (10, 17)}}
    )
    assert "48 values, such as 'Ohio'" in text
    assert "poverty INTEGER -- Poverty — from 10 to 17" in text
    wide = schema([life], [store.sample("life")])
    assert "a wide sheet: one column per year (1952 to 1962)" in wide


def test_a_name_held_in_parts_is_said_whole():
    """ "Who reports to Andrew Adams?" read from first_name and last_name is "Nancy Edwards",
    not "first_name: Nancy, last_name: Edwards"; other columns keep their names."""
    both = result(("first_name", "last_name"), ("Nancy", "Edwards"), ("Michael", "Mitchell"))
    assert result_answer(both) == "Nancy Edwards; Michael Mitchell"
    assert result_answer(result(("FirstName", "LastName", "n"), ("Jane", "Peacock", 3))) == (
        "Jane Peacock, n: 3"
    )
    assert result_answer(result(("last_name", "n"), ("Park", 2))) == "last_name: Park, n: 2"
    assert result_answer(result(("city", "country"), ("Boston", "USA"))) == (
        "city: Boston, country: USA"
    )
    # a name's parts under a prefix say whose: each person's parts are said as one name
    contact = result(("contact_first_name", "contact_last_name"), ("Charlotte", "Cooper"))
    assert result_answer(contact) == "Charlotte Cooper"
    two = result(
        ("rep_first_name", "rep_last_name", "boss_first_name", "boss_last_name"),
        ("Jane", "Peacock", "Nancy", "Edwards"),
    )
    assert result_answer(two) == "Jane Peacock, Nancy Edwards"
    lone = result(("rep_last_name", "boss_last_name"), ("Peacock", "Edwards"))
    assert result_answer(lone) == "rep_last_name: Peacock, boss_last_name: Edwards"


def test_years_and_codes_are_never_grouped():
    assert result_answer(result(("year",), (1913,))) == "1913"
    asked = "In which year was the flow highest?"
    assert result_answer(result(("max_flow_year",), (1913,)), asked) == "1913"
    assert result_answer(result(("flow",), (1913,)), asked) == "1913"
    assert result_answer(result(("flow",), (1913,))) == "1,913"
    assert result_answer(result(("country", "pop"), ("Italy", 58147733)), asked) == (
        "country: Italy, pop: 58,147,733"
    )


def test_tables_inside_pages_are_incidental(store):
    (table,) = [t for t in store.catalog() if t.name == "tips"]
    assert not incidental(table)
    assert incidental(type(table)(*[table.name, "d", "guide.html", "", 3, table.columns]))


def test_an_answer_that_fails_its_checks_is_written_again_then_not_given(fake_services, store):
    q = "Who got more votes in Mile-End: Coderre or Joly?"
    both = "SELECT coderre, joly FROM election WHERE district = '111-Mile-End'"
    llm = make_llm(sql_responder(both, both))
    fake_services(llm=llm, tables=store)
    out = run_question(q, Context(min_confidence=0.0))
    retry = [c["text"] for c in llm.calls if c["prompt"] == "write_sql"][1]
    assert "which of 'Coderre' or 'Joly'" in retry  # the check's finding, told to the model
    assert "CASE WHEN" in retry
    assert out.path[3:6] == ["choose_tool", "query_table", "finalize"]  # one of two: computed
    assert out.state["answer"] == "I don't know."
    (warning,) = [w for w in out.state["warnings"] if "No table answered" in w]
    assert "coderre: 1,300, joly: 900" in warning and "did not pass its checks" in warning


def test_a_look_up_whose_answer_fails_its_checks_is_not_given(fake_services, store):
    q = "What was the murder rate in Ohio in 2009?"
    wrong = "SELECT murder_rate FROM crime WHERE year = 2009 LIMIT 1"  # Ohio left out
    fake_services(llm=make_llm(sql_responder(wrong, wrong)), tables=store)
    out = run_question(q, Context(min_confidence=0.0))
    assert out.path[3:6] == ["choose_tool", "query_table", "finalize"]  # a spreadsheet's rows
    assert out.state["answer"] == "I don't know."
    (warning,) = [w for w in out.state["warnings"] if "No table answered" in w]
    assert "names 'Ohio'" in warning and "the text was not searched" in warning


def test_a_year_no_row_holds_is_a_false_premise_named_by_its_table(fake_services, store):
    sql = "SELECT murder_rate FROM crime WHERE state = 'Ohio' AND year = 1960"
    fake_services(llm=make_llm(sql_responder(sql)), tables=store)
    out = run_question("What was the murder rate in Ohio in 1960?", Context())
    assert out.state["answer"] == "crime.csv has no Year 1960 (it has 2009 to 2009)."
    assert out.state["answer_kind"] == "table:premise:1"


def test_a_value_another_table_holds_is_no_false_premise(store):
    catalog = store.catalog()
    crime = [t for t in catalog if t.name == "crime"]
    sql = "SELECT murder_rate FROM crime WHERE state = 'Italy'"
    assert missing_values(sql, crime) != []  # the crime table alone has no Italy
    assert missing_values(sql, crime, [*catalog, *_country_table(store)]) == []


def _country_table(store):
    return [t for t in store.catalog() if t.name == "life"]


def test_a_table_answers_confidence_is_fitted_by_its_kind(tmp_path):
    one = result(("n",), (3,))
    many = result(("name",), ("a",), ("b",))
    row = result(("name", "n"), ("a", 3))
    assert table_kind(one, False, 1) == "table:value:1"
    assert table_kind(many, False, 2) == "table:list:2"
    assert table_kind(row, False, 1) == "table:row:1"
    assert table_kind(one, True, 1) == "table:premise:1"
    fit = tmp_path / "fit.json"
    fit.write_text(
        json.dumps(
            {
                "kinds": {
                    "table": {"answers": 18, "right": 14},
                    "table:value:1": {"answers": 12, "right": 12},
                    "table:list:2": {"answers": 6, "right": 2},
                }
            }
        )
    )
    confidence_module._fit.cache_clear()
    share = 15 / 20
    assert confidence_module.tool_confidence("table", path=fit) == round(share, 3)
    assert confidence_module.tool_confidence("table:value:1", path=fit) == round(
        (12 + 4 * share) / 16, 3
    )
    assert confidence_module.tool_confidence("table:list:2", path=fit) == round(
        (2 + 4 * share) / 10, 3
    )
    assert confidence_module.tool_confidence("table:row:1", path=fit) == round(
        share, 3
    )  # unseen kind


def test_a_table_answer_under_min_confidence_is_not_given(fake_services, store, monkeypatch):
    sql = "SELECT murder_rate FROM crime WHERE state = 'Ohio' AND year = 2009"
    fake_services(llm=make_llm(sql_responder(sql)), tables=store)
    module = importlib.import_module("nodes.tools.query_table")  # the module, not the node
    monkeypatch.setattr(module, "tool_confidence", lambda kind, signals=None: 0.2)
    out = run_question("What was the murder rate in Ohio in 2009?", Context(min_confidence=0.4))
    assert out.path[3:6] == ["choose_tool", "query_table", "finalize"]  # a spreadsheet's rows
    assert out.state["answer"] == "I don't know."
    said = "The answer '4.5' is not given: its confidence 0.20 is under min_confidence 0.40."
    assert said in out.state["warnings"]  # the one gate's warning, as for every answer kind
    assert out.pass_state["withheld"]["confidence"] == 0.2


def test_a_sheet_of_200_long_column_names_is_read_and_measured(tmp_path):
    header = ["name"] + [f"a rather long column name number {i}" for i in range(199)]
    rows: list[list[Any]] = [header] + [["x", *range(199)] for _ in range(3)]
    store = make_table_store(tmp_path / "t.sqlite3", {"wide.csv": rows})
    (table,) = store.catalog()  # its CREATE TABLE is longer than a query may be
    assert len(table.columns) == 200
    assert len(spans(store, table)) == 199
    with pytest.raises(TableQueryError, match="longer than 4000"):
        store.query("SELECT 1 " + " " * 4000)


def test_every_column_the_question_names_is_read(store):
    tables = store.catalog()
    q = "What was the average poverty in 2009?"
    one = result(("avg",), (12.0,))
    assert problems(q, "SELECT AVG(murder_rate) FROM crime WHERE year = 2009", one, tables) == [
        "the question names the column poverty but the query does not read it"
    ]
    assert problems(q, "SELECT AVG(poverty) FROM crime WHERE year = 2009", one, tables) == []


def test_an_average_asked_for_is_taken(store, tmp_path):
    years = [["State", "Year", "Murder rate"]] + [
        [s, y, 2.0 + i] for i, (s, y) in enumerate((s, y) for s in STATES for y in (2008, 2009))
    ]
    tables = make_table_store(tmp_path / "long.sqlite3", {"crime.csv": years}).catalog()
    q = "By how much did the average murder rate of Ohio exceed that of Utah?"
    one = result(("d",), (3.0,))
    sums = (
        "SELECT SUM(CASE WHEN state = 'Ohio' THEN murder_rate ELSE 0 END) - "
        "SUM(CASE WHEN state = 'Utah' THEN murder_rate ELSE 0 END) FROM crime"
    )
    assert problems(q, sums, one, tables) == [  # two years a state: a sum is no average
        "the question asks for an average but the query takes none (use AVG)"
    ]
    avgs = sums.replace("SUM(", "AVG(")
    assert problems(q, avgs, one, tables) == []
    assert problems("What is the mean tip?", "SELECT mean FROM tips", one, []) == []
    # one row a state: the row's value is its average, and the query needs no AVG
    assert problems(q, sums, one, store.catalog()) == []
    per_row = (
        "SELECT (SELECT murder_rate FROM crime WHERE state = 'Ohio') - "
        "(SELECT murder_rate FROM crime WHERE state = 'Utah')"
    )
    assert problems(q, per_row, one, store.catalog()) == []
    grouped = "SELECT state, SUM(murder_rate) FROM crime WHERE state = 'Ohio' GROUP BY state"
    assert "use AVG" in " ".join(problems(q, grouped, one, store.catalog()))
    # a choice between two such rows: the query of its shape reads each row's value
    pair = "Which had the higher average murder rate: Ohio or Utah?"
    chosen = (
        "SELECT state FROM crime WHERE state IN ('Ohio', 'Utah') ORDER BY murder_rate DESC LIMIT 1"
    )
    assert problems(pair, chosen, result(("state",), ("Utah",)), store.catalog()) == []
    assert "ORDER BY <the column compared>" in choice_hint(pair, store.catalog())
    # two years a state: the rows of a state are averaged, and the shape says so
    assert "use AVG" in " ".join(problems(pair, chosen, result(("state",), ("Utah",)), tables))
    assert "GROUP BY state ORDER BY AVG(<the column compared>)" in choice_hint(pair, tables)
    # one row a state, but joined to many rows of another table: the sum is over those
    catalog = make_table_store(
        tmp_path / "joined.sqlite3",
        {"crime.csv": CRIME, "reports.csv": [["state", "murders"], *years[1:]]},
    ).catalog()
    joined = (
        "SELECT SUM(CASE WHEN T1.state = 'Ohio' THEN T2.murders ELSE 0 END) - SUM(CASE WHEN "
        "T1.state = 'Utah' THEN T2.murders ELSE 0 END) FROM crime AS T1 JOIN reports AS T2 "
        "ON T1.state = T2.state"
    )
    q2 = "By how much did the average murders of Ohio exceed that of Utah?"
    assert "use AVG" in " ".join(problems(q2, joined, one, catalog))


def test_a_table_answers_signals_say_what_the_question_named_and_the_query_did(store):
    crime = next(t for t in store.catalog() if t.name == "crime")
    sql = 'SELECT "murder_rate" FROM "crime" WHERE "state" = \'Ohio\''
    answer = result(("murder_rate",), (4.5,))
    answer = QueryResult(answer.columns, answer.rows, False, ("crime",))
    catalog = store.catalog()
    q = "What was the murder rate in Ohio?"
    named = confidence_module.table_signals(
        q, sql, answer, [crime], "4.5", "table:value:1", catalog=catalog
    )
    assert named["columns_named"] == 1 and named["values_named"] == 1
    assert named["guessed"] == 0 and named["where"] == 1 and named["number"] == 1
    assert named["retry"] == 0 and named["computes"] == 0
    q = "What was the figure for Ohio?"
    guessed = confidence_module.table_signals(
        q, sql, answer, [crime], "4.5", "table:value:2", catalog=catalog
    )
    assert guessed["guessed"] == 1 and guessed["columns_named"] == 0 and guessed["retry"] == 1


def test_a_table_answers_signals_count_the_values_it_left_out_and_an_answer_of_zero(store):
    crime = next(t for t in store.catalog() if t.name == "crime")
    answer = QueryResult(("n",), ((0,),), False, ("crime",))
    q = "How many murders were there in Ohio?"

    def signals(sql: str, said: str) -> dict[str, float | None]:
        return confidence_module.table_signals(
            q, sql, answer, [crime], said, "table:value:1", catalog=store.catalog()
        )

    left_out = signals('SELECT COUNT(*) FROM "crime"', "0")
    assert left_out["values_left"] == 1 and left_out["zero"] == 1
    written = signals("SELECT COUNT(*) FROM crime WHERE state LIKE '%ohio%'", "0.0")
    assert written["values_left"] == 0 and written["zero"] == 1
    assert signals("SELECT COUNT(*) FROM crime WHERE state = 'Ohio'", "12")["zero"] == 0


def test_a_fitted_model_of_the_signals_gives_a_table_answers_confidence(tmp_path):
    fit = tmp_path / "fit.json"
    model = {"features": ["guessed", "retry"], "weights": [-2.0, -1.0], "intercept": 2.0}
    fit.write_text(
        json.dumps({"kinds": {"table": {"answers": 9, "right": 9}}, "table_model": model})
    )
    confidence_module._fit.cache_clear()
    sure = confidence_module.tool_confidence("table:value:1", {"guessed": 0, "retry": 0}, fit)
    unsure = confidence_module.tool_confidence("table:value:2", {"guessed": 1, "retry": 1}, fit)
    assert sure == round(1 / (1 + 2.718281828459045**-2), 3)
    assert unsure is not None and sure is not None and unsure < 0.5 < sure
    assert confidence_module.tool_confidence("table:value:1", path=fit) == round(10 / 11, 3)


def test_a_unit_and_a_whole_population_are_not_conditions_the_query_must_use(store):
    crime = [t for t in store.catalog() if t.name == "crime"]
    per = "How many states have a murder rate per 100,000 residents above 3?"
    sql = "SELECT COUNT(*) FROM crime WHERE murder_rate > 3"
    assert problems(per, sql, result(("n",), (5,)), crime) == []
    thousands = "How many states have a poverty above 1,500?"
    assert (
        problems(
            thousands, sql.replace("murder_rate > 3", "poverty > 1500"), result(("n",), (0,)), crime
        )
        == []
    )
    everyone = "What is the average murder rate across all states?"
    assert (
        problems(everyone, "SELECT AVG(murder_rate) FROM crime", result(("a",), (5.0,)), crime)
        == []
    )


def test_a_choice_between_two_rows_is_told_the_query_that_picks_one(store):
    crime = [t for t in store.catalog() if t.name == "crime"]
    q = "Which has the higher murder rate: Ohio or Utah?"
    both = result(("state",), ("Ohio",), ("Utah",))
    found = problems(q, "SELECT state FROM crime WHERE state IN ('Ohio', 'Utah')", both, crime)
    assert "WHERE state IN ('Ohio', 'Utah') ORDER BY" in found[0] and "LIMIT 1" in found[0]


def test_a_rank_is_one_number_and_a_number_in_a_column_name_is_no_condition(store):
    crime = [t for t in store.catalog() if t.name == "crime"]
    q = "Where does Ohio rank by murder rate, counting from the highest?"
    named = problems(
        q, "SELECT state FROM crime ORDER BY murder_rate DESC", result(("state",), ("Ohio",)), crime
    )
    assert any("asks for a rank" in p for p in named)
    counted = (
        "SELECT COUNT(*) + 1 FROM crime WHERE murder_rate > "
        "(SELECT murder_rate FROM crime WHERE state = 'Ohio')"
    )
    assert problems(q, counted, result(("n",), (4,)), crime) == []
    assert names_column(["population", "under", "15"], "pop15")
    assert not names_column(["population", "under", "15"], "pop75")


def test_a_value_the_question_does_not_say_is_no_false_premise(store):
    crime = [t for t in store.catalog() if t.name == "crime"]
    everyone = "What is the average murder rate across all states?"
    invented = "SELECT AVG(murder_rate) FROM crime WHERE state = 'all'"
    (told,) = unasked_values(invented, crime, everyone)
    assert "compares state with 'all'" in told and "'Alabama'" in told
    named = "What was the murder rate in Puerto Rico?"
    assert (
        unasked_values("SELECT murder_rate FROM crime WHERE state = 'Puerto Rico'", crime, named)
        == []
    )


def test_a_query_that_finds_nothing_is_told_what_its_columns_hold(store):
    crime = [t for t in store.catalog() if t.name == "crime"]
    ranges = {"crime": spans(store, crime[0])}
    held = held_by("SELECT poverty FROM crime WHERE year = 1999 AND state = 'Ohio'", crime, ranges)
    assert "year holds 2009 to 2009" in held and "state holds 'Alabama'" in held


def test_missing_values_are_asked_of_null_and_sql_words_are_quoted(store):
    crime = [t for t in store.catalog() if t.name == "crime"]
    q = "How many states have a missing poverty rate?"
    empty = problems(
        q, "SELECT COUNT(*) FROM crime WHERE poverty = ''", result(("n",), (0,)), crime
    )
    assert any("IS NULL" in p for p in empty)
    assert (
        problems(q, "SELECT COUNT(*) FROM crime WHERE poverty IS NULL", result(("n",), (0,)), crime)
        == []
    )
    assert sql_name("order") == '"order"' and sql_name("species") == "species"


def test_a_column_named_by_an_sql_word_is_written_quoted_under_the_grammar():
    from crag_core.text.sql_grammar import _names

    assert _names(["order"]) == '"\\"order\\"" | "`order`"'
    assert _names(["genus"]).startswith('"genus" | ')


def test_a_malformed_query_is_written_again_with_the_shape_its_kind_needs(
    fake_services, store, monkeypatch
):
    module = importlib.import_module("nodes.tools.table_graph")  # the module, not the node
    monkeypatch.setattr(module, "computed_query", lambda question, tables: "")
    q = "How much higher is the murder rate of Ohio than that of Utah?"  # the model writes it
    broken = "SELECT murder_rate - murder_rate FROM crime WHERE state = 'Ohio' - murder_rate FROM"
    right = (
        "SELECT (SELECT murder_rate FROM crime WHERE state = 'Ohio') - "
        "(SELECT murder_rate FROM crime WHERE state = 'Utah')"
    )
    llm = make_llm(sql_responder(broken, right))
    fake_services(llm=llm, tables=store)
    out = run_question(q, Context(min_confidence=0.0))
    retry = [c["text"] for c in llm.calls if c["prompt"] == "write_sql"][1]
    assert "syntax error" in retry
    assert (
        "A query of this kind: SELECT (SELECT <column> FROM crime WHERE state = 'Ohio') - " in retry
    )
    assert out.state["answer"] == "-3"  # Ohio 4.5, Utah 7.5 in CRIME


def test_a_unit_the_question_states_is_not_scaled_by(store):
    crime = [t for t in store.catalog() if t.name == "crime"]
    q = "What is the murder rate per 100,000 residents of Ohio?"
    scaled = "SELECT murder_rate * 100000 FROM crime WHERE state = 'Ohio'"
    found = problems(q, scaled, result(("m",), (450000.0,)), crime)
    assert any("'per 100,000' is the unit" in p for p in found)
    plain = "SELECT murder_rate FROM crime WHERE state = 'Ohio'"
    assert problems(q, plain, result(("m",), (4.5,)), crime) == []


def test_a_rank_compares_a_difference_subtracts_and_a_look_up_is_read_as_held(store):
    """Three shapes the R tables' wrong answers had, each a query to write again.

    A date's dashes are no subtraction.
    """
    crime = [t for t in store.catalog() if t.name == "crime"]
    rank = "Where does Ohio rank by murder rate, counting from the highest?"
    equal = (
        "SELECT COUNT(*) + 1 FROM crime WHERE murder_rate = "
        "(SELECT MAX(murder_rate) FROM crime WHERE state = 'Ohio')"
    )
    assert any("rows above" in p for p in problems(rank, equal, result(("n",), (2,)), crime))
    more = "How much higher is the poverty of Utah than of Ohio?"
    ratio = (
        "SELECT (SELECT poverty FROM crime WHERE state = 'Utah') * 100 / "
        "(SELECT poverty FROM crime WHERE state = 'Ohio')"
    )
    assert any("subtract" in p for p in problems(more, ratio, result(("r",), (130.0,)), crime))
    minus = ratio.replace("* 100 /", "-")
    assert problems(more, minus, result(("d",), (3.0,)), crime) == []
    dated = "SELECT poverty FROM crime WHERE state = 'Utah' AND year = '2009-01-01'"
    assert any("subtract" in p for p in problems(more, dated, result(("p",), (16,)), crime))
    look = "What is the poverty percentage of Utah?"
    share = "SELECT poverty * 100 / SUM(poverty) FROM crime WHERE state = 'Utah'"
    assert any("no arithmetic" in p for p in problems(look, share, result(("p",), (100,)), crime))
    held = "SELECT poverty FROM crime WHERE state = 'Utah'"
    assert problems(look, held, result(("poverty",), (16,)), crime) == []
    star = "SELECT * FROM crime WHERE state = 'Utah'"
    assert not any("no arithmetic" in p for p in problems(look, star, result(("p",), (16,)), crime))
    average = "What is the average poverty of Utah and Ohio?"  # a computation, asked
    mean = "SELECT AVG(poverty) FROM crime WHERE state IN ('Utah', 'Ohio')"
    assert problems(average, mean, result(("a",), (14.5,)), crime) == []


def test_an_unsaid_filter_a_number_read_as_text_a_self_difference_a_computed_order(store):
    """Four shapes of the R tables' wrong answers that passed every other check, each a query
    to write again: a count over rows the question did not name (``type = 'bc'``), a number
    column compared with a date, a column minus itself, a superlative ordered by a quotient."""
    tables = store.catalog()
    tips = [t for t in tables if t.name == "tips"]
    crime = [t for t in tables if t.name == "crime"]
    above = "How many bills had a tip above 2?"
    unsaid = "SELECT COUNT(*) FROM tips WHERE tip > 2 AND day = 'Sun'"
    assert any("does not say" in p for p in problems(above, unsaid, result(("n",), (1,)), tips))
    said = "How many bills on Sunday had a tip above 2?"  # "Sun" is how the table holds it
    assert problems(said, unsaid, result(("n",), (1,)), tips) == []
    ranges = {"crime": spans(store, crime[0])}
    dated = "How many states had a poverty above 12 in June 2009?"
    for sql in (
        "SELECT COUNT(*) FROM crime WHERE poverty > 12 AND year = '2009-06'",
        "SELECT COUNT(*) FROM crime WHERE poverty > 12 AND strftime('%Y-%m', year) = '2009-06'",
    ):
        found = problems(dated, sql, result(("n",), (0,)), crime, ranges)
        assert any("year holds numbers (2009 to 2009)" in p for p in found), found
    change = "By how much did the poverty change from Alabama to Ohio?"
    itself = "SELECT CAST(poverty AS REAL) - CAST(poverty AS REAL) FROM crime"
    assert any("from itself" in p for p in problems(change, itself, result(("d",), (0,)), crime))
    two = (
        "SELECT (SELECT poverty FROM crime WHERE state = 'Ohio') - "
        "(SELECT poverty FROM crime WHERE state = 'Alabama')"
    )
    assert problems(change, two, result(("d",), (3,)), crime) == []
    lowest = "Which state has the lowest murder rate per 100,000 residents?"
    quotient = "SELECT state FROM crime ORDER BY murder_rate / poverty LIMIT 1"
    found = problems(lowest, quotient, result(("state",), ("Utah",)), crime)
    assert any("ORDER BY the column itself" in p for p in found)
    per = "Which state has the lowest murder rate per poverty point?"  # a quotient, asked
    assert not any("ORDER BY" in p for p in problems(per, quotient, result(("s",), ("U",)), crime))


def test_a_year_put_in_a_column_of_small_numbers_is_no_false_premise(store):
    (tips,) = [t for t in store.catalog() if t.name == "tips"]
    question = "On how many Sundays in 2019 was the total bill above 10?"
    sql = "SELECT COUNT(*) FROM tips WHERE total_bill > 10 AND day = 'Sun' AND tip = 2019"
    found = misread_years(question, sql, [tips], {"tips": spans(store, tips)})
    assert found and "2019 is a year, and tip holds 1.01 to 3.5" in found[0]
    assert misread_years(question, sql.replace("2019", "3.5"), [tips], {}) == []


def test_a_set_limited_by_a_condition_does_not_list_every_value(store):
    (election,) = [t for t in store.catalog() if t.name == "election"]
    every = result(
        ("district",), ("101-Bois-de-Liesse",), ("102-Cap-Saint-Jacques",), ("111-Mile-End",)
    )
    question = "Which districts did Joly win with more than 2600 votes?"
    sql = "SELECT district FROM election WHERE joly > 2600"
    found = problems(question, sql + " OR 1", every, [election])
    assert any("lists every district of election (3)" in p for p in found), found
    two = result(("district",), ("101-Bois-de-Liesse",), ("102-Cap-Saint-Jacques",))
    assert not any("every" in p for p in problems(question, sql, two, [election]))
    listed = "List all the districts with a winner."  # all of them, asked
    assert not any("every" in p for p in problems(listed, sql, every, [election]))


def test_a_year_no_column_can_hold_need_not_be_in_the_query(store):
    (tips,) = [t for t in store.catalog() if t.name == "tips"]
    question = "On how many Sundays in 2019 was the total bill above 10?"
    sql = "SELECT COUNT(*) FROM tips WHERE total_bill > 10 AND day = 'Sun'"
    ranges = {"tips": spans(store, tips)}
    assert problems(question, sql, result(("n",), (1,)), [tips], ranges) == []
    (crime,) = [t for t in store.catalog() if t.name == "crime"]  # it has a Year column
    asked = "How many states had a poverty above 12 in 2009?"
    plain = "SELECT COUNT(*) FROM crime WHERE poverty > 12"
    found = problems(asked, plain, result(("n",), (3,)), [crime], {"crime": spans(store, crime)})
    assert any("says 2009" in p for p in found)


def test_a_value_said_with_its_signs_is_said(tmp_path):
    wind: list[list[Any]] = [
        ["direction", "strength", "frequency"],
        ["N", "6+", 0.4],
        ["E", "0-1", 0.5],
        ["S", "6+", 0.1],
    ]
    tables = make_table_store(tmp_path / "w.sqlite3", {"wind.csv": wind}).catalog()
    question = "Which direction has the highest frequency of wind at strength 6+?"
    sql = "SELECT direction FROM wind WHERE strength = '6+' ORDER BY frequency DESC LIMIT 1"
    assert problems(question, sql, result(("direction",), ("N",)), tables) == []
    other = "Which direction has the highest frequency of wind?"
    assert any("does not say" in p for p in problems(other, sql, result(("d",), ("N",)), tables))


@pytest.mark.parametrize(
    ("question", "sql"),
    [
        (
            "How much higher is the poverty of Utah than that of Ohio?",
            "SELECT (SELECT poverty FROM crime WHERE state = 'Utah') - "
            "(SELECT poverty FROM crime WHERE state = 'Ohio')",
        ),
        (
            "By how much did the poverty change from Ohio to Utah?",  # to minus from
            "SELECT (SELECT poverty FROM crime WHERE state = 'Utah') - "
            "(SELECT poverty FROM crime WHERE state = 'Ohio')",
        ),
        (
            "How much lower is the poverty of Ohio than that of Utah?",
            "SELECT (SELECT poverty FROM crime WHERE state = 'Utah') - "
            "(SELECT poverty FROM crime WHERE state = 'Ohio')",
        ),
        (
            "Where does Ohio rank by murder rate, counting from the highest?",
            "SELECT COUNT(*) + 1 FROM crime WHERE murder_rate > "
            "(SELECT murder_rate FROM crime WHERE state = 'Ohio')",
        ),
        (
            "Where does Ohio rank by murder rate, counting from the lowest?",
            "SELECT COUNT(*) + 1 FROM crime WHERE murder_rate < "
            "(SELECT murder_rate FROM crime WHERE state = 'Ohio')",
        ),
        (
            "Which state has the third lowest murder rate?",
            "SELECT state FROM crime WHERE murder_rate IS NOT NULL ORDER BY murder_rate ASC "
            "LIMIT 1 OFFSET 2",
        ),
        ("Which state had the second highest murder rate in 2009?", ""),  # a condition too
        ("Which state has the second highest murder rate of Ohio and Utah?", ""),
        ("How much higher is Utah than Ohio?", ""),  # no number column named
        ("What is the poverty of Utah?", ""),  # a look-up
    ],
)
def test_a_difference_rank_or_place_of_named_rows_is_written_in_code(store, question, sql):
    assert computed_query(question, store.catalog()) == sql


def test_a_rank_written_in_code_needs_no_model_and_is_checked(fake_services, store, tmp_path):
    llm = make_llm(sql_responder("SELECT 1"))
    fake_services(llm=llm, tables=store)
    out = run_question("Where does Ohio rank by murder rate, counting from the highest?", Context())
    assert out.state["answer"] == "5"  # Oregon, Texas, Utah, Vermont above (4.5 to 8.5); 2.0s below
    assert out.state["answer_kind"] == "table:value:0"
    assert not [c for c in llm.calls if c["prompt"] == "write_sql"]
    groups: list[list[Any]] = [["day", "tip"], ["Sun", 1.0], ["Sun", 3.0], ["Sat", 2.0]]
    tips = make_table_store(tmp_path / "g.sqlite3", {"bills.csv": groups})
    grouped = "How much higher is the tip on Sunday than on Saturday?"  # days name groups
    assert computed_query(grouped, tips.catalog()) == ""


def test_a_change_between_two_dates_is_written_in_code(tmp_path):
    months = [["date", "unemploy", "pop"]] + [
        [f"{1982 + i // 12}-{i % 12 + 1:02d}-01", 10_000 + 37 * i, 230 + i] for i in range(24)
    ]
    phones: list[list[Any]] = [
        ["year", "N.Amer", "Mid.Amer", "S.Amer"],
        [1951, 45939, 555, 1411],
        [1956, 60423, 753, 1815],
        [1961, 73092, 1076, 2363],
    ]
    long = [["state", "year", "rate"]] + [
        [s, y, 1.0] for s in ("Ohio", "Utah") for y in (1951, 1961)
    ]
    store = make_table_store(
        tmp_path / "t.sqlite3",
        {"economics.csv": months, "phones.csv": phones, "long.csv": long},
    )
    tables = store.catalog()
    q = "By how many thousand did the number of unemployed change from December 1982 to "
    q += "December 1983?"
    sql = computed_query(q, tables)
    out = store.query(sql)
    assert out.rows == ((12 * 37,),) and problems(q, sql, out, tables) == []  # later - earlier
    q = "By how many thousand did the telephones in Mid.Amer grow from 1951 to 1961?"
    sql = computed_query(q, tables)
    assert "mid_amer" in sql and "n_amer" not in sql  # Mid.Amer said; N.Amer only alike
    out = store.query(sql)
    assert out.rows == ((1076 - 555,),) and problems(q, sql, out, tables) == []
    # a month beside a whole year, or a year many rows hold: no one row each, no query
    assert computed_query("How much did unemploy change from 1982 to December 1983?", tables) == ""
    assert computed_query("How much did the rate change from 1951 to 1961?", tables) == ""


def test_a_key_compared_with_a_number_the_question_does_not_say_is_a_guess(tmp_path):
    """ "Which of our Confections products have been discontinued?" read as ``category_id = 2``
    (Condiments): the question names the category, not its key. A key the question states,
    or a question that asks by key, is left alone; the retry may read the key's table."""
    products: list[list[Any]] = [
        ["product_id", "product_name", "category_id", "discontinued"],
        [1, "Gumbo Mix", 2, 1],
        [2, "Cajun Seasoning", 3, 1],
    ]
    categories: list[list[Any]] = [
        ["category_id", "category_name"],
        [2, "Condiments"],
        [3, "Sweets"],
    ]
    store = make_table_store(
        tmp_path / "g.sqlite3", {"products.csv": products, "categories.csv": categories}
    )
    catalog = store.catalog()
    asked = [t for t in catalog if t.name == "products"]
    guessed = "SELECT product_name FROM products WHERE discontinued = 1 AND category_id = 2"
    rows = result(("product_name",), ("Gumbo Mix",))
    q = "Which of our Sweets products have been discontinued?"
    found = findings(q, guessed, rows, asked, catalog=catalog)
    assert any(c == "guessed key" and "join categories" in t for c, t in found)
    assert referred_tables(guessed, catalog) == ["categories"]
    for said in ("Which products of category 2 are discontinued?", f"{q} Give the category id."):
        assert "guessed key" not in [c for c, _ in findings(said, guessed, rows, catalog)]
    flagged = "SELECT product_name FROM products WHERE discontinued = 1"  # no key compared
    assert "guessed key" not in [c for c, _ in findings(q, flagged, rows, asked, catalog=catalog)]


def test_a_key_named_after_another_table_is_no_condition_the_query_must_read(tmp_path):
    """ "How many orders did customers in Austria place?" names the customers, not a condition
    on ``orders.customer_id``; a column the question names otherwise still must be read."""
    orders: list[list[Any]] = [
        ["order_id", "customer_id", "ship_country", "freight"],
        [1, 7, "Austria", 10.0],
        [2, 8, "Brazil", 20.0],
    ]
    customers: list[list[Any]] = [["customer_id", "company_name"], [7, "ERNST"], [8, "HANARI"]]
    store = make_table_store(
        tmp_path / "o.sqlite3", {"orders.csv": orders, "customers.csv": customers}
    )
    catalog = store.catalog()
    asked = [t for t in catalog if t.name == "orders"]
    q = "How many orders did customers in Austria place?"
    counted = "SELECT COUNT(*) FROM orders WHERE ship_country = 'Austria'"
    found = findings(q, counted, result(("n",), (1,)), asked, catalog=catalog)
    assert not [t for c, t in found if c == "named"]
    q2 = "What was the freight of the orders to Austria?"
    left = "SELECT COUNT(*) FROM orders WHERE ship_country = 'Austria'"
    found = findings(q2, left, result(("n",), (1,)), asked, catalog=catalog)
    assert any("names the column freight" in t for c, t in found if c == "named")


def test_a_key_added_up_measures_nothing(tmp_path):
    """ "How many units of Seafood were sold?" answered by ``SUM(category_id)`` over the rows
    joined: a key numbers rows. The quantity itself, or a question about the keys, passes."""
    products: list[list[Any]] = [
        ["product_id", "category_id", "units"],
        [1, 8, 10],
        [2, 8, 5],
    ]
    categories: list[list[Any]] = [["category_id", "category_name"], [8, "Seafood"]]
    store = make_table_store(
        tmp_path / "k.sqlite3", {"products.csv": products, "categories.csv": categories}
    )
    catalog = store.catalog()
    q = "How many units of Seafood were sold?"
    joined = "FROM products AS p JOIN categories AS c ON p.category_id = c.category_id"
    summed = f"SELECT SUM(p.category_id) {joined} WHERE c.category_name = 'Seafood'"
    found = findings(q, summed, store.query(summed), catalog, catalog=catalog)
    assert any(c == "summed key" and "adds up category_id, a key" in t for c, t in found)
    units = f"SELECT SUM(p.units) {joined} WHERE c.category_name = 'Seafood'"
    assert "summed key" not in [c for c, _ in findings(q, units, store.query(units), catalog)]
    asks = "What do the category ids of the Seafood products add up to?"
    assert "summed key" not in [c for c, _ in findings(asks, summed, store.query(summed), catalog)]


def test_a_one_word_proper_name_of_a_naming_column_is_a_condition_the_query_must_use(tmp_path):
    """ "Which of our Beverages products …" counted over every product lost the category; a
    one-word value written in lower case ("male customers") or of no naming column is no name
    the question gives."""
    products: list[list[Any]] = [
        ["product_id", "product_name", "category_id", "discontinued", "size"],
        [1, "Chai", 1, 1, "Large"],
        [2, "Ikura", 8, 1, "Large"],
    ]
    categories: list[list[Any]] = [
        ["category_id", "category_name"],
        [1, "Beverages"],
        [8, "Seafood"],
    ]
    store = make_table_store(
        tmp_path / "n.sqlite3", {"products.csv": products, "categories.csv": categories}
    )
    catalog = store.catalog()
    every = "SELECT product_name FROM products WHERE discontinued = 1"
    q = "Which of our Beverages products have been discontinued?"
    found = findings(q, every, store.query(every), catalog, catalog=catalog)
    assert (
        "name left out",
        "the question names 'Beverages' (a value of category_name in "
        "categories) but the query does not use it",
    ) in found
    kept = (
        "SELECT p.product_name FROM products AS p JOIN categories AS c "
        "ON p.category_id = c.category_id "
        "WHERE p.discontinued = 1 AND c.category_name = 'Beverages'"
    )
    assert "name left out" not in [c for c, _ in findings(q, kept, store.query(kept), catalog)]
    for said in (
        "Which beverages products have been discontinued?",  # lower case: a word
        "Which Large products have been discontinued?",
    ):  # size names no row
        got = findings(said, every, store.query(every), catalog, catalog=catalog)
        assert "name left out" not in [c for c, _ in got]


def test_a_zero_under_a_condition_no_row_meets_is_told_to_compare_another_column(tmp_path):
    """ "How many orders from France went out later than required?" as ``order_date >
    required_date`` is 0 in every country; as ``shipped_date > required_date`` a 0 for France
    is the rows two met conditions share, and passes."""
    orders: list[list[Any]] = [
        ["order_id", "ship_country", "order_date", "required_date", "shipped_date"],
        [1, "France", "1997-01-02", "1997-01-30", "1997-01-10"],
        [2, "Germany", "1997-02-02", "1997-02-20", "1997-02-25"],
    ]
    store = make_table_store(tmp_path / "o.sqlite3", {"orders.csv": orders})
    catalog = store.catalog()
    q = "How many orders from France went out later than the date they were required by?"
    placed = (
        "SELECT COUNT(*) FROM orders AS T1 WHERE T1.ship_country = 'France' "
        "AND T1.order_date > T1.required_date"
    )
    found = checked(store, q, placed, store.query(placed), catalog, catalog, catalog)
    assert [c for c, _ in found] == ["never met"]
    assert "no row of orders meets order_date > required_date" in found[0][1]
    shipped = placed.replace("T1.order_date", "T1.shipped_date")
    assert checked(store, q, shipped, store.query(shipped), catalog, catalog, catalog) == []


def test_the_conditions_anded_are_read_one_table_each():
    columns = {
        "orders": frozenset({"order_date", "required_date", "customer_id"}),
        "customers": frozenset({"customer_id", "country"}),
    }
    sql = (
        "SELECT COUNT(*) FROM orders AS o JOIN customers ON o.customer_id = customers.customer_id "
        "WHERE o.order_date > required_date AND country = 'Italy' AND strftime('%Y', order_date)"
        " = '1997' AND o.customer_id = customers.customer_id AND country IN (SELECT 'x')"
    )
    assert conditions(sql, columns) == [
        ("orders", "order_date > required_date"),
        ("orders", "STRFTIME('%Y', order_date) = '1997'"),
    ]
    assert conditions("SELECT", columns) == []


def test_columns_named_only_by_the_word_they_share_are_not_named(tmp_path):
    """ "How many games did the Reds win?" says none of wc_win, lg_win, ws_win (wild card,
    league, World Series flags): a team's wins are ``w``; "division" names ``div_win``."""
    teams: list[list[Any]] = [
        ["year", "name", "w", "div_win", "wc_win", "lg_win", "ws_win"],
        [2015, "Cincinnati Reds", 64, "N", "N", "N", "N"],
        [2015, "Kansas City Royals", 95, "Y", "N", "Y", "Y"],
    ]
    store = make_table_store(tmp_path / "t.sqlite3", {"teams.csv": teams})
    catalog = store.catalog()
    sql = "SELECT w FROM teams WHERE year = 2015 AND name = 'Cincinnati Reds'"
    q = "How many games did the Cincinnati Reds win in 2015?"
    assert "named" not in [c for c, _ in findings(q, sql, store.query(sql), catalog)]
    division = "Did the Kansas City Royals win their division in 2015?"
    royals = "SELECT w FROM teams WHERE year = 2015 AND name = 'Kansas City Royals'"
    found = findings(division, royals, store.query(royals), catalog)
    assert (
        "named",
        "the question names the column div_win but the query does not read it",
    ) in found


def test_a_column_read_by_its_abbreviation_is_read(tmp_path):
    """ "their league's pennant" names ``league``; ``lg_win`` ("lg": league) reads it, also
    when the query joins another table with a ``league`` column; ``w`` reads no league."""
    teams: list[list[Any]] = [
        ["year", "league", "team_id", "name", "w", "lg_win"],
        [2011, "AL", "DET", "Detroit Tigers", 95, "Y"],
        [2011, "NL", "SLN", "St. Louis Cardinals", 90, "Y"],
        [2011, "NL", "CHN", "Chicago Cubs", 71, "N"],
    ]
    batting: list[list[Any]] = [["team_id", "league", "hr"], ["DET", "AL", 3], ["SLN", "NL", 1]]
    store = make_table_store(tmp_path / "t.sqlite3", {"teams.csv": teams, "batting.csv": batting})
    catalog = store.catalog()
    q = "Which teams won their league's pennant in 2011?"
    for sql in (
        "SELECT name FROM teams WHERE year = 2011 AND lg_win = 'Y'",
        "SELECT T1.name FROM teams AS T1 JOIN batting AS T2 ON T1.team_id = T2.team_id "
        "WHERE T1.year = 2011 AND T1.lg_win = 'Y'",
    ):
        found = findings(q, sql, store.query(sql), catalog, catalog=catalog)
        assert "named" not in [c for c, _ in found], found
    most = "SELECT name FROM teams WHERE year = 2011 ORDER BY w DESC LIMIT 1"
    found = findings(q, most, store.query(most), catalog, catalog=catalog)
    assert ("named", "the question names the column league but the query does not read it") in (
        found
    )


def test_the_rows_a_sum_adds_up_are_no_column_left_out(tmp_path):
    """ "…payroll in 2013, adding up the salaries listed for their players": the sum of the
    team's rows (one per player) reads no player_id, and team_id is no other quantity than
    player_id; asked per player, the column is named still."""
    salaries: list[list[Any]] = [
        ["year", "team_id", "player_id", "salary"],
        [2013, "SDN", "a1", 500],
        [2013, "SDN", "b2", 700],
        [2013, "NYA", "c3", 900],
    ]
    teams: list[list[Any]] = [["year", "team_id", "name"], [2013, "SDN", "San Diego Padres"]]
    store = make_table_store(tmp_path / "s.sqlite3", {"salaries.csv": salaries, "teams.csv": teams})
    catalog = store.catalog()
    q = (
        "What was the San Diego Padres payroll in 2013, adding up the salaries listed for "
        "their players?"
    )
    sql = "SELECT SUM(salary) FROM salaries WHERE team_id = 'SDN' AND year = 2013"
    found = findings(q, sql, store.query(sql), catalog, catalog=catalog)
    assert not {"named", "neighbour", "look-up"} & {c for c, _ in found}, found
    per = "Which player was paid the most by the San Diego Padres in 2013?"
    top = "SELECT MAX(salary) FROM salaries WHERE team_id = 'SDN' AND year = 2013"
    found = findings(per, top, store.query(top), catalog, catalog=catalog)
    assert ("named", "the question names the column player_id but the query does not read it") in (
        found
    )


def test_a_value_said_only_inside_a_longer_value_is_not_named_on_its_own(tmp_path):
    """ "the Cleveland Indians" names the team, not the birth city 'Cleveland' of a player."""
    people: list[list[Any]] = [
        ["player_id", "first_name", "birth_city", "birth_country"],
        ["a1", "Diego", "Cleveland", "D.R."],
        ["b2", "Jose", "Santo Domingo", "D.R."],
    ]
    teams: list[list[Any]] = [["team_id", "name"], ["CLE", "Cleveland Indians"]]
    batting: list[list[Any]] = [["player_id", "team_id"], ["a1", "CLE"], ["b2", "CLE"]]
    store = make_table_store(
        tmp_path / "b.sqlite3", {"people.csv": people, "teams.csv": teams, "batting.csv": batting}
    )
    catalog = store.catalog()
    q = "How many players born in Santo Domingo played for the Cleveland Indians?"
    sql = (
        "SELECT COUNT(*) FROM people AS p JOIN batting AS b ON p.player_id = b.player_id "
        "JOIN teams AS t ON t.team_id = b.team_id "
        "WHERE p.birth_city = 'Santo Domingo' AND t.name = 'Cleveland Indians'"
    )
    found = findings(q, sql, store.query(sql), catalog, catalog=catalog)
    assert not [t for _, t in found if "'Cleveland'" in t], found
    people_table = catalog[[t.name for t in catalog].index("people")]
    people_only = named_values(q, people_table, said_values(q, catalog))
    assert people_only == {"birth_city": ("Santo Domingo",)}
    alone = "How many players were born in Cleveland?"
    unsaid = "SELECT COUNT(*) FROM people"
    assert any("'Cleveland'" in t for _, t in findings(alone, unsaid, store.query(unsaid), catalog))


def test_a_word_of_a_name_the_question_says_names_no_column(tmp_path):
    """ "the San Francisco Giants" is a name: its "Francisco" is no ``franch_id`` asked for."""
    teams: list[list[Any]] = [
        ["year", "franch_id", "name", "hr"],
        [2010, "SFG", "San Francisco Giants", 162],
        [2011, "SFG", "San Francisco Giants", 121],
    ]
    store = make_table_store(tmp_path / "g.sqlite3", {"teams.csv": teams})
    catalog = store.catalog()
    sql = "SELECT SUM(hr) FROM teams WHERE name = 'San Francisco Giants'"
    q = "How many home runs did the San Francisco Giants hit in all?"
    assert "named" not in [
        c for c, _ in findings(q, sql, store.query(sql), catalog, catalog=catalog)
    ]
    franchise = "How many home runs did the franchise SFG hit in all?"
    counted = "SELECT SUM(hr) FROM teams"
    found = findings(franchise, counted, store.query(counted), catalog, catalog=catalog)
    assert (
        "named",
        "the question names the column franch_id but the query does not read it",
    ) in found


def test_a_number_a_column_of_its_kind_holds_elsewhere_is_no_false_premise(tmp_path):
    """ "How much was Jeter paid in 2010?" as ``birth_year = 2010`` compared the wrong column:
    ``salaries.year`` holds 2010. A year no year column holds is a false premise still, and a
    count that equals it is no column of its kind."""
    people: list[list[Any]] = [["player_id", "birth_year", "weight"], ["jeter", 1974, 2010]]
    salaries: list[list[Any]] = [["player_id", "year", "salary"], ["jeter", 2010, 22600000]]
    store = make_table_store(
        tmp_path / "p.sqlite3", {"people.csv": people, "salaries.csv": salaries}
    )
    catalog = store.catalog()
    people_only = [t for t in catalog if t.name == "people"]
    misread = "SELECT weight FROM people WHERE birth_year = 2010"
    assert absent_numbers(store, misread, people_only) != []  # people alone has no 2010
    assert absent_numbers(store, misread, people_only, catalog=catalog) == []
    absent = "SELECT weight FROM people WHERE birth_year = 2019"
    assert absent_numbers(store, absent, people_only, catalog=catalog) == [
        "people.csv has no birth_year 2019 (it has 1974 to 1974)."
    ]
    # the query that found no rows is told where the number is
    _, _, answer, premise, why = run_query(store, misread, people_only, catalog)
    assert not answer and not premise
    assert "no row of people has birth_year 2010; salaries.year holds it" in why


def test_a_table_joined_only_to_read_a_column_another_holds_is_told_to_be_left_out(tmp_path):
    """ "How many players hit at least 40 home runs in 2015?" read through ``awards.year``
    counts only the award winners; a join the question asks for (it names the award) and
    one that reads nothing of the table joined (``people``) pass."""
    batting: list[list[Any]] = [
        ["player_id", "year", "hr"],
        ["a1", 2015, 44],
        ["b1", 2015, 41],
        ["c1", 2014, 12],
    ]
    awards: list[list[Any]] = [["player_id", "year", "award"], ["a1", 2015, "Silver Slugger"]]
    people: list[list[Any]] = [["player_id", "birth_country"], ["a1", "USA"], ["b1", "Cuba"]]
    store = make_table_store(
        tmp_path / "b.sqlite3",
        {"batting.csv": batting, "awards.csv": awards, "people.csv": people},
    )
    catalog = store.catalog()
    q = "How many players hit at least 40 home runs in 2015?"
    through = (
        "SELECT COUNT(DISTINCT T1.player_id) FROM batting AS T1 JOIN awards AS T2 "
        "ON T1.player_id = T2.player_id WHERE T2.year = 2015 AND T1.hr >= 40"
    )
    found = findings(q, through, store.query(through), catalog, catalog=catalog)
    assert "needless join" in [c for c, _ in found]
    assert any("joins awards only to read year" in text for _, text in found)
    # told to leave awards out, not to join it on year too
    assert "half joined" not in [c for c, _ in found]
    named = "How many Silver Slugger winners hit at least 40 home runs in 2015?"
    got = findings(named, through, store.query(through), catalog, catalog=catalog)
    assert "needless join" not in [c for c, _ in got]
    harmless = through.replace("awards", "people").replace("T2.year", "T1.year")
    got = findings(q, harmless, store.query(harmless), catalog, catalog=catalog)
    assert "needless join" not in [c for c, _ in got]


def test_a_value_written_by_the_initials_of_words_said_is_said(tmp_path):
    """'AL' for "American League" is said, and so is "League" (a player's last name) inside
    it; a query without the question's 90 is still told so. A table joined to two others is
    a bridge, never a needless join."""
    assert initialled("How many American League teams won?", "AL") == "American League"
    assert initialled("born in the Dominican Republic", "D.R.") == "Dominican Republic"
    assert initialled("How many american league teams won?", "AL") == ""
    assert initialled("How many American League teams won?", "NL") == ""
    teams: list[list[Any]] = [
        ["team_id", "year", "league", "name", "w"],
        ["NYA", 2012, "AL", "New York Yankees", 95],
        ["BAL", 2012, "AL", "Baltimore Orioles", 93],
        ["ATL", 2012, "NL", "Atlanta Braves", 94],
    ]
    people: list[list[Any]] = [
        ["player_id", "first_name", "last_name", "birth_country"],
        ["leagubr01", "Brandon", "League", "USA"],
        ["jeterde01", "Derek", "Jeter", "USA"],
    ]
    batting: list[list[Any]] = [["player_id", "year", "team_id"], ["jeterde01", 2012, "NYA"]]
    store = make_table_store(
        tmp_path / "t.sqlite3", {"teams.csv": teams, "people.csv": people, "batting.csv": batting}
    )
    catalog = store.catalog()
    q = "How many American League teams won 90 or more games in 2012?"
    right = "SELECT COUNT(*) FROM teams WHERE league = 'AL' AND year = 2012 AND w >= 90"
    assert findings(q, right, store.query(right), catalog, catalog=catalog) == []
    loose = "SELECT COUNT(*) FROM teams WHERE league = 'AL' AND year = 2012"
    got = [c for c, _ in findings(q, loose, store.query(loose), catalog, catalog=catalog)]
    assert "numbers" in got and "unsaid filter" not in got and "name left out" not in got
    bridged = (
        "SELECT COUNT(DISTINCT b.player_id) FROM batting AS b JOIN people AS p ON b.player_id = "
        "p.player_id JOIN teams AS t ON t.team_id = b.team_id AND t.year = b.year "
        "WHERE p.birth_country = 'USA' AND t.name = 'New York Yankees' AND b.year = 2012"
    )
    asked = "How many players born in the USA played for the New York Yankees in 2012?"
    got = [c for c, _ in findings(asked, bridged, store.query(bridged), catalog, catalog=catalog)]
    assert "needless join" not in got


def _awards_store(tmp_path: Any) -> Any:
    """One player with both awards of 2015 (p1), one with one (p2)."""
    awards: list[list[Any]] = [
        ["player_id", "award", "year"],
        ["p1", "Gold Glove", 2015],
        ["p1", "Silver Slugger", 2015],
        ["p2", "Gold Glove", 2015],
    ]
    return make_table_store(tmp_path / "a.sqlite3", {"awards.csv": awards})


def test_two_values_one_column_must_equal_at_once_are_told_how_to_ask_for_both(tmp_path):
    """ "Which players won both …?" as ``award = 'A' AND award = 'B'`` finds no rows: told to
    group what has both. Two parts of one date, or two tables' columns, contradict nothing."""
    store = _awards_store(tmp_path)
    catalog = store.catalog()
    q = "Which players won both a Gold Glove and a Silver Slugger in 2015?"
    both = "SELECT player_id FROM awards WHERE award = 'Gold Glove' AND award = 'Silver Slugger'"
    _, _, answer, _, why = run_query(store, both, catalog, catalog, q)
    assert not answer
    assert "GROUP BY player_id HAVING COUNT(DISTINCT award) = 2" in why
    assert (
        contradictions(
            "SELECT 1 FROM t WHERE strftime('%Y', d) = '2015' AND strftime('%m', d) = '03'"
        )
        == []
    )
    assert (
        contradictions(
            "SELECT 1 FROM t AS a JOIN t AS b ON a.k = b.k WHERE a.x = 'A' AND b.x = 'B'"
        )
        == []
    )
    grouped = (
        "SELECT player_id FROM awards WHERE award IN ('Gold Glove', 'Silver Slugger') "
        "GROUP BY player_id HAVING COUNT(DISTINCT award) = 2"
    )
    assert run_query(store, grouped, catalog, catalog, q)[2] == "p1"


def test_both_asked_as_a_list_of_either_is_told_to_group(tmp_path):
    store = _awards_store(tmp_path)
    catalog = store.catalog()
    q = "Which players won both a Gold Glove and a Silver Slugger in 2015?"
    either = "SELECT player_id FROM awards WHERE award IN ('Gold Glove', 'Silver Slugger')"
    found = findings(q, either, store.query(either), catalog, catalog=catalog)
    assert "both" in [c for c, _ in found]
    grouped = either + " GROUP BY player_id HAVING COUNT(DISTINCT award) = 2"
    got = findings(q, grouped, store.query(grouped), catalog, catalog=catalog)
    assert "both" not in [c for c, _ in got]
    one = "Which players won a Gold Glove or a Silver Slugger in 2015?"
    got = findings(one, either, store.query(either), catalog, catalog=catalog)
    assert "both" not in [c for c, _ in got]


def test_a_choice_made_by_what_both_rows_hold_alike_is_no_choice(tmp_path):
    teams: list[list[Any]] = [
        ["name", "year", "g", "w"],
        ["Atlanta Braves", 2014, 162, 79],
        ["Washington Nationals", 2014, 162, 96],
    ]
    store = make_table_store(tmp_path / "t.sqlite3", {"teams.csv": teams})
    catalog = store.catalog()
    q = "Who won more games in 2014, the Atlanta Braves or the Washington Nationals?"
    pair = "SELECT name FROM teams WHERE name IN ('Atlanta Braves', 'Washington Nationals') "

    def found(sql: str) -> list[str]:
        result = store.query(sql)
        return [name for name, _ in checked(store, q, sql, result, catalog, catalog, catalog)]

    assert "tie" in found(pair + "AND year = 2014 ORDER BY g DESC LIMIT 1")  # 162 games each
    assert "tie" not in found(pair + "AND year = 2014 ORDER BY w DESC LIMIT 1")
    # not a choice between two rows: a tie at the top is the question's own to settle
    top = "SELECT name FROM teams ORDER BY g DESC LIMIT 1"
    assert "tie" not in [
        n
        for n, _ in checked(
            store,
            "Which team played the most games?",
            top,
            store.query(top),
            catalog,
            catalog,
            catalog,
        )
    ]


def test_two_tables_joined_on_a_key_and_dated_on_one_side_only_are_told_so(tmp_path):
    """``batting JOIN teams ON team_id WHERE teams.year = 2013`` counts every season's rows."""
    teams: list[list[Any]] = [
        ["team_id", "year", "name"],
        ["NYA", 2012, "New York Yankees"],
        ["NYA", 2013, "New York Yankees"],
    ]
    batting: list[list[Any]] = [
        ["player_id", "year", "team_id"],
        ["jeterde01", 2012, "NYA"],
        ["jeterde01", 2013, "NYA"],
        ["canoro01", 2012, "NYA"],
    ]
    store = make_table_store(tmp_path / "t.sqlite3", {"teams.csv": teams, "batting.csv": batting})
    catalog = store.catalog()
    q = "How many players played for the New York Yankees in 2013?"
    half = (
        "SELECT COUNT(b.player_id) FROM batting AS b JOIN teams AS t ON b.team_id = t.team_id "
        "WHERE t.name = 'New York Yankees' AND t.year = 2013"
    )
    assert store.query(half).rows == ((3,),)  # 2012's rows too
    got = dict(findings(q, half, store.query(half), catalog, catalog=catalog))
    assert "reads year of teams only" in got["half joined"]
    assert "batting.year = teams.year" in got["half joined"]
    whole = half.replace("t.team_id ", "t.team_id AND b.year = t.year ")
    assert store.query(whole).rows == ((1,),)
    got = dict(findings(q, whole, store.query(whole), catalog, catalog=catalog))
    assert "half joined" not in got
    # names read off the dated table only, nothing added up: its rows only repeat
    names = (
        "SELECT t.name FROM teams AS t JOIN batting AS b ON t.team_id = b.team_id "
        "WHERE t.year = 2013"
    )
    got = dict(findings(q, names, store.query(names), catalog, catalog=catalog))
    assert "half joined" not in got
