"""Table questions: which go to SQL, the SQL's way there and back, and the graph's table route."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.runtime import Runtime

from crag.run import run_question
from crag_core.schema.context import Context
from crag_core.schema.state import PassState, TableAsked, TablePlan
from crag_core.text.sql import (
    did_you_mean,
    extract_sql,
    format_cell,
    match_tables,
    missing_values,
    names_column,
    result_answer,
    schema,
    table_plan,
    text_names,
)
from crag_core.text.table_shapes import ColumnInfo, QueryResult, TableInfo
from nodes.shared.confidence import tool_confidence
from nodes.tools.query_table import query_table
from tests.fakes import happy_responder, make_llm, make_table_store

SALES: list[list[Any]] = [
    ["Region", "Month", "Units Sold", "Revenue ($)"],
    ["North", "January", 1200, 15000.5],
    ["South", "January", 800, 9800],
    ["North", "February", 1350, 16200.75],
    ["East", "February", None, 7000],
]
PLANTS: list[list[Any]] = [
    ["Site", "Capacity MW", "Year opened"],
    ["Whitelee", 539, 2009],
    ["Ardrossan", 24, 2004],
]


@pytest.fixture
def store(tmp_path):
    return make_table_store(
        tmp_path / "tables.sqlite3", {"docs/sales.csv": SALES, "docs/wind farms.csv": PLANTS}
    )


@pytest.mark.parametrize(
    ("question", "table"),
    [
        ("How many units sold were recorded in the North region?", True),
        ("What is the total revenue per month?", True),
        ("Which site has the highest capacity MW?", True),
        ("What revenue does the table give for Whitelee?", False),  # revenue is not its column
        ("What was the revenue of South in January?", True),  # a row: a listed value
        ("When was the wind farms site Ardrossan opened?", True),  # the table named
        ("Who painted the Mona Lisa?", False),
        ("hello", False),
        ("Tell me about the region.", False),  # a column, but no computation and no row
        ("What was the capacity MW of the site opened in 2009?", True),  # a year: a row
        ("How many Februarys were recorded?", True),  # a value and a computation
        ("Was February cold?", False),  # a value alone
        ("How large is Whitelee?", True),  # a row asked about: the model chooses the column
        ("How many rows does the sales table hold?", True),  # the table and a computation
        ("In which city was Whitelee built?", False),  # a row, but a kind no table holds
        ("Which month was cold?", False),  # "which" naming no row
    ],
)
def test_a_question_goes_to_the_tables_when_it_names_a_column_and_rows(store, question, table):
    use, reason = table_plan(question, store.catalog())
    assert use is table, reason


PARAMETERS: list[list[Any]] = [
    ["Name", "Default", "Meaning"],
    ["timeout", 30, "Seconds to wait"],
    ["retries", 2, "Attempts after a failure"],
]


@pytest.mark.parametrize(
    ("question", "table"),
    [
        ("How many settings does the guide describe?", False),  # the page named, not its table
        ("What is the default of timeout?", False),  # a row it lists: its text lists it too
        ("What does the retries setting of the guide mean?", False),
        ("Which name has the highest default?", True),  # a computation over named columns
        ("What is the average default?", True),
    ],
)
def test_a_table_inside_a_page_takes_only_computations_over_its_columns(tmp_path, question, table):
    store = make_table_store(tmp_path / "t.sqlite3", {"docs/guide.html": PARAMETERS})
    use, reason = table_plan(question, store.catalog())
    assert use is table, reason


DOCUMENTS = [
    {"label": "docs/sales.csv", "title": "sales"},
    {"label": "docs/regions.html", "title": "R: Sales Regions of the North and South"},
    {"label": "docs/plants.md", "title": "Wind farms of Scotland"},
    {"label": "docs/north.rst", "title": "North Sea wind dataset"},
]


@pytest.mark.parametrize(
    ("question", "names", "table"),
    [
        # the words that name a text name no table's column or value: its text is searched
        (
            "How many regions does the page on Sales Regions of the North and South list?",
            ["sales regions north south"],
            False,
        ),
        ("How many units sold does the regions page give for North?", ["regions"], True),
        (
            "How many pages does the report on wind farms of Scotland have?",
            ["wind farms scotland"],
            False,
        ),
        ("What is the total revenue of the regions in the plants.md file?", ["plants"], True),
        # "data set" and "dataset", and a title's "data", are said either way
        (
            "How many turbines does the North Sea wind data set list?",
            ["north sea wind dataset"],
            False,
        ),
        ("How many units sold were recorded in the North region?", [], True),
        ("How many rows does the sales table hold?", [], True),  # a table's file: not a text
        ("How many regions are there?", [], True),  # "regions" alone does not name the page
    ],
)
def test_a_question_about_a_text_goes_to_its_text(store, question, names, table):
    catalog = store.catalog()
    assert text_names(question, DOCUMENTS, catalog) == names
    use, reason = table_plan(question, catalog, names)
    assert use is table, reason


@pytest.mark.parametrize(
    "question",
    [
        "What does the column Units Sold measure?",
        "What does Revenue ($) of the sales table mean?",
        "Which column of the sales table gives the revenue?",
        "Which variable records the units sold?",
    ],
)
def test_what_a_column_means_is_not_in_its_cells(store, question):
    use, reason = table_plan(question, store.catalog())
    assert use is False
    assert "means" in reason


def test_no_tables_no_sql():
    assert table_plan("How many units sold?", []) == (False, "the collection has no tables")
    assert table_plan("Who painted it?", [])[0] is False


def test_the_named_tables_come_first(store):
    matches = match_tables("Which site opened first, by capacity MW?", store.catalog())
    assert [m.table.name for m in matches] == ["wind_farms"]
    assert matches[0].columns == ("Site", "Capacity MW")


def test_the_schema_shows_names_types_originals_values_and_rows(store):
    (table,) = [t for t in store.catalog() if t.name == "sales"]
    text = schema([table], [store.sample("sales", 2)])
    assert text.startswith("CREATE TABLE sales (\n  region TEXT, -- Region — values: 'North'")
    assert "  revenue REAL -- Revenue ($)\n);" in text
    assert "2 example rows of 4:\n_row, region, month, units_sold, revenue\n2, North" in text


def test_the_schema_writes_values_as_sql_does(tmp_path):
    """A quote inside a value is doubled, as the query must write it (not ``"Cote d'Ivoire"``)."""
    rows: list[list[Any]] = [["Country", "Year"], ["Cote d'Ivoire", 2007], ["Ghana", 2007]]
    store = make_table_store(tmp_path / "t.sqlite3", {"life.csv": rows})
    (table,) = store.catalog()
    text = schema([table], [store.sample(table.name, 1)])
    assert "values: 'Cote d''Ivoire', 'Ghana'" in text


@pytest.mark.parametrize(
    ("reply", "sql"),
    [
        ("SELECT COUNT(*) FROM sales;", "SELECT COUNT(*) FROM sales"),
        (
            "```sql\nSELECT region\nFROM sales\n```\nThis lists regions.",
            "SELECT region\nFROM sales",
        ),
        ("Here is the query: SELECT 1; DROP TABLE sales;", "SELECT 1"),
        ("with t as (select 1) select * from t", "with t as (select 1) select * from t"),
        ("I cannot answer that.", "I cannot answer that."),
    ],
)
def test_the_sql_of_a_reply(reply, sql):
    assert extract_sql(reply) == sql


def test_an_unknown_name_gets_the_closest_real_ones(store):
    hint = did_you_mean("no such column: unit_sold", store.catalog())
    assert hint == "no such column: unit_sold (did you mean: units_sold?)"
    assert "wind_farms" in did_you_mean("no such table: windfarms", store.catalog())
    assert did_you_mean("syntax error", store.catalog()) == "syntax error"


def _table(name: str, *columns: str) -> TableInfo:
    held = tuple(ColumnInfo(c, c, "TEXT", 1, ()) for c in columns)
    return TableInfo(name, name, name, "", 1, held)


def test_an_unknown_column_or_table_is_said_where_it_is():
    """A column read through the wrong alias, or used as a table, is said with the tables that
    hold it: told only the close names, a retry wrote the same query again."""
    tables = [
        _table("products", "product_id", "product_name"),
        _table("order_details", "order_id", "product_id", "quantity"),
    ]
    sql = (
        "SELECT T2.product_name FROM products AS T1 JOIN order_details AS T2 "
        "ON T1.product_id = T2.product_id"
    )
    said = did_you_mean("no such column: T2.product_name", tables, sql)
    assert said == (
        "no such column: T2.product_name (T2 is order_details, which has no column "
        "product_name; the tables with a column product_name: products; products is T1 "
        "here: write T1.product_name)"
    )
    # a holder the query does not read is not said as written
    alone = "SELECT T2.product_name FROM order_details AS T2"
    said = did_you_mean("no such column: T2.product_name", tables, alone)
    assert said.endswith("the tables with a column product_name: products)")
    said = did_you_mean("no such table: quantity", tables, "SELECT 1 FROM quantity")
    assert (
        "quantity is a column, not a table; the tables with a column quantity: order_details"
        in (said)
    )
    assert "did you mean" in did_you_mean("no such column: T2.price", tables, sql)


@pytest.mark.parametrize(
    ("columns", "rows", "answer"),
    [
        (("n",), ((2550,),), "2,550"),
        (("avg",), ((15000.5,),), "15,000.5"),
        (("avg",), ((2.0,),), "2"),
        (("region",), (("North",), ("South",)), "North, South"),
        (("region",), (("North",), ("North",), ("South",)), "North, South"),  # once each
        (
            ("region", "total"),
            (("North", 2550), ("South", 800)),
            "region: North, total: 2,550; region: South, total: 800",
        ),
        (("n",), ((None,),), ""),
        (("n",), (), ""),
    ],
)
def test_the_answer_read_off_a_result(columns, rows, answer):
    assert result_answer(QueryResult(columns, rows, False, ("sales",))) == answer


def test_a_cut_result_says_there_is_more():
    result = QueryResult(("region",), (("North",),), True, ("sales",))
    assert result_answer(result) == "North (and more)"
    assert format_cell(1234567.125) == "1,234,567.12"  # two decimals from 1 up
    assert format_cell(5076.0163) == "5,076.02"
    assert format_cell(0.012345) == "0.0123"  # three significant digits below 1


def sql_responder(*replies: str) -> Any:
    """The happy model, writing ``replies`` in turn when asked for SQL."""
    queue = list(replies)

    def respond(prompt: str, text: str) -> Any:
        if prompt == "write_sql":
            return queue.pop(0)
        return happy_responder(prompt, text)

    return respond


QUESTION = "How many units sold were recorded in the North region?"


def test_a_table_question_is_answered_by_sql_and_cites_its_table(fake_services, store):
    sql = "SELECT SUM(units_sold) FROM sales WHERE region = 'North'"
    llm = make_llm(sql_responder(sql))
    fake_services(llm=llm, tables=store)
    result = run_question(QUESTION, Context())
    assert result.path == [
        "contextualize_question",
        "analyze_query",
        "check_cache",
        "choose_tool",
        "query_table",
        "finalize",
    ]
    assert result.state["answer"] == "2,550"
    assert result.state["sources"] == [
        {"id": "table:sales", "source": "docs/sales.csv", "location": "table", "sql": sql}
    ]
    signals = result.state["tool_signals"]
    assert result.state["confidence"] == tool_confidence("table:value:1", signals)
    assert 0.5 < result.state["confidence"] < 1  # fitted: most table answers were right
    (call,) = [c for c in llm.calls if c["prompt"] == "write_sql"]
    assert "CREATE TABLE sales" in call["text"] and "wind_farms" not in call["text"]
    plan = result.state["plan"]
    assert plan["tool"] == "table" and plan["reason"].endswith("asks 'how many'")
    (sales,) = plan["tables"]
    assert sales == {"name": "sales", "columns": ["Region", "Units Sold"], "values": ["North"]}


def test_the_judges_verdict_on_a_table_answer_is_a_signal_of_its_confidence(
    fake_services, store, monkeypatch
):
    sql = "SELECT SUM(units_sold) FROM sales WHERE region = 'North'"
    monkeypatch.setattr("nodes.tools.table_graph.judges_tables", lambda: True)
    for verdict in (0.95, 0.25):
        written = sql_responder(sql)

        def judged(prompt: str, text: str, p: float = verdict, w: Any = written) -> Any:
            return p if prompt == "judge_sql" else w(prompt, text)

        llm = make_llm(judged)
        fake_services(llm=llm, tables=store)
        result = run_question(QUESTION, Context())
        assert round(result.state["tool_signals"]["judged"] or 0, 3) == verdict
        assert result.state["prompt_versions"]["judge_sql"] == "v1"
        assert [c["prompt"] for c in llm.calls].count("judge_sql") == 1
        if verdict > 0.5:
            assert result.state["answer"] == "2,550" and result.state["confidence"] > 0.9
        else:  # the judge doubts the query: its answer is held back under min_confidence
            assert result.state["answer"] != "2,550"
            assert any("'2,550' is not given" in w for w in result.state["warnings"])


def test_the_table_tool_reads_the_tables_the_plan_names(fake_services, store):
    """The plan is what the tool reads: it does not match the question to tables again."""
    llm = make_llm(sql_responder("SELECT COUNT(*) FROM wind_farms"))
    services = fake_services(llm=llm, tables=store)
    wind_farms = TableAsked(name="wind_farms", columns=[], values=[])
    plan = TablePlan(tool="table", reason="a test", tables=[wind_farms])
    state = PassState(question=QUESTION, plan=plan)
    query_table(state, Runtime(context=Context()), services)
    (call,) = [c for c in llm.calls if c["prompt"] == "write_sql"]
    assert "CREATE TABLE wind_farms" in call["text"] and "CREATE TABLE sales" not in call["text"]


def test_a_failed_query_is_written_again_with_the_error(fake_services, store):
    good = "SELECT SUM(units_sold) FROM sales WHERE region = 'North'"
    llm = make_llm(sql_responder("SELECT SUM(unit_sold) FROM sales", good))
    fake_services(llm=llm, tables=store)
    result = run_question(QUESTION, Context())
    assert result.state["answer"] == "2,550"
    retry = [c["text"] for c in llm.calls if c["prompt"] == "write_sql"][1]
    assert "no such column: unit_sold (did you mean: units_sold?)" in retry


@pytest.mark.parametrize(
    "replies",
    [
        ("DELETE FROM sales", "SELECT nothing FROM nowhere"),
        ("SELECT units_sold FROM sales WHERE units_sold > 99999", "I do not know."),
    ],
)
def test_no_answer_from_a_table_inside_a_page_falls_back_to_its_text(
    fake_services, tmp_path, replies
):
    store = make_table_store(tmp_path / "tables.sqlite3", {"docs/sales.html": SALES})
    fake_services(llm=make_llm(sql_responder(*replies)), tables=store)
    q = "What was the total revenue of South in January?"  # a computation over a column
    result = run_question(q, Context(min_confidence=0))
    assert result.path[3:6] == ["choose_tool", "query_table", "retrieve"]
    assert "Broncos" in result.state["answer"]  # the text's answer
    assert any("No table answered" in w for w in result.state["warnings"])
    assert store.query("SELECT COUNT(*) FROM sales").rows == ((4,),)  # nothing was written


def test_no_table_answer_to_a_spreadsheet_look_up_is_i_dont_know(fake_services, store):
    """A spreadsheet's text is its rows again: searching it costs calls and answers nothing."""
    replies = ("SELECT units_sold FROM sales WHERE units_sold > 99999", "I do not know.")
    fake_services(llm=make_llm(sql_responder(*replies)), tables=store)
    result = run_question("What was the revenue of South in January?", Context(min_confidence=0))
    assert result.path[3:6] == ["choose_tool", "query_table", "finalize"]
    assert result.state["answer"] == "I don't know."
    (warning,) = [w for w in result.state["warnings"] if "No table answered" in w]
    assert "the text was not searched: it holds the spreadsheet's rows" in warning


