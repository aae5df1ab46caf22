"""The compiled graph: topology, routers, whole runs with fakes, and termination."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, cast

import pytest
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.runtime import Runtime

from crag.run import RunResult, run_question
from crag_core.schema.context import Context
from crag_core.schema.state import PassState, SearchPlan, TablePlan
from graph import factory as graph_services
from graph.graph import (
    DECOMPOSITION_STEPS,
    build_graph,
    build_part_graph,
    build_pass_graph,
    graph,
    loop_steps,
    route_after_grading,
    route_after_hallucination,
    route_after_relevance,
    step_limit,
    steps_per_pass,
)
from tests.fakes import (
    KB_PATH,
    FakeRetriever,
    FakeWebSearch,
    doc,
    happy_responder,
    make_llm,
    make_services,
    make_table_store,
)

NODES = {
    "contextualize_question",
    "analyze_query",
    "respond_small_talk",
    "answer_from_history",
    "answer_question",
    "answer_part",
    "combine_parts",
    "decompose",
    "finalize",
}
"""The turn's nodes; a question's pass is one of them (``answer_question``, ``answer_part``)."""

PASS_NODES = {
    "check_cache",
    "choose_tool",
    "agent",
    "run_tools",
    "query_table",
    "query_catalog",
    "read_document",
    "rewrite_query",
    "retrieve",
    "grade_documents",
    "web_search",
    "refine_knowledge",
    "generate",
    "validate_citations",
    "check_hallucination",
    "check_relevance",
    "increment_retry",
    "choose_answer",
}

PDFS_ONLY = SearchPlan(tool="search", reason="it names the PDFs", where="type=pdf")
TABLE_PLAN = TablePlan(tool="table", reason="it names a column", tables=[])

OUTPUT_KEYS = {
    "messages",
    "route",
    "plan",
    "sql",
    "answer_kind",
    "tool_signals",
    "cost",
    "parts",
    "standalone_question",
    "answer",
    "sources",
    "confidence",
    "warnings",
    "web_search_used",
    "retry_count",
    "prompt_versions",
}


def edges(compiled: Any = graph) -> set[tuple[str, str, bool]]:
    return {(e.source, e.target, e.conditional) for e in compiled.get_graph().edges}


def test_topology_matches_the_crag_diagram():
    assert set(graph.get_graph().nodes) == NODES | {"__start__", "__end__"}
    assert edges() == {
        ("__start__", "contextualize_question", False),
        ("contextualize_question", "analyze_query", False),
        ("analyze_query", "respond_small_talk", True),
        ("analyze_query", "answer_question", True),
        ("analyze_query", "answer_part", True),
        ("analyze_query", "answer_from_history", True),
        ("answer_from_history", "finalize", False),
        ("answer_part", "answer_part", True),
        ("answer_part", "combine_parts", True),
        ("combine_parts", "finalize", False),
        ("respond_small_talk", "finalize", False),
        ("answer_question", "finalize", True),
        ("answer_question", "decompose", True),
        ("decompose", "answer_part", True),
        ("decompose", "finalize", True),
        ("finalize", "__end__", False),
    }
    question_pass = build_pass_graph()
    assert set(question_pass.get_graph().nodes) == PASS_NODES | {"__start__", "__end__"}
    assert edges(question_pass) == {
        ("__start__", "check_cache", False),
        ("check_cache", "choose_tool", True),
        ("check_cache", "__end__", True),
        ("choose_tool", "query_table", True),
        ("choose_tool", "retrieve", True),
        ("choose_tool", "query_catalog", True),
        ("query_catalog", "__end__", False),
        ("choose_tool", "read_document", True),
        ("read_document", "__end__", False),
        ("query_table", "__end__", True),
        ("query_table", "retrieve", True),
        ("choose_tool", "agent", True),
        ("query_table", "agent", True),
        ("agent", "run_tools", True),
        ("agent", "agent", True),
        ("agent", "__end__", True),
        ("agent", "validate_citations", True),
        ("run_tools", "agent", False),
        ("validate_citations", "agent", True),
        ("rewrite_query", "retrieve", False),
        ("retrieve", "grade_documents", False),
        ("grade_documents", "generate", True),
        ("grade_documents", "web_search", True),
        ("web_search", "refine_knowledge", False),
        ("refine_knowledge", "grade_documents", False),
        ("generate", "validate_citations", False),
        ("validate_citations", "generate", True),
        ("validate_citations", "check_hallucination", True),
        ("validate_citations", "choose_answer", True),
        ("check_hallucination", "check_relevance", True),
        ("check_hallucination", "increment_retry", True),
        ("check_hallucination", "choose_answer", True),
        ("check_relevance", "choose_answer", True),
        ("check_relevance", "increment_retry", True),
        ("increment_retry", "rewrite_query", False),
        ("choose_answer", "__end__", True),
        ("choose_answer", "agent", True),
    }
    # a part's pass is the same pass, ending in collect_part instead
    part_pass = {
        (a, "collect_part" if b == "__end__" else b, c) for a, b, c in edges(question_pass)
    } | {("collect_part", "__end__", False)}
    assert edges(build_part_graph()) == part_pass


def test_exported_graph_has_no_checkpointer_and_narrow_schemas():
    assert graph.checkpointer is None
    assert graph.name == "crag"
    assert set(graph.get_input_jsonschema()["properties"]) == {"question", "messages"}
    assert set(graph.get_output_jsonschema()["properties"]) == OUTPUT_KEYS
    ctx_schema = (graph.get_context_jsonschema() or {})["properties"]
    assert all(p.get("description") for p in ctx_schema.values())


def rt(**ctx: Any) -> Runtime[Context]:
    return Runtime(context=Context(**ctx))


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"retrieval_verdict": "correct"}, "generate"),
        ({"retrieval_verdict": "ambiguous"}, "web_search"),
        ({"retrieval_verdict": "incorrect"}, "web_search"),
        ({"retrieval_verdict": "incorrect", "web_searched": True}, "generate"),
        ({"retrieval_verdict": "incorrect", "plan": PDFS_ONLY}, "generate"),  # scoped: no web
        ({"retrieval_verdict": "correct", "retry_count": 1}, "web_search"),
        (
            {"retrieval_verdict": "correct", "retry_count": 1, "web_search_used": True},
            "generate",
        ),
    ],
)
def test_route_after_grading(state, expected):
    assert route_after_grading(state) == expected


def test_route_after_hallucination():
    assert route_after_hallucination({"grounded": "yes"}, rt()) == "check_relevance"
    assert route_after_hallucination({"grounded": "unknown"}, rt()) == "check_relevance"
    two = rt(max_retries=2)
    assert route_after_hallucination({"grounded": "no", "retry_count": 1}, two) == "increment_retry"
    assert route_after_hallucination({"grounded": "no", "retry_count": 2}, two) == "choose_answer"
    assert route_after_hallucination({"grounded": "no"}, rt(max_retries=0)) == "choose_answer"
    fallback = route_after_hallucination({"grounded": "no", "plan": TABLE_PLAN}, two)
    assert fallback == "choose_answer"  # a table question's text fallback: one pass


def test_route_after_relevance():
    assert route_after_relevance({"answers_question": "yes"}, rt()) == "choose_answer"
    assert route_after_relevance({"answers_question": "unknown"}, rt()) == "choose_answer"
    assert route_after_relevance({"answers_question": "no"}, rt()) == "increment_retry"
    out_of_retries: PassState = {"answers_question": "no", "retry_count": 2}
    assert route_after_relevance(out_of_retries, rt()) == "choose_answer"


def test_happy_path_answers_from_the_knowledge_base(fake_services):
    fake_services()
    result = run_question("Which team won Super Bowl 50?", Context(answer_threshold=0.5))
    assert result.path == KB_PATH
    out = result.to_json()
    assert out["answer"] == "The Denver Broncos won, 24–10."
    assert [s["id"] for s in out["sources"]] == ["sb50__c0000"]
    assert out["retries"] == 0 and out["web_search_used"] is False and out["warnings"] == []
    assert out["prompt_versions"] == {
        "evidence": "v1",
        "grade_documents": "v2",
        "generate": "v5",
        "check_hallucination": "v2",
        "check_relevance": "v2",
    }


def test_each_node_describes_its_own_outcome_on_the_custom_stream(fake_services):
    services = fake_services()
    crag = build_graph(services=lambda _: services)
    events = [
        chunk
        for _, mode, chunk in crag.stream(
            {"question": "Which team won Super Bowl 50?"},
            context=Context(answer_threshold=0.5),
            stream_mode=["custom", "updates"],
            subgraphs=True,  # the question's pass is a subgraph
        )
        if mode == "custom"
    ]
    lines = {e["node"]: e["summary"] for e in cast(list[dict[str, str]], events)}
    assert lines["retrieve"] == "2 documents"
    assert lines["grade_documents"].startswith("correct (model score ")
    assert lines["generate"] == "The Denver Broncos won, 24–10. [S1]"
    assert lines["check_hallucination"] == "grounded: yes"
    assert lines["check_relevance"] == "answers the question: yes"
    # run_question hands each step its line; the CLI prints it without knowing the node.
    result = run_question("Which team won Super Bowl 50?", Context(), graph=crag)
    assert [s.summary for s in result.steps if s.node == "retrieve"] == ["2 documents"]


def test_nothing_relevant_anywhere_is_an_answer_of_its_own(fake_services):
    llm = make_llm(lambda p, t: "no")
    fake_services(llm=llm)
    result = run_question("Which team won Super Bowl 50?", Context(max_retries=2))
    assert result.path == [
        "contextualize_question",
        "analyze_query",
        "check_cache",
        "choose_tool",
        "retrieve",
        "grade_documents",
        "web_search",
        "refine_knowledge",
        "grade_documents",
        "generate",
        "validate_citations",
        "choose_answer",
        "finalize",
    ]
    assert result.state["answer"] == "I don't know." and result.state["sources"] == []
    assert llm.prompts_called() == ["grade_documents", "grade_documents"]


def test_an_empty_collection_says_so_instead_of_i_dont_know(fake_services):
    empty = FakeRetriever([])
    empty.unfilled_reason = "Collection 'crag' is empty."
    fake_services(llm=make_llm(lambda p, t: "no"), retriever=empty, web=FakeWebSearch([]))
    result = run_question("Which team won Super Bowl 50?", Context())
    assert result.state["answer"].startswith("Collection 'crag' is empty. Add documents")
    assert "crag ingest PATH" in result.state["answer"]
    assert any("is empty" in w for w in result.state["warnings"])

    filled_but_silent = FakeRetriever([])  # found nothing, but there is something to search
    fake_services(llm=make_llm(lambda p, t: "no"), retriever=filled_but_silent)
    assert run_question("Which team won Super Bowl 50?", Context()).state["answer"] == (
        "I don't know."
    )


def test_incorrect_retrieval_falls_back_to_web(fake_services):
    def responder(prompt: str, text: str) -> Any:
        if prompt == "generate":
            return "Leonardo da Vinci [S1]"
        if prompt == "grade_documents":
            return "yes" if "Leonardo" in text else "no"
        return happy_responder(prompt, text)

    fake_services(llm=make_llm(responder), retriever=FakeRetriever([]))
    result = run_question("Who painted the Mona Lisa?", Context())
    assert "web_search" in result.path
    assert result.state["answer"] == "Leonardo da Vinci"
    assert result.state["sources"][0]["source"] == "https://en.wikipedia.org/wiki/Mona_Lisa"
    assert result.state["web_search_used"] is True


def test_output_of_invoke_is_the_output_schema(fake_services):
    fake_services()
    out = graph.invoke({"question": "Which team won Super Bowl 50?"})
    assert set(out) == OUTPUT_KEYS


def always_no(prompt: str, text: str) -> Any:
    """The evidence looks right, but every answer fails its checks."""
    return {
        "rewrite_query": "some query",
        "grade_documents": "yes",
        "generate": "The Broncos did something unverifiable.",
        "check_hallucination": "no",
        "check_relevance": "no",
    }[prompt]


@pytest.mark.parametrize("max_retries", [0, 1, 2, 5])
def test_every_path_terminates_when_every_grader_says_no(fake_services, max_retries):
    fake_services(llm=make_llm(always_no))
    result = run_question("Which team won Super Bowl 50?", Context(max_retries=max_retries))
    assert result.path[-1] == "finalize"
    assert result.path.count("increment_retry") == max_retries
    assert result.path.count("rewrite_query") == max_retries  # the first pass needs none
    assert result.state["retry_count"] == max_retries
    assert any("No answer passed both checks" in w for w in result.state["warnings"])
    assert result.state["answer"] == "I don't know."  # an unverified answer is not given


def longest_pass(prompt: str, text: str) -> Any:
    """Every branch that lengthens a pass: web search and a second evaluation, a citation
    correction, both checks."""
    return {
        "rewrite_query": "some query",
        "grade_documents": "yes" if "Leonardo" in text else "no",
        "generate": "Leonardo painted it [S9]",
        "check_hallucination": "yes",
        "check_relevance": "no",
        "write_sql": "SELECT painter FROM nowhere",  # fails twice: the text is searched
    }[prompt]


def longest_tables(tmp_path: Any) -> Any:
    """Tables inside pages that make a question a table question that falls back to the text."""
    return make_table_store(
        tmp_path / "tables.sqlite3",
        {
            "team.html": [["Team", "Won"], ["x", 1]],
            "louvre.html": [["Portrait", "Wall"], ["y", 2]],
        },
    )


@pytest.mark.parametrize("max_retries", [0, 2, 4])
def test_the_longest_run_fits_its_step_limit_even_inside_another_runnable(
    fake_services, max_retries, tmp_path
):
    # A runnable parent hands the graph LangChain's default recursion limit of 25.
    fake_services(llm=make_llm(longest_pass))
    ctx = Context(max_retries=max_retries, answer_threshold=0.5)
    result = RunnableLambda[str, RunResult](lambda q: run_question(q, ctx)).invoke(
        "Which team won?"
    )
    limit = step_limit(max_retries, ctx.max_citation_corrections, max_tool_calls=1)
    # + the input step + a described question's steps = the limit (next test)
    assert len(result.path) == limit - 1 - DECOMPOSITION_STEPS
    assert result.path.count("validate_citations") == 2 * (max_retries + 1)
    assert result.path.count("web_search") == max_retries + 1
    assert result.path[3:5] == ["choose_tool", "retrieve"]
    assert result.path[-1] == "finalize"


@pytest.mark.parametrize(("max_tool_calls", "corrections"), [(2, 0), (4, 1), (8, 2)])
def test_the_longest_loop_fits_its_step_limit_exactly(
    fake_services, tmp_path, max_tool_calls, corrections
):
    """planner auto: the rules' table query fails, then the loop (opened by that query again)
    spends its every tool call and citation correction and passes both checks: the longest
    loop there is, within the limit (exactly the limit's steps but the decomposition's where
    the loop is longer than a pass)."""
    answers = iter([*(["the Denver Broncos [S99]"] * corrections), "the Denver Broncos [S2]"])

    def responder(prompt: str, text: str) -> Any:
        if prompt == "agent":
            calls = text.count(" returned:\n")
            if calls < max_tool_calls:
                step = {"enough": "no", "tool": "search", "args": {"query": f"team {calls}"}}
                return json.dumps(step)
            return json.dumps({"enough": "yes", "answer": next(answers)})
        if prompt in ("check_relevance", "check_support"):
            return "yes"
        return longest_pass(prompt, text)

    fake_services(llm=make_llm(responder), tables=longest_tables(tmp_path))
    ctx = Context(
        planner="auto",
        max_retries=0,
        max_tool_calls=max_tool_calls,
        max_citation_corrections=corrections,
        min_confidence=0.0,
    )
    result = RunnableLambda[str, RunResult](lambda q: run_question(q, ctx)).invoke(
        "Which team won most?"
    )
    limit = step_limit(0, corrections, max_tool_calls)
    assert result.path[3:6] == ["choose_tool", "query_table", "agent"], result.path
    assert result.path.count("run_tools") == max_tool_calls
    assert result.path.count("validate_citations") == corrections + 1
    assert result.path[-3:] == ["check_relevance", "choose_answer", "finalize"]
    # the JSON-schema way offers no answer before a document is read, so the step a native
    # model's unread answer takes (agent again, once) is not in this path
    unread = 1
    assert len(result.path) == 4 + loop_steps(max_tool_calls, corrections) - unread
    assert len(result.path) <= limit - 1 - DECOMPOSITION_STEPS - unread
    if loop_steps(max_tool_calls, corrections) > steps_per_pass(corrections):
        assert len(result.path) == limit - 1 - DECOMPOSITION_STEPS - unread


def test_a_table_question_that_falls_back_searches_the_text_once(fake_services, tmp_path):
    fake_services(llm=make_llm(longest_pass), tables=longest_tables(tmp_path))
    result = run_question("Which team won most?", Context(max_retries=2, answer_threshold=0.5))
    assert result.path[3:6] == ["choose_tool", "query_table", "retrieve"]
    assert result.path.count("web_search") == 1 and "increment_retry" not in result.path


@pytest.mark.parametrize("max_retries", [0, 2])
def test_a_described_question_asked_whole_then_in_steps_fits_exactly(
    fake_services, max_retries, tmp_path
):
    def responder(prompt: str, text: str) -> Any:
        asked = [line for line in text.splitlines() if line.startswith("Question:")]
        first_step = bool(asked) and "Which portrait" in asked[-1]
        if prompt == "check_relevance":  # only the first step is ever answered
            return "yes" if first_step else "no"
        return longest_pass(prompt, text)

    fake_services(llm=make_llm(responder))
    ctx = Context(max_retries=max_retries, answer_threshold=0.5, min_confidence=0.0)
    question = "Who painted the portrait that hangs in the Louvre?"
    result = RunnableLambda[str, RunResult](lambda q: run_question(q, ctx)).invoke(question)
    limit = step_limit(max_retries, ctx.max_citation_corrections, max_tool_calls=1)
    steps = [p for p in result.path if not p.startswith("part ")]  # a part's pass is one step
    assert steps.count("answer_part") == 2 and "decompose" in steps
    assert len(steps) == limit - 1  # the longest run there is: the bound is exact


def test_the_exported_graph_allows_the_longest_accepted_run():
    assert graph.config and graph.config["recursion_limit"] == step_limit(10) == 196


def test_relevance_failures_also_terminate(fake_services):
    def grounded_but_off_topic(prompt: str, text: str) -> Any:
        if prompt == "check_relevance":
            return "no"
        return happy_responder(prompt, text)

    fake_services(llm=make_llm(grounded_but_off_topic))
    ctx = Context(max_retries=2, answer_threshold=0.5)
    result = run_question("Which team won Super Bowl 50?", ctx)
    assert result.path.count("check_relevance") == 3
    assert result.state["retry_count"] == 2
    assert "web_search" in result.path  # the first retry brings in new knowledge


class Clock:
    """The wall clock the question's deadline reads, moved by the fake model's work."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    import importlib

    tick = Clock()
    for module in ("nodes.shared.common", "nodes.turn.contextualize_question"):
        monkeypatch.setattr(importlib.import_module(module), "time", tick)
    return tick


