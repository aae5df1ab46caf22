"""Multi-turn threads on the real SQLite checkpointer: follow-ups and per-turn resets."""

from __future__ import annotations

from typing import Any

import pytest

import nodes
from crag.run import run_question
from crag.threads import check_thread_id, thread_config, thread_graph, threads_path
from crag_core.errors import ConfigError
from crag_core.schema.context import Context
from graph.factory import bind
from nodes.turn.contextualize_question import format_history
from tests.fakes import KB_DOCS, FakeRetriever, applied, happy_responder, make_llm

FIRST = "Which team won Super Bowl 50?"
FOLLOW_UP = "What was the final score?"
STANDALONE = "What was the final score of Super Bowl 50?"


contextualize_question = bind(nodes.turn.contextualize_question, None)  # as the graph calls it


def thread_responder(fail_relevance_once: bool = False) -> Any:
    failed: list[bool] = []

    def responder(prompt: str, text: str) -> Any:
        if prompt == "contextualize_question":
            return f"Standalone question: {STANDALONE}"
        if prompt == "check_relevance" and fail_relevance_once and not failed:
            failed.append(True)
            return "no"
        return happy_responder(prompt, text)

    return responder


def test_follow_up_is_resolved_against_the_earlier_turn(fake_services):
    llm = make_llm(thread_responder(fail_relevance_once=True))
    retriever = FakeRetriever(KB_DOCS)
    fake_services(llm=llm, retriever=retriever)
    ctx = Context(max_retries=2, answer_threshold=0.5)

    first = run_question(FIRST, ctx, thread_id="t1")
    assert "contextualize_question" not in [c["prompt"] for c in llm.calls]
    assert first.state["standalone_question"] == FIRST
    assert first.state["retry_count"] == 1 and first.state["warnings"] == []

    llm.calls.clear()
    second = run_question(FOLLOW_UP, ctx, thread_id="t1")
    [call] = [c for c in llm.calls if c["prompt"] == "contextualize_question"]
    assert FIRST in call["text"] and "Denver Broncos" in call["text"]
    assert second.state["standalone_question"] == STANDALONE
    assert STANDALONE in retriever.queries  # retrieval uses the resolved question
    generate_text = next(c["text"] for c in llm.calls if c["prompt"] == "generate")
    assert STANDALONE in generate_text
    # Per-turn keys start fresh: the first turn's retry does not count against the second.
    assert second.state["retry_count"] == 0
    assert second.path.count("increment_retry") == 0
    assert "contextualize_question" in second.state["prompt_versions"]

    with thread_graph() as threaded:  # a new connection reads what the runs committed
        values = threaded.get_state(thread_config("t1")).values
        history = list(threaded.get_state_history(thread_config("t1")))
        assert {FIRST, FOLLOW_UP} <= {s.values.get("question") for s in history}
    assert [t["question"] for t in values["history"]] == [FIRST, FOLLOW_UP]
    assert values["history"][1]["standalone_question"] == STANDALONE
    assert "attempts" not in values  # a pass's keys are its own: never in the thread's state
    assert threads_path().is_file()


def test_threads_are_isolated(fake_services):
    llm = make_llm(thread_responder())
    fake_services(llm=llm)
    run_question(FIRST, Context(), thread_id="a")
    llm.calls.clear()
    other = run_question(FOLLOW_UP, Context(), thread_id="b")
    assert "contextualize_question" not in [c["prompt"] for c in llm.calls]
    assert other.state["standalone_question"] == FOLLOW_UP


def test_without_a_thread_nothing_is_kept(fake_services):
    fake_services(llm=make_llm(thread_responder()))
    run_question(FIRST, Context())
    assert not threads_path().exists()


def test_history_is_bounded(fake_services):
    from crag_core.schema.state import MAX_HISTORY_TURNS

    fake_services(llm=make_llm(thread_responder()))
    with thread_graph() as threaded:
        for i in range(MAX_HISTORY_TURNS + 2):
            run_question(f"{FIRST} ({i})", Context(), graph=threaded, thread_id="long")
        history = threaded.get_state(thread_config("long")).values["history"]
    assert len(history) == MAX_HISTORY_TURNS
    assert history[-1]["question"].endswith(f"({MAX_HISTORY_TURNS + 1})")


def test_contextualize_resets_the_turn_and_falls_back_on_an_empty_reply(fake_services):
    fake_services(llm=make_llm(lambda prompt, text: "   \n"))
    state: Any = {
        "question": "and its population?",
        "history": [{"question": "q", "standalone_question": "Where is Lyon?", "answer": "France"}],
        "retry_count": 2,
        "warnings": ["old"],
        "web_search_used": True,
    }
    update = applied(state, contextualize_question(state, None))  # type: ignore[arg-type]
    assert update["standalone_question"] == "and its population?"
    assert update["retry_count"] == 0 and update["warnings"] == []
    assert update["web_search_used"] is False