def test_no_table_answer_to_a_parts_look_up_searches_the_text(fake_services, store):
    """A step of a described question may be a note's: "What is the capital of Norway?"."""
    replies = ("SELECT units_sold FROM sales WHERE units_sold > 99999", "I do not know.")
    services = fake_services(llm=make_llm(sql_responder(*replies * 3)), tables=store)
    sales = TableAsked(name="sales", columns=[], values=["South"])
    plan = TablePlan(tool="table", reason="a test", tables=[sales])
    question = "What was the revenue of South in January?"
    alone = query_table(
        PassState(question=question, plan=plan), Runtime(context=Context()), services
    )
    assert alone["answer"] == "I don't know."  # asked whole: the spreadsheet's rows again
    as_part = PassState(question=question, plan=plan, part_index=0)
    update = query_table(as_part, Runtime(context=Context()), services)
    assert "answer" not in update  # route_after_table: the text is searched
    (warning,) = [w for w in update["warnings"] if "No table answered" in w]
    assert warning.endswith("the text was searched.")
    counted = PassState(question=QUESTION, plan=plan, part_index=0)  # a computation: not
    assert query_table(counted, Runtime(context=Context()), services)["answer"] == "I don't know."


def test_no_table_answer_to_a_computation_is_i_dont_know_without_the_text(fake_services, store):
    replies = ("DELETE FROM sales", "SELECT nothing FROM nowhere")
    fake_services(llm=make_llm(sql_responder(*replies)), tables=store)
    result = run_question(QUESTION, Context(min_confidence=0.0))
    assert result.path[3:6] == ["choose_tool", "query_table", "finalize"]
    assert result.state["answer"] == "I don't know." and result.state["confidence"] is None
    (warning,) = [w for w in result.state["warnings"] if "No table answered" in w]
    assert "the text was not searched: it cannot compute over a table's rows" in warning