def slow(clock: Clock, seconds: float) -> Any:
    """``always_no`` whose every generation takes ``seconds``."""

    def respond(prompt: str, text: str) -> Any:
        if prompt == "generate":
            clock.now += seconds
        return always_no(prompt, text)

    return respond


@pytest.mark.parametrize(("answer_seconds", "retries"), [(180, 0), (250, 1), (1_000, 3)])
def test_no_retry_begins_that_would_end_past_answer_seconds(
    fake_services, clock, answer_seconds, retries
):
    """Passes of 100 s: a retry is begun only when one more would end within the deadline."""
    fake_services(llm=make_llm(slow(clock, 100)))
    ctx = Context(max_retries=3, max_citation_corrections=0, answer_seconds=answer_seconds)
    result = run_question("Which team won Super Bowl 50?", ctx)
    assert result.path.count("increment_retry") == retries
    assert result.state["answer"] == "I don't know."
    late = [w for w in result.state["warnings"] if "no time for another" in w]
    assert bool(late) == (retries < 3)


def test_no_answer_is_sent_back_for_its_citations_past_answer_seconds(fake_services, clock):
    fake_services(llm=make_llm(slow(clock, 200)))
    ctx = Context(max_retries=0, max_citation_corrections=2, answer_seconds=180)
    result = run_question("Which team won Super Bowl 50?", ctx)
    assert result.path.count("generate") == 1  # cited nothing, but the deadline had passed
    assert "The answer cites none of its documents." in result.state["warnings"]
    clock.now = 1_000.0
    result = run_question("Which team won Super Bowl 50?", replace(ctx, answer_seconds=1_000))
    assert result.path.count("generate") == 3  # in time: sent back twice