def test_format_history_keeps_the_latest_turns_and_bounds_answers():
    turns: Any = [
        {"question": f"q{i}", "standalone_question": f"Q{i}?", "answer": "a" * 1000}
        for i in range(5)
    ]
    text = format_history(turns)
    assert "Q0?" not in text and "Q4?" in text
    assert max(len(line) for line in text.splitlines()) < 450


@pytest.mark.parametrize("bad", ["", " ", "a b", "x" * 129, "-lead", "t/1", "t\n1"])
def test_bad_thread_ids_are_refused(bad):
    with pytest.raises(ConfigError):
        check_thread_id(bad)


def test_every_accumulating_key_but_the_conversation_starts_each_turn_empty():
    from typing import get_type_hints

    from langgraph.types import Overwrite

    from crag_core.schema.state import RAGState, turn_reset

    hints = get_type_hints(RAGState, include_extras=True)
    with_reducer = {k for k, h in hints.items() if callable(getattr(h, "__metadata__", [0])[-1])}
    assert {"warnings", "parts", "cost", "prompt_versions"} <= with_reducer
    reset = turn_reset()
    overwritten = {k for k, v in reset.items() if isinstance(v, Overwrite)}
    assert overwritten == with_reducer - {"history", "messages"}
    assert reset["retry_count"] == 0 and reset["web_search_used"] is False


def test_every_per_pass_key_starts_each_retrieval_pass_from_zero():
    from crag_core.schema.state import PassState, lifetimes, pass_reset

    reset = pass_reset()
    assert {"web_searched", "web_results", "kb_fallback", "citation_corrections"} <= set(reset)
    # a score of an earlier pass is "not asked" in the next one, not a stale number
    for key in ("retrieval_score", "evidence_score", "grounding_score", "answer_score"):
        assert reset[key] is None
    per_pass = {k for k, v in lifetimes(PassState).items() if [str(m) for m in v] == ["PER_PASS"]}
    assert set(reset) == per_pass


def test_the_turn_and_the_pass_each_see_only_their_own_keys():
    from crag_core.schema.state import Answered, PassState, RAGState, lifetimes

    turn, question_pass = set(lifetimes(RAGState)), set(lifetimes(PassState))
    shared = turn & question_pass
    # what the pass gives the turn back: the answer and how it was reached, and its evidence
    assert shared == set(lifetimes(Answered)) | {
        "question",
        "standalone_question",
        "relevant_documents",
        "asked_at",  # when the turn began: the question's deadline counts from it
        "nested",  # a described question's whole pass: what it cannot answer goes to steps
    }
    assert {"documents", "attempts", "rejected_chunks", "retrieval_score"} <= question_pass - turn
    assert {"history", "messages", "route", "subquestions", "parts"} <= turn - question_pass
    # no key lives per retrieval pass in the turn
    assert not [k for k, v in lifetimes(RAGState).items() if str(v[0]) == "PER_PASS"]


def test_every_state_key_declares_exactly_one_lifetime():
    from crag_core.schema.state import LIFETIMES, PartState, RAGState, lifetimes

    for schema in (RAGState, PartState):
        declared = lifetimes(schema)
        assert {k: v for k, v in declared.items() if len(v) != 1} == {}
    turn = lifetimes(RAGState)
    by_lifetime = {m: {k for k, v in turn.items() if v == [m]} for m in LIFETIMES}
    assert by_lifetime[LIFETIMES[0]] == {"question"}  # INPUT
    assert by_lifetime[LIFETIMES[1]] == {"messages", "history"}  # PER_THREAD
    in_pass = lifetimes(PartState)
    assert {k for k, v in in_pass.items() if v == [LIFETIMES[0]]} == {
        "question",
        "standalone_question",
        "part_index",
        "asked_at",
        "nested",
    }
    assert not [k for k, v in in_pass.items() if v == [LIFETIMES[1]]]  # nothing per thread


def test_a_turn_never_searches_with_an_earlier_turns_rewrite(fake_services):
    llm = make_llm(thread_responder(fail_relevance_once=True))
    retriever = FakeRetriever(KB_DOCS)
    fake_services(llm=llm, retriever=retriever)
    ctx = Context(max_retries=2, answer_threshold=0.5)
    first = run_question(FIRST, ctx, thread_id="leak")
    assert first.state["retry_count"] == 1  # the retry searched with a rewrite
    rewrite = [q for q in retriever.queries if q != FIRST]
    assert rewrite, retriever.queries
    retriever.queries.clear()
    second = run_question(FOLLOW_UP, ctx, thread_id="leak")
    assert second.state["retry_count"] == 0
    assert retriever.queries == [STANDALONE], retriever.queries  # its own question, once
