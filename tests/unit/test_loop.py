"""The agent loop: the model calls tools, sees what they return and answers, within its budget."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from crag_core.schema.context import Context
from graph.graph import build_graph, loop_steps, step_limit
from nodes.tools.agent import READ_FIRST, asked_tables, out_of_budget, parse_step, step_schema
from nodes.tools.query_table import loop_takes_over
from nodes.tools.run_tools import repeats
from nodes.tools.toolbox import toolbox
from tests.fakes import (
    FakeRetriever,
    doc,
    happy_responder,
    make_llm,
    make_services,
    make_table_store,
)

ARTISTS: list[list[Any]] = [
    ["ArtistId", "Name"],
    [1, "AC/DC"],
    [2, "Accept"],
    [3, "Aerosmith"],
]
ALBUMS: list[list[Any]] = [
    ["AlbumId", "Title", "ArtistId"],
    [1, "For Those About To Rock", 1],
    [2, "Let There Be Rock", 1],
    [3, "Balls to the Wall", 2],
    [4, "Big Ones", 3],
]
NOTES = [
    doc("notes__c0000", "AC/DC are an Australian rock band formed in Sydney in 1973.", 0.7),
    doc("notes__c0001", "Aerosmith is an American rock band formed in Boston in 1970.", 0.6),
]


@pytest.fixture
def store(tmp_path):
    return make_table_store(
        tmp_path / "tables.sqlite3", {"music/artists.csv": ARTISTS, "music/albums.csv": ALBUMS}
    )


def scripted(*steps: Any, sql: str = "", checks: Any = happy_responder) -> Any:
    """A model whose loop steps are ``steps`` in order (dicts as JSON), whose SQL is ``sql``,
    and whose checks are a good model's."""
    queue: Iterator[Any] = iter(steps)

    def respond(prompt: str, text: str) -> Any:
        if prompt == "agent":
            step = next(queue)
            return json.dumps(step) if isinstance(step, dict) else step
        if prompt == "write_sql":
            return sql
        return checks(prompt, text)

    return make_llm(respond)


def ask(services: Any, question: str, **context: Any) -> tuple[dict[str, Any], list[Any]]:
    """Run the graph on ``question``; its final state and the loop's node lines."""
    graph = build_graph(services=lambda _: services)
    lines: list[Any] = []
    final: dict[str, Any] = {}
    for namespace, mode, chunk in graph.stream(
        {"question": question},
        context={"planner": "loop", **context},
        stream_mode=["custom", "values"],
        subgraphs=True,
    ):
        if mode == "custom":
            lines.append(chunk)
        elif not namespace:
            final = cast(dict[str, Any], chunk)
    return final, lines