def test_retry_changes_the_prompt(fake_services):
    llm = make_llm(always_no)
    fake_services(llm=llm)
    run_question("Which team won Super Bowl 50?", Context(max_retries=1))
    rewrites = [c["text"] for c in llm.calls if c["prompt"] == "rewrite_query"]
    assert len(rewrites) == 1  # the first pass searched with the question itself
    assert "do not support" in rewrites[0]  # the check's feedback reaches the retry


def test_a_retry_grades_chunks_it_has_not_seen(fake_services):
    # The knowledge base never holds the answer, the web seems to, and every answer fails.
    docs = [doc(f"c{i}", f"passage-{i:02d}", 0.9 - i / 100) for i in range(12)]
    llm = make_llm(longest_pass)
    fake_services(llm=llm, retriever=FakeRetriever(docs))
    ctx = Context(max_retries=2, top_k=4, answer_threshold=0.5)
    run_question("Which team won Super Bowl 50?", ctx)
    graded = [
        c["messages"][0]
        for c in llm.calls
        if c["prompt"] == "grade_documents" and "Leonardo" not in c["text"]
    ]
    assert len(graded) == 3  # one evaluation of the knowledge base per pass
    seen = [{i for i in range(12) if f"passage-{i:02d}" in text} for text in graded]
    assert all(len(s) == 4 for s in seen) and set().union(*seen) == set(range(12))