def test_with_tools_off_every_question_searches_the_text(fake_services, store):
    llm = make_llm(sql_responder())
    fake_services(llm=llm, tables=store)
    result = run_question(QUESTION, Context(tools=False))
    assert result.path[3:5] == ["choose_tool", "retrieve"]
    assert not [c for c in llm.calls if c["prompt"] == "write_sql"]


def test_a_value_the_table_never_holds_is_a_false_premise(fake_services, store):
    sql = "SELECT SUM(units_sold) FROM sales WHERE region = 'West'"
    fake_services(llm=make_llm(sql_responder(sql)), tables=store)
    result = run_question("How many units sold were recorded in the West region?", Context())
    assert result.state["answer"] == (
        "docs/sales.csv has no Region 'West' (it has North, East, South)."
    )
    assert result.state["sources"][0]["sql"] == sql
    assert missing_values("SELECT 1 FROM sales WHERE region = 'north'", store.catalog()) == []
    assert missing_values("SELECT 1 FROM sales WHERE region LIKE 'N%'", store.catalog()) == []


def test_a_list_with_repeats_names_each_value_once_from_all_rows(fake_services, tmp_path):
    rows = [["Species", "Island"]] + [["Adelie", "Dream"]] * 60 + [["Chinstrap", "Dream"]]
    store = make_table_store(tmp_path / "t.sqlite3", {"penguins.csv": rows})
    sql = "SELECT species FROM penguins WHERE island = 'Dream'"
    fake_services(llm=make_llm(sql_responder(sql)), tables=store)
    result = run_question("Which species were recorded on the island Dream?", Context())
    assert result.state["answer"] == "Adelie, Chinstrap"