def test_the_loop_queries_a_table_sees_its_rows_and_answers_with_a_citation(store):
    llm = scripted(
        {
            "enough": "no",
            "tool": "query_table",
            "args": {"question": "How many records has artist 1 made?"},
        },
        {"enough": "yes", "answer": "2 [S1]"},
        sql="SELECT COUNT(*) FROM albums WHERE artistid = 1",
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, lines = ask(services, "How many albums of artist 1 are there?")
    assert final["answer"] == "2"
    assert final["sources"][0]["id"].startswith("table:albums")
    assert final["sources"][0]["sql"] == "SELECT COUNT(*) FROM albums WHERE artistid = 1"
    # the tool wrote its SQL as the rules do: the write_sql prompt, under the tables' grammar
    (write,) = [c for c in llm.calls if c["prompt"] == "write_sql"]
    assert "CREATE TABLE" in write["text"] and write["kwargs"]["extra_body"]["grammar"]
    summaries = {line["node"]: line["summary"] for line in lines}
    assert summaries["agent"].startswith("answers")
    assert "query_table(question=" in [ln for ln in lines if ln["node"] == "agent"][0]["summary"]
    assert "run_tools" in summaries
    # the embedded model's step is a reply under the tools' JSON schema
    agent_calls = [c for c in llm.calls if c["prompt"] == "agent"]
    body = agent_calls[0]["kwargs"]["extra_body"]["response_format"]["json_schema"]
    names = [c["properties"]["tool"]["const"] for c in body["schema"]["anyOf"]]
    assert "query_table" in names and "search" in names  # nothing read yet: no answer offered
    second = agent_calls[1]["kwargs"]["extra_body"]["response_format"]["json_schema"]["schema"]
    assert second["anyOf"][0]["properties"]["answer"]["type"] == "string"
    # what the tool returned is the next step's to read
    assert "2 (1 rows)" in agent_calls[1]["text"].replace("\n", " ")


def test_a_passing_query_of_the_whole_question_ends_the_loop_without_a_model_call(store):
    question = "How many albums of artist 1 are there?"
    llm = scripted(
        {"enough": "no", "tool": "query_table", "args": {"question": question}},
        {"enough": "yes", "answer": "7 [S1]"},  # never asked for
        sql="SELECT COUNT(*) FROM albums WHERE artistid = 1",
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, lines = ask(services, question)
    assert final["answer"] == "2"
    assert [c["prompt"] for c in llm.calls].count("agent") == 1
    (ended,) = [ln for ln in lines if ln["node"] == "agent"][1:]
    assert ended["summary"] == "answers '2 [S1]'"
    # the table's answer as the rules give it: its kind's confidence, its sources, no text checks
    assert final["answer_kind"] and final["confidence"] is not None
    assert final["sources"][0]["sql"] == "SELECT COUNT(*) FROM albums WHERE artistid = 1"
    assert "check_hallucination" not in {ln["node"] for ln in lines}


@pytest.mark.parametrize(
    "asked",
    [
        "How many albums?",  # narrower: asked as the user's question, but the model reads it
        "How many albums of artist 1 are there in the Rock genre?",  # a condition it added
    ],
)
def test_a_query_of_less_or_more_than_the_question_does_not_end_the_loop(store, asked, monkeypatch):
    monkeypatch.setattr("nodes.tools.table_graph.judges_tables", lambda: True)
    llm = scripted(
        {"enough": "no", "tool": "query_table", "args": {"question": asked}},
        {"enough": "yes", "answer": "2 [S1]"},
        sql="SELECT COUNT(*) FROM albums WHERE artistid = 1",
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, "How many albums of artist 1 are there?")
    assert final["answer"] == "2"
    assert [c["prompt"] for c in llm.calls].count("agent") == 2  # the model read the rows
    assert "judge_sql" not in [c["prompt"] for c in llm.calls]  # no confidence reads a verdict
    if asked == "How many albums?":  # its checks read the user's words ("1")
        (write,) = [c for c in llm.calls if c["prompt"] == "write_sql"]
        assert "How many albums of artist 1 are there?" in write["text"]


def test_a_table_answer_under_min_confidence_ends_the_loop_unsaid(store):
    question = "How many albums of artist 1 are there?"
    llm = scripted(
        {"enough": "no", "tool": "query_table", "args": {"question": question}},
        sql="SELECT COUNT(*) FROM albums WHERE artistid = 1",
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, "How many albums of artist 1 are there?", min_confidence=1.0)
    assert final["answer"] == "I don't know."
    assert any(
        w.startswith("The answer '2' is not given") and "under min_confidence 1.00" in w
        for w in final["warnings"]
    )


def test_a_two_step_question_reads_the_text_then_joins_the_tables(store, monkeypatch):
    monkeypatch.setattr("nodes.tools.table_graph.judges_tables", lambda: True)
    llm = scripted(
        {
            "enough": "no",
            "tool": "search",
            "args": {"query": "band formed in Boston", "file": "", "kind": ""},
        },
        {
            "tool": "query_table",
            "args": {
                "question": "How many albums has Aerosmith?",
                "sql": "SELECT COUNT(*) FROM albums JOIN artists USING (artistid) "
                "WHERE artists.name = 'Aerosmith'",
            },
        },
        {"enough": "yes", "answer": "1 [S3]"},
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, "How many albums has the band formed in Boston?")
    assert final["answer"] == "1"
    assert final["sources"][0]["id"].startswith("table:")
    assert "judge_sql" not in [c["prompt"] for c in llm.calls]  # a step's query: not judged


def test_the_loops_own_sql_is_judged_as_the_table_graph_judges(store, monkeypatch):
    monkeypatch.setattr("nodes.tools.table_graph.judges_tables", lambda: True)
    sql = "SELECT COUNT(*) FROM albums WHERE artistid = 1"

    def checks(prompt: str, text: str) -> Any:
        return 0.35 if prompt == "judge_sql" else happy_responder(prompt, text)

    llm = scripted(
        {"tool": "query_table", "args": {"question": "How many albums has artist 1?", "sql": sql}},
        {"enough": "yes", "answer": "2 [S1]"},
        checks=checks,
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, "How many albums has artist 1?", min_confidence=0.0)
    assert final["answer"] == "2" and round(final["tool_signals"]["judged"], 3) == 0.35
    (judge,) = [c["text"] for c in llm.calls if c["prompt"] == "judge_sql"]
    assert "CREATE TABLE albums" in judge and sql in judge


def test_a_bad_citation_goes_back_into_the_loop_and_is_corrected(store):
    llm = scripted(
        {
            "enough": "no",
            "tool": "search",
            "args": {"query": "AC/DC formed", "file": "", "kind": ""},
        },
        {"enough": "yes", "answer": "1973 [S7]"},
        {"enough": "yes", "answer": "1973 [S1]"},
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, lines = ask(services, "When was AC/DC formed?")
    assert final["answer"] == "1973"
    assert final["sources"][0]["id"] == "notes__c0000"
    third = [c for c in llm.calls if c["prompt"] == "agent"][2]
    assert "[S7], which is not a document id" in third["text"]
    assert any(line["summary"].startswith("sent back") for line in lines)


def test_the_budget_ends_the_loop_with_an_answer_and_no_tool_offered(store):
    search = {
        "enough": "no",
        "tool": "search",
        "args": {"query": "rock band", "file": "", "kind": ""},
    }
    llm = scripted(search, search, {"enough": "yes", "answer": "Sydney [S1]"})
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, "Where was AC/DC formed?", max_tool_calls=2)
    assert final["answer"] == "Sydney"
    last = [c for c in llm.calls if c["prompt"] == "agent"][-1]
    schema = last["kwargs"]["extra_body"]["response_format"]["json_schema"]["schema"]
    assert "anyOf" not in schema and set(schema["properties"]) == {"enough", "answer"}
    assert "Answer now" in last["text"]
    assert any("budget ended it: 2 tool calls of 2" in w for w in final["warnings"])


def test_a_tool_error_is_an_observation_the_model_acts_on(store):
    llm = scripted(
        {
            "enough": "no",
            "tool": "query_table",
            "args": {"question": "Which artist has id 3?", "sql": "SELECT nme FROM artists"},
        },
        {"enough": "no", "tool": "column_values", "args": {"table": "artists", "column": "name"}},
        {
            "enough": "no",
            "tool": "query_table",
            "args": {
                "question": "Which artist has id 3?",
                "sql": "SELECT name FROM artists WHERE artistid = 3",
            },
        },
        {"enough": "yes", "answer": "Aerosmith [S1]"},
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, "Which artist has id 3?")
    assert final["answer"] == "Aerosmith"
    texts = [c["text"] for c in llm.calls if c["prompt"] == "agent"]
    assert "failed" in texts[1] and "artists has the columns artistid, name" in texts[1]
    assert "AC/DC; Accept; Aerosmith" in texts[2]


def test_a_spent_budget_with_nothing_read_ends_without_asking_for_an_answer(store):
    failing = {
        "enough": "no",
        "tool": "query_table",
        "args": {"question": "Which artist has id 3?", "sql": "SELECT nme FROM artists"},
    }
    # a third step would answer from memory: it must not be asked for
    llm = scripted(failing, failing, {"enough": "yes", "answer": "Aerosmith [S1]"})
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, lines = ask(services, "Which artist has id 3?")
    assert final["answer"].startswith("I don't know") and final["confidence"] is None
    assert len([c for c in llm.calls if c["prompt"] == "agent"]) == 2
    warned = " ".join(final["warnings"])
    assert "budget ended it: it called a tool again" in warned
    assert "read no document to answer from; it tried: query_table(" in warned
    assert [ln["summary"] for ln in lines if ln["node"] == "agent"][-1].startswith("answers")


def test_a_loop_that_reads_nothing_useful_says_it_does_not_know(store):
    llm = scripted(
        {
            "enough": "no",
            "tool": "search",
            "args": {"query": "platinum records", "file": "", "kind": ""},
        },
        {"enough": "yes", "answer": "I don't know"},
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, "How many platinum records did Accept sell?")
    assert final["answer"].startswith("I don't know")
    assert final["confidence"] is None
    assert "The loop found no answer; it tried: search(query='platinum records'" in " ".join(
        final["warnings"]
    )


def test_the_auto_planner_answers_a_text_question_by_search_not_by_the_loop(store):
    """planner auto: a question the rules send to text search, in a collection with tables, is
    searched, graded and answered as under the rules; the loop is never asked."""
    llm = scripted(checks=text_answers("Sydney [S1]"))  # no loop step: one would fail the run
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, lines = ask(services, "In which city was AC/DC formed?", planner="auto")
    nodes = [line["node"] for line in lines]
    assert "retrieve" in nodes and "generate" in nodes and "agent" not in nodes
    assert not [c for c in llm.calls if c["prompt"] == "agent"]
    assert final["answer"] == "Sydney" and final["plan"]["tool"] == "search"


def text_answers(answer: str) -> Any:
    """A good model's checks whose text answer is ``answer`` and that finds the notes relevant."""

    def respond(prompt: str, text: str) -> Any:
        if prompt == "grade_documents":
            return "yes"
        return answer if prompt == "generate" else happy_responder(prompt, text)

    return respond


@pytest.mark.parametrize("planner", ["auto", "rules"])
def test_a_text_with_no_answer_for_a_question_naming_a_tables_rows_goes_to_the_loop(store, planner):
    """planner auto: "Which has the smaller id, AC/DC or Aerosmith?" names two values of
    artists.csv but asks no computation the rules know, so they search the text; the text
    has no answer ("I don't know"), so the loop takes it on, from a new pass (nothing the
    text read is its evidence). Under ``rules`` the text's "I don't know" is the answer."""
    sql = "SELECT name, artistid FROM artists WHERE name IN ('AC/DC', 'Aerosmith')"
    ids = {"enough": "no", "tool": "query_table", "args": {"question": "their ids", "sql": sql}}
    llm = scripted(
        ids, {"enough": "yes", "answer": "AC/DC [S1]"}, checks=text_answers("I don't know")
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    question = "Which has the smaller id, AC/DC or Aerosmith?"
    final, lines = ask(services, question, planner=planner)
    nodes = [line["node"] for line in lines]
    assert nodes.index("generate") < nodes.index("choose_answer")
    if planner == "rules":
        assert "agent" not in nodes and final["answer"].startswith("I don't know")
        return
    assert nodes.index("choose_answer") < nodes.index("agent")
    first = next(c for c in llm.calls if c["prompt"] == "agent")
    assert "Sydney" not in first["text"]  # the text's documents are not the loop's evidence
    assert final["plan"]["tool"] == "loop" and final["answer"] == "AC/DC"


def test_the_loop_never_writes_the_rules_query_of_the_same_question_again(store):
    """planner auto: the rules' query found nothing; the loop's query of the same question
    (reworded) is that query again, a repeat: not run, no SQL written twice, the model answers."""
    asked = {"enough": "no", "tool": "query_table", "args": {"question": "albums, artistid 1?"}}
    llm = scripted(
        asked,
        {"enough": "yes", "answer": "I don't know"},
        sql="SELECT COUNT(*) FROM albums WHERE title = 'Big Ones'",  # not the 1 asked: fails
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, lines = ask(services, "How many albums have the artistid 1?", planner="auto")
    nodes = [line["node"] for line in lines]
    assert nodes.index("query_table") < nodes.index("agent")  # the rules first
    written = [c for c in llm.calls if c["prompt"] == "write_sql"]
    agent_calls = [c for c in llm.calls if c["prompt"] == "agent"]
    assert len(agent_calls) == 2  # the reworded query (a repeat), the answer
    assert len(written) <= 2  # the rules' attempts only, none by the loop's query_table
    assert "its result is above" in agent_calls[1]["text"]
    assert any("same arguments" in w for w in final["warnings"])


def test_the_auto_loop_opens_with_the_rules_query_and_no_model_call(store):
    """planner auto: the rules' query did not answer; the loop's first step is that query
    again (query_table of the question, no model call), so the model's first call already
    reads what it returned and why it was no answer."""
    llm = scripted(
        {"enough": "no", "tool": "column_values", "args": {"table": "artists", "column": "name"}},
        {"enough": "yes", "answer": "I don't know"},
        sql="SELECT COUNT(*) FROM albums WHERE title = 'Big Ones'",  # not the 1 asked: fails
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    question = "How many albums have the artistid 1?"
    final, lines = ask(services, question, planner="auto")
    agent_calls = [c for c in llm.calls if c["prompt"] == "agent"]
    assert len(agent_calls) == 2
    assert "query_table returned:\nThe query ran, but a check found" in agent_calls[0]["text"]
    steps = [line for line in lines if line["node"] == "agent"]
    assert f"query_table(question={question!r})" in str(steps[0])
    assert final["answer"].startswith("I don't know")


def test_once_the_tables_were_asked_the_question_a_query_brings_its_own_sql(store):
    """planner auto: the rules' query of the question was refused; the model's next
    ``query_table`` cannot be that query again (the schema asks for its SQL), and its own SQL,
    passing every check, ends the loop with the table's answer: no call to read it back."""
    own = "SELECT COUNT(*) FROM albums WHERE artistid = 1"
    question = "How many albums have the artistid 1?"
    llm = scripted(
        {"enough": "no", "tool": "query_table", "args": {"question": question, "sql": own}},
        {"enough": "yes", "answer": "7 [S1]"},  # never asked for
        sql="SELECT COUNT(*) FROM albums WHERE artistid = 2",  # the rules' query: refused
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, question, planner="auto")
    (step,) = [c for c in llm.calls if c["prompt"] == "agent"]
    schema = step["kwargs"]["extra_body"]["response_format"]["json_schema"]["schema"]
    (query,) = [
        c for c in schema["anyOf"] if c["properties"].get("tool") == {"const": "query_table"}
    ]
    args = query["properties"]["args"]
    assert args["required"] == ["question", "sql"] and args["properties"]["sql"]["minLength"] > 0
    assert "Write the SQL yourself" in step["text"]
    assert final["answer"] == "2" and final["sources"][0]["sql"] == own


def test_a_query_brings_no_sql_of_its_own_until_the_tables_were_asked_the_question(store):
    tools = toolbox(make_services(retriever=FakeRetriever(NOTES), tables=store), Context(), "q", [])
    for own_sql in (False, True):
        schema = step_schema(tools, own_sql=own_sql)
        for choice in schema["anyOf"]:
            args = choice["properties"].get("args", {"required": []})
            named = choice["properties"].get("tool", {}).get("const")
            assert ("sql" in args["required"]) is (own_sql and named == "query_table")
    question = "How many albums has AC/DC?"
    steps: list[AnyMessage] = [
        AIMessage(
            content="", tool_calls=[{"name": "search", "args": {"query": "AC/DC"}, "id": "a"}]
        )
    ]
    assert not asked_tables(steps, question)
    part = {"name": "query_table", "args": {"question": "Which artistid is Boston's band?"}}
    assert not asked_tables(
        [*steps, AIMessage(content="", tool_calls=[{**part, "id": "b"}])], question
    )
    whole = {"name": "query_table", "args": {"question": "albums AC/DC"}, "id": "c"}
    assert asked_tables([*steps, AIMessage(content="", tool_calls=[whole])], question)


def test_a_step_that_is_not_json_is_read_as_an_answer_and_checked_as_one():
    assert parse_step("1973 [S1]", "c").text == "1973 [S1]"
    step = parse_step('{"enough": "no", "tool": "search", "args": {"query": "x"}}', "c0")
    assert step.tool_calls[0]["name"] == "search" and step.tool_calls[0]["id"] == "c0"
    assert parse_step('{"enough": "yes", "answer": "42"}', "c").text == "42"


def test_every_tool_is_described_typed_and_closed_in_the_step_schema(store):
    services = make_services(retriever=FakeRetriever(NOTES), tables=store)
    services = type(services)(
        **{**services.__dict__, "documents": lambda: [], "document_chunks": lambda _: []}
    )
    tools = toolbox(services, Context(), "q", [])
    names = {t.name for t in tools}
    assert names == {
        "search",
        "read_around",
        "list_documents",
        "read_document",
        "query_table",
        "column_values",
        "web_search",
    }
    for tool in tools:
        assert "Not " in tool.description or "Only " in tool.description  # what it is NOT for
    schema = step_schema(tools)
    for choice in schema["anyOf"]:
        assert choice["additionalProperties"] is False
        if "args" in choice["properties"]:
            args = choice["properties"]["args"]
            assert args["additionalProperties"] is False and set(args["required"]) == set(
                args["properties"]
            )


def test_the_step_limit_holds_the_longest_loop():
    ctx = Context()
    assert step_limit(0, 1, ctx.max_tool_calls) >= 5 + loop_steps(ctx.max_tool_calls, 1)


def test_run_tools_answers_an_unknown_tool_with_the_tools_there_are(store):
    from nodes.tools.run_tools import run_tools
    from tests.fakes import as_state

    services = make_services(retriever=FakeRetriever(NOTES), tables=store)
    call = {"name": "delete_everything", "args": {}, "id": "c1", "type": "tool_call"}
    state = as_state({"question": "q", "loop_messages": [AIMessage(content="", tool_calls=[call])]})

    class Run:
        context = Context()
        stream_writer = None

    update = run_tools(state, Run(), services)  # type: ignore[arg-type]
    (reply,) = update["loop_messages"]
    assert isinstance(reply, ToolMessage) and reply.status == "error"
    assert "no tool 'delete_everything'" in reply.text and "query_table" in reply.text


def test_an_openai_compatible_server_gets_the_tools_natively_and_answers_with_tool_calls(store):
    """The loop over the OpenAI protocol: ``tools`` in the request, ``tool_calls`` in the reply,
    the tool's result sent back as a ``tool`` message with its call's id."""
    from crag_core.clients.llm import build_chat_model
    from tests.loopback import chat_completion, loopback, scripted_model

    checks = scripted_model("unused")
    sql = "SELECT COUNT(*) FROM albums WHERE artistid = 1"

    def handler(method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if "tools" not in body:
            return checks(method, path, body)
        if not any(m["role"] == "tool" for m in body["messages"]):
            call = {
                "id": "call_7",
                "type": "function",
                "function": {
                    "name": "query_table",
                    "arguments": json.dumps({"question": "records by artist one", "sql": sql}),
                },
            }
            reply = chat_completion("")
            reply["choices"][0]["message"] |= {"content": None, "tool_calls": [call]}
            reply["choices"][0]["finish_reason"] = "tool_calls"
            return 200, reply
        return 200, chat_completion("2 [S1]")

    with loopback(handler) as (url, requests):
        model = "openai-compatible:m"
        llm = build_chat_model(
            model, base_url=f"{url}/v1", temperature=0, max_tokens=64, timeout_s=10, max_retries=0
        )
        services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
        final, _ = ask(services, "How many albums has artist 1?", model=model, base_url=f"{url}/v1")
    assert final["answer"] == "2"
    assert final["sources"][0]["sql"] == sql
    tooled = [r["body"] for r in requests if "tools" in r["body"]]
    offered = {t["function"]["name"]: t["function"] for t in tooled[0]["tools"]}
    assert {"search", "query_table", "column_values"} <= set(offered)
    assert "Not for prose" in offered["query_table"]["description"]
    assert offered["query_table"]["parameters"]["required"] == ["question"]
    (sent,) = [m for m in tooled[1]["messages"] if m["role"] == "tool"]
    assert sent["tool_call_id"] == "call_7" and "[S1]" in sent["content"]
    assert "response_format" not in tooled[0]  # native calls: no schema-constrained reply


def _native_loop(store: Any, replies: list[Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Ask over a loopback OpenAI-compatible server whose tool-offering replies are ``replies``
    (a string: a plain answer; a dict: one tool call); the final state and the tooled bodies."""
    from crag_core.clients.llm import build_chat_model
    from tests.loopback import chat_completion, loopback, scripted_model

    checks = scripted_model("unused")
    queue = iter(replies)

    def handler(method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if "tools" not in body:
            return checks(method, path, body)
        step = next(queue)
        if isinstance(step, str):
            return 200, chat_completion(step)
        function = {"name": step["name"], "arguments": json.dumps(step["arguments"])}
        call = {"id": "c1", "type": "function", "function": function}
        reply = chat_completion("")
        reply["choices"][0]["message"] |= {"content": None, "tool_calls": [call]}
        reply["choices"][0]["finish_reason"] = "tool_calls"
        return 200, reply

    model = "openai-compatible:m"
    with loopback(handler) as (url, requests):
        llm = build_chat_model(
            model, base_url=f"{url}/v1", temperature=0, max_tokens=64, timeout_s=10, max_retries=0
        )
        services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
        final, _ = ask(services, "Where was AC/DC formed?", model=model, base_url=f"{url}/v1")
    return final, [r["body"] for r in requests if "tools" in r["body"]]


def test_a_native_answer_before_anything_was_read_is_sent_back_once_to_call_a_tool(store):
    """Native tool calls: a model that answers at once (from memory) is told to call a tool, as
    the JSON-schema way, which offers no answer before a document is read, requires."""
    search = {"name": "search", "arguments": {"query": "AC/DC formed"}}
    final, tooled = _native_loop(store, ["Melbourne", search, "Sydney [S1]"])
    assert final["answer"] == "Sydney"
    told = [m["content"] for m in tooled[1]["messages"] if m["role"] == "user"]
    assert READ_FIRST in told
    assert len(tooled) == 3


def test_a_native_model_that_answers_twice_unread_ends_in_i_do_not_know(store):
    final, tooled = _native_loop(store, ["Melbourne", "Melbourne, surely"])
    assert final["answer"].startswith("I don't know")
    assert "Melbourne" not in final["answer"]
    assert any("answered twice without calling a tool" in w for w in final["warnings"])
    assert not any("budget" in w for w in final["warnings"])  # no budget ended it
    assert len(tooled) == 2  # no third request: the loop ended


def test_the_auto_planner_keeps_an_answer_the_rules_table_query_gives(store):
    llm = scripted(sql="SELECT COUNT(*) FROM albums WHERE artistid = 1")  # no loop step
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, lines = ask(services, "How many albums have the artistid 1?", planner="auto")
    nodes = [line["node"] for line in lines]
    assert "query_table" in nodes and "agent" not in nodes
    assert final["answer"] == "2"


def test_the_token_budget_ends_the_loop_once_it_has_read_enough(store):
    long_notes = [doc(f"long__c{i:04d}", "Rock history. " * 120, 0.7) for i in range(3)]
    search = {"enough": "no", "tool": "search", "args": {"query": "rock"}}
    llm = scripted(search, {"enough": "yes", "answer": "I don't know"})
    services = make_services(llm=llm, retriever=FakeRetriever(long_notes), tables=store)
    final, _ = ask(services, "What is rock?", loop_tokens=300, max_tool_calls=6)
    assert any("tokens read of 300" in w for w in final["warnings"])
    first = [c for c in llm.calls if c["prompt"] == "agent"][1]["text"]
    assert len(first.split("returned:")[-1]) < 300 * 4 + 600  # cut to the budget


def test_the_deadline_ends_the_loop(store):
    # the first step starts the clock; by the second a millisecond has passed
    search = {"enough": "no", "tool": "search", "args": {"query": "AC/DC"}}
    llm = scripted(search, {"enough": "yes", "answer": "Sydney [S1]"})
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, "Where was AC/DC formed?", loop_seconds=0.001)
    assert final["answer"] == "Sydney"
    assert any("budget ended it: 0.001 s" in w for w in final["warnings"])


def test_a_repeated_call_ends_the_tool_use_and_the_model_answers(store):
    search = {"enough": "no", "tool": "search", "args": {"query": "AC/DC"}}
    llm = scripted(search, search, {"enough": "yes", "answer": "Sydney [S1]"})
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, "Where was AC/DC formed?", max_tool_calls=6)
    assert final["answer"] == "Sydney"
    agent_calls = [c for c in llm.calls if c["prompt"] == "agent"]
    assert len(agent_calls) == 3  # the search, its repeat, the answer: no fourth round
    schema = agent_calls[-1]["kwargs"]["extra_body"]["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"enough", "answer"}  # no tool offered
    assert "its result is above" in agent_calls[-1]["text"]
    assert any("same arguments" in w for w in final["warnings"])


@pytest.mark.parametrize(
    ("earlier", "again", "repeated"),
    [
        ({"query": "AC/DC"}, {"query": "  ac/dc "}, True),  # as the tool reads it
        ({"query": "AC/DC"}, {"query": "AC/DC formed"}, False),
    ],
)
def test_a_call_repeats_one_the_tool_would_read_the_same(earlier, again, repeated):
    made = [AIMessage(content="", tool_calls=[{"name": "search", "args": earlier, "id": "c0"}])]
    call = {"name": "search", "args": again, "id": "c1", "type": "tool_call"}
    assert repeats(cast(Any, call), made, "Where was AC/DC formed?") is repeated


def test_a_query_of_the_question_reworded_repeats_the_query_of_the_question():
    """query_table asks a restatement of the user's question as that question: same call."""
    question = "How many songs are on Tangents?"
    asked = {"name": "query_table", "args": {"question": question}, "id": "c0"}
    made = [AIMessage(content="", tool_calls=[asked])]
    for again, repeated in [("How many songs are on Tangents? ", True), ("songs Tangents", True)]:
        call = {"name": "query_table", "args": {"question": again}, "id": "c1"}
        assert repeats(cast(Any, call), made, question) is repeated
    other = {"name": "query_table", "args": {"question": "How many songs are on Pulse?"}}
    assert not repeats(cast(Any, {**other, "id": "c2"}), made, question)


def test_a_query_whose_sql_the_loop_ran_already_repeats_that_query(store):
    """The model, asked for its own SQL, may copy the query a check refused: run again, it
    would read the same, so the call is a repeat, whether that query read rows or failed."""
    services = make_services(retriever=FakeRetriever(NOTES), tables=store)
    question = "How many albums are there of the artist with artistid 1?"
    (query,) = [t for t in toolbox(services, Context(), question, []) if t.name == "query_table"]
    earlier: list[AnyMessage] = []
    for i, sql in enumerate(
        ["SELECT COUNT(*) FROM albums WHERE artistid = 1", "SELECT nope FROM x"]
    ):
        call = {"name": "query_table", "args": {"question": "albums", "sql": sql}, "id": f"c{i}"}
        earlier += [
            AIMessage(content="", tool_calls=[call]),
            query.invoke({**call, "type": "tool_call"}),
        ]
    assert "failed" in earlier[-1].text
    for sql, repeated in [
        (" select count(*) from albums  where artistid = 1;", True),  # read rows
        ("SELECT nope FROM x", True),  # failed
        ("SELECT COUNT(*) FROM albums", False),
    ]:
        call = {"name": "query_table", "args": {"question": question, "sql": sql}, "id": "c9"}
        assert repeats(cast(Any, call), earlier, question) is repeated, sql


def test_no_round_begins_that_would_end_past_the_deadline():
    """One round took 40 s: at 40 s of 60 another would end past the deadline, at 40 of 90 not."""
    call = {"name": "search", "args": {"query": "AC/DC"}, "id": "call_0", "type": "tool_call"}
    steps: list[AnyMessage] = [
        AIMessage(content="", tool_calls=[call]),
        ToolMessage("Nothing found.", tool_call_id="call_0"),
    ]
    started = time.time() - 40
    assert out_of_budget(steps, [], started, Context(loop_seconds=60), "q").startswith("60 s")
    assert out_of_budget(steps, [], started, Context(loop_seconds=90), "q") == ""


def test_no_round_begins_that_would_end_past_the_questions_deadline():
    """A part's loop shares the question's answer_seconds: 150 s after the question was asked
    (its other parts took 110), a 40 s round would end past 180 even with loop_seconds left."""
    call = {"name": "search", "args": {"query": "AC/DC"}, "id": "call_0", "type": "tool_call"}
    steps: list[AnyMessage] = [
        AIMessage(content="", tool_calls=[call]),
        ToolMessage("Nothing found.", tool_call_id="call_0"),
    ]
    started = time.time() - 40
    ctx = Context(loop_seconds=90, answer_seconds=180)
    assert out_of_budget(steps, [], started, ctx, "q", since_asked=150).startswith(
        "the question's 180 s"
    )
    assert out_of_budget(steps, [], started, ctx, "q", since_asked=100) == ""
    assert out_of_budget(steps, [], started, ctx, "q") == ""  # a pass run alone: no turn


def test_read_around_returns_the_stored_neighbours_of_a_passage_read(store):
    pieces = [
        doc(f"band__c{i:04d}", text, 0.7)
        for i, text in enumerate(["AC/DC formed in 1973.", "They came from Sydney.", "Later…"])
    ]
    for i, piece in enumerate(pieces):
        piece.metadata |= {"chunk": i, "chunks": 3, "doc_id": "band"}
        piece.id = piece.metadata["id"]
    services = make_services(retriever=FakeRetriever(pieces), tables=store)
    box = {t.name: t for t in toolbox(services, Context(), "q", [pieces[1]])}
    reply = box["read_around"].invoke(
        {"name": "read_around", "args": {"key": "S1"}, "id": "c", "type": "tool_call"}
    )
    assert [d.id for d in reply.artifact] == ["band__c0000", "band__c0002"]


def test_the_loops_search_keeps_what_the_retrieve_node_keeps(store):
    """One floor for both: the cosine floor, the top keyword hit exempt down to its own."""
    from langchain_core.documents import Document

    from nodes.tools.toolbox import Toolbox

    def doc(id_: str, score: float, keyword_rank: int | None = None) -> Document:
        meta = {"id": id_, "source": f"{id_}.md", "score": score, "keyword_rank": keyword_rank}
        return Document(page_content=f"{id_} text", id=id_, metadata=meta)

    hits = [doc("close", 0.8), doc("keyword", 0.25, keyword_rank=1), doc("far", 0.05)]
    ctx = Context(min_similarity=0.3, keyword_min_similarity=0.2)
    services = make_services(retriever=FakeRetriever(hits), tables=store)
    said, found = Toolbox(services, ctx, "q", []).search("anything")
    assert said == "2 passages found." and [d.id for d in found] == ["close", "keyword"]
    said, found = Toolbox(services, ctx, "q", found).search("anything")
    assert said == "Nothing new found (none close enough to the query)." and found == []
    everything = Toolbox(services, ctx, "q", hits).search("anything")
    assert everything == ("Nothing new found (only passages already read).", [])


def test_a_result_a_check_refuses_for_good_is_seen_but_cannot_be_cited(store):
    """The albums' ArtistId (1) for "Who made …?" is a key of artists (``FOR_GOOD``): the
    model reads the rows and why, but no document comes back for an answer to cite, and the
    same SQL again is a repeat. A result a feedback check finds fault with stays citable."""
    services = make_services(retriever=FakeRetriever(NOTES), tables=store)
    question = "Who made the album Let There Be Rock?"
    (query,) = [t for t in toolbox(services, Context(), question, []) if t.name == "query_table"]
    sql = "SELECT artistid FROM albums WHERE title = 'Let There Be Rock'"
    call = {"name": "query_table", "args": {"question": question, "sql": sql}, "id": "c0"}
    reply = query.invoke({**call, "type": "tool_call"})
    assert "refused its answer for good" in reply.text and "a key of artists" in reply.text
    assert "1" in reply.text  # the rows are seen
    assert not reply.artifact
    again = {**call, "id": "c1"}
    assert repeats(cast(Any, again), [AIMessage(content="", tool_calls=[call]), reply], question)
    titles = "SELECT title FROM albums WHERE title = 'Big Ones'"  # a value the question lacks
    other = {"name": "query_table", "args": {"question": question, "sql": titles}, "id": "c2"}
    found = query.invoke({**other, "type": "tool_call"})
    assert found.text.startswith("The query ran, but a check found") and found.artifact


def test_under_auto_a_described_question_no_table_answered_is_asked_in_steps_first(store):
    """planner auto: the rules' query of a described question found nothing; the loop does not
    take on the whole question (it would spend the time its steps need): its steps come next,
    each choosing its own tool, the loop among them."""
    llm = scripted(
        *[{"enough": "yes", "answer": "I don't know"}] * 4,
        sql="SELECT COUNT(*) FROM albums WHERE city = 'Sydney'",  # no such column: no answer
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    question = "How many albums are by the artist that was formed in Sydney?"
    final, lines = ask(services, question, planner="auto")
    nodes = [(line["node"], line.get("part")) for line in lines]
    assert ("query_table", None) in nodes and ("decompose", None) in nodes
    assert ("agent", None) not in nodes  # the whole question never went to the loop
    assert final["subquestions"] == [
        "Which artist was formed in Sydney?",
        "How many albums are by #1?",
    ]
    # a plain question no table answered still goes to the loop under auto
    final, lines = ask(services, "How many albums have the artistid 1?", planner="auto")
    assert "agent" in [line["node"] for line in lines]


def test_under_auto_the_loop_takes_only_what_the_rules_would_not_answer():
    auto, rules = Context(planner="auto"), Context(planner="rules")
    plain = {"question": "How many albums have the artistid 1?"}
    assert loop_takes_over(plain, auto) and not loop_takes_over(plain, rules)
    assert not loop_takes_over({**plain, "nested": True}, auto)  # its steps come next
    look_up = {"question": "What is the capital of Japan?", "part_index": 1}
    assert not loop_takes_over(look_up, auto)  # a step the rules search the text for
    counting = {"question": "How many albums are by AC/DC?", "part_index": 1}
    assert loop_takes_over(counting, auto)


def test_keys_of_another_table_returned_as_the_answer_cannot_be_cited(tmp_path):
    """ "Which players won both …?" answered with ``player_id`` (people's keys, read off the
    data) is refused for good in the loop as the rules refuse it: the rows are seen, no
    document comes back to cite, and the model must return the names."""
    people: list[list[Any]] = [
        ["player_id", "first_name", "last_name"],
        ["altuvjo01", "Jose", "Altuve"],
        ["crawfbr01", "Brandon", "Crawford"],
    ]
    awards: list[list[Any]] = [
        ["player_id", "award", "year"],
        ["altuvjo01", "Gold Glove", 2015],
        ["altuvjo01", "Silver Slugger", 2015],
        ["crawfbr01", "Gold Glove", 2015],
    ]
    store = make_table_store(tmp_path / "b.sqlite3", {"people.csv": people, "awards.csv": awards})
    services = make_services(retriever=FakeRetriever(NOTES), tables=store)
    question = "Which players won both a Gold Glove and a Silver Slugger in 2015?"
    (query,) = [t for t in toolbox(services, Context(), question, []) if t.name == "query_table"]
    keys = (
        "SELECT player_id FROM awards WHERE award IN ('Gold Glove', 'Silver Slugger') "
        "AND year = 2015 GROUP BY player_id HAVING COUNT(DISTINCT award) = 2"
    )
    call = {"name": "query_table", "args": {"question": question, "sql": keys}, "id": "c0"}
    reply = query.invoke({**call, "type": "tool_call"})
    assert "refused its answer for good" in reply.text and "altuvjo01" in reply.text
    assert not reply.artifact
    names = (
        "SELECT p.first_name, p.last_name FROM awards AS a JOIN people AS p "
        "ON a.player_id = p.player_id WHERE a.award IN ('Gold Glove', 'Silver Slugger') "
        "AND a.year = 2015 GROUP BY a.player_id HAVING COUNT(DISTINCT a.award) = 2"
    )
    found = query.invoke(
        {**call, "args": {"question": question, "sql": names}, "type": "tool_call"}
    )
    assert "Altuve" in found.artifact[0].page_content


def test_an_answer_resting_only_on_a_result_the_checks_found_fault_with_is_not_given(store):
    question = "How many albums has Aerosmith made?"
    llm = scripted(
        {"enough": "no", "tool": "query_table", "args": {"question": question}},
        {"enough": "yes", "answer": "2 [S1]"},
        sql="SELECT COUNT(*) FROM albums WHERE artistid = 1",  # AC/DC's, not Aerosmith's
    )
    services = make_services(llm=llm, retriever=FakeRetriever(NOTES), tables=store)
    final, _ = ask(services, question, max_retries=0)
    assert final["answer"] == "I don't know." and final["confidence"] is None
    (said,) = [w for w in final["warnings"] if "rests only on table results" in w]
    assert said.startswith("The answer '2' is not given") and "Aerosmith" in said