def test_build_graph_accepts_a_checkpointer(fake_services):
    from langgraph.checkpoint.memory import InMemorySaver

    fake_services()
    threaded = build_graph(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t1"}}
    out = threaded.invoke({"question": "Which team won Super Bowl 50?"}, config=config)
    assert out["answer"]
    assert threaded.get_state(config).values["question"] == "Which team won Super Bowl 50?"


def test_graders_and_checks_use_the_grader_model_and_generate_the_main_one():
    writer, grader = make_llm(happy_responder), make_llm(happy_responder)
    services = replace(make_services(llm=writer), grader=grader)
    app = build_graph(services=lambda _: services)
    out = app.invoke(
        {"question": "Which team won Super Bowl 50?"}, context=Context(answer_threshold=0.5)
    )
    assert out["answer"] == "The Denver Broncos won, 24–10."
    assert writer.prompts_called() == ["generate"]
    assert grader.prompts_called() == ["grade_documents", "check_hallucination", "check_relevance"]


def test_default_services_build_a_grader_only_when_one_is_configured(monkeypatch):
    built: list[str] = []

    def build(model: str, **_: Any) -> Any:
        built.append(model)
        return make_llm(happy_responder)

    monkeypatch.setattr(graph_services, "build_chat_model", build)
    monkeypatch.setattr(graph_services, "_cache", {})
    plain = graph_services.default_services(Context(model="openai-compatible:a", web_search="off"))
    assert plain.grader is None and plain.judge is plain.llm
    tiered = graph_services.default_services(
        Context(model="openai-compatible:a", grader_model="openai-compatible:b", web_search="off")
    )
    assert tiered.llm is plain.llm  # one client per setting, shared by every run
    assert tiered.judge is tiered.grader and tiered.grader is not tiered.llm
    assert built == []  # each is built by its first call, not with the services
    assert getattr(tiered.llm, "model") is getattr(plain.llm, "model")  # noqa: B009
    assert getattr(tiered.grader, "model") is not getattr(tiered.llm, "model")  # noqa: B009
    assert built == ["openai-compatible:a", "openai-compatible:b"]


def test_small_talk_is_one_llm_call_with_no_retrieval_web_or_citations():
    llm = make_llm(lambda p, t: "Hello! I answer questions from your documents.")
    services = make_services(llm=llm)
    out = build_graph(services=lambda ctx: services).invoke(
        {"question": "Hi there, what can you do?"}, context=Context()
    )
    assert out["route"] == "small_talk"
    assert out["answer"] == "Hello! I answer questions from your documents."
    assert out["sources"] == [] and not out["web_search_used"]
    assert llm.prompts_called() == ["small_talk"]
    fakes: Any = services  # the fakes record what they were asked
    assert fakes.retriever.queries == [] and fakes.web_search.queries == []
    assert out["messages"][-1].content == out["answer"]


def test_a_question_is_never_small_talk_and_takes_one_retrieval_pass(fake_services):
    fake_services()
    result = run_question("Hello, which team won Super Bowl 50?", Context())
    assert result.state["route"] == "single" and result.to_json()["route"] == "single"
    assert result.path == KB_PATH


def test_small_talk_in_a_thread_needs_no_rewrite_and_is_not_cached(fake_services):
    from langgraph.checkpoint.memory import InMemorySaver

    llm = make_llm(lambda p, t: "You're welcome!" if p == "small_talk" else happy_responder(p, t))
    services = make_services(llm=llm)
    threaded = build_graph(services=lambda ctx: services, checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    threaded.invoke({"question": "Which team won Super Bowl 50?"}, config, context=Context())
    out = threaded.invoke({"question": "Thanks!"}, config, context=Context())
    assert out["answer"] == "You're welcome!" and out["route"] == "small_talk"
    assert "contextualize_question" not in llm.prompts_called()
    again = threaded.invoke({"question": "Thanks!"}, config, context=Context())
    assert again["answer"] == "You're welcome!"
    assert llm.prompts_called().count("small_talk") == 2  # asked anew: replies are not cached


@pytest.mark.parametrize("where", ["knowledge base", "web", "nowhere"])
def test_every_node_that_runs_says_what_it_did(fake_services, where):
    def responder(prompt: str, text: str) -> Any:
        if where == "nowhere":
            return "no"
        if where == "web" and prompt == "grade_documents":
            return "yes" if "Leonardo" in text else "no"
        if where == "web" and prompt == "generate":
            return "Leonardo da Vinci [S1]"
        return happy_responder(prompt, text)

    fake_services(llm=make_llm(responder))
    question = "Who painted the Mona Lisa?" if where == "web" else "Which team won Super Bowl 50?"
    result = run_question(question, Context())
    said = {s.node: s.summary for s in result.steps}
    assert set(said) == set(result.path)
    assert [node for node, line in said.items() if not line.strip()] == []