@pytest.mark.parametrize(("model", "constrained"), [("local", True), ("openai:gpt-4o-mini", False)])
def test_the_embedded_model_writes_under_a_grammar_of_the_tables_asked_of(
    fake_services, store, model, constrained
):
    sql = "SELECT SUM(units_sold) FROM sales WHERE region = 'North'"
    llm = make_llm(sql_responder(sql))
    fake_services(llm=llm, tables=store)
    assert run_question(QUESTION, Context(model=model)).state["answer"] == "2,550"
    (call,) = [c for c in llm.calls if c["prompt"] == "write_sql"]
    grammar = call["kwargs"].get("extra_body", {}).get("grammar", "")
    assert bool(grammar) is constrained
    if constrained:  # the sales table's names, not the wind farms'
        assert '"units_sold"' in grammar and '"sales"' in grammar and "capacity" not in grammar


def test_a_question_word_shorter_than_a_columns_is_not_its_name():
    assert names_column(["car"], "carb") is False  # "Which car…" does not name ``carb``
    assert names_column(["maximum", "temperature"], "temp_max") is True  # abbreviations
    assert names_column(["generated"], "generation") is True


def test_two_words_that_part_after_five_letters_are_not_one_name():
    # "after discounts" does not name ``discontinued``: they part after "disco"
    assert names_column(["sales", "after", "discounts"], "discontinued") is False
    assert names_column(["discounts"], "discount") is True
    assert names_column(["months"], "monthly") is True  # one word in two spellings
    assert names_column(["countries"], "country") is True
    assert names_column(["electoral"], "electricity") is False


@pytest.mark.parametrize(
    "question",
    ["What is the default of timeout?", "What does the retries setting of the guide mean?"],
)
def test_a_table_that_is_its_whole_document_takes_look_ups_too(tmp_path, question):
    from dataclasses import replace

    store = make_table_store(tmp_path / "t.sqlite3", {"docs/guide.html": PARAMETERS})
    (table,) = store.catalog()
    use, reason = table_plan(question, [replace(table, whole=True)])
    assert use, reason
    assert not table_plan(question, [table])[0]  # the same table inside a text: its text
