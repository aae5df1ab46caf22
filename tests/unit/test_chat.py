"""The chat convention: a turn asked as ``messages`` and answered with an AI message."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from crag.run import run_question
from crag_core.errors import QuestionError
from crag_core.schema.context import Context
from graph.graph import build_graph
from nodes.turn.chat import earlier_turns, reply
from tests.fakes import make_llm, make_services
from tests.unit.test_threads import FIRST, FOLLOW_UP, STANDALONE, thread_responder

ANSWER = "The Denver Broncos won, 24–10."
CTX = Context(answer_threshold=0.5)


def app(llm=None, checkpointer=None):
    services = make_services(llm=llm or make_llm(thread_responder()))
    return build_graph(services=lambda _: services, checkpointer=checkpointer)


def test_a_user_message_is_the_question_and_the_answer_comes_back_as_an_ai_message():
    out = app().invoke({"messages": [HumanMessage(FIRST)]}, context=CTX)
    assert out["answer"] == ANSWER and out["standalone_question"] == FIRST
    human, ai = out["messages"]
    assert human.type == "human" and human.text == FIRST
    assert ai.type == "ai" and ai.text.startswith(ANSWER)
    assert "Sources:\n[1] /kb/sb50__c0000.md" in ai.text
    source = {
        "id": "sb50__c0000",
        "source": "/kb/sb50__c0000.md",
        "quote": "Super Bowl 50: the Denver Broncos defeated the Carolina Panthers 24–10.",
    }
    assert ai.additional_kwargs["sources"] == [source]


def test_a_question_adds_both_messages_so_chat_clients_show_every_turn():
    out = app().invoke({"question": FIRST}, context=CTX)
    assert [m.type for m in out["messages"]] == ["human", "ai"]
    assert out["messages"][0].text == FIRST


def test_a_thread_takes_questions_and_messages_in_turn():
    llm = make_llm(thread_responder())
    graph = app(llm, InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "chat"}}
    graph.invoke({"question": FIRST}, config, context=CTX)
    second = graph.invoke({"messages": [HumanMessage(FOLLOW_UP)]}, config, context=CTX)
    assert second["standalone_question"] == STANDALONE  # the first turn is its history
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]
    # The question key follows the turn, so a plain question after a chat turn works too.
    third = graph.invoke({"question": FIRST}, config, context=CTX)
    assert third["answer"] == ANSWER
    assert len(third["messages"]) == 6
    assert [t["question"] for t in graph.get_state(config).values["history"]] == [
        FIRST,
        FOLLOW_UP,
        FIRST,
    ]


def test_without_a_thread_the_earlier_messages_are_the_history():
    llm = make_llm(thread_responder())
    conversation = [HumanMessage(FIRST), AIMessage(ANSWER), HumanMessage(FOLLOW_UP)]
    out = app(llm).invoke({"messages": conversation}, context=CTX)
    [call] = [c for c in llm.calls if c["prompt"] == "contextualize_question"]
    assert FIRST in call["text"] and "Denver Broncos" in call["text"]
    assert out["standalone_question"] == STANDALONE
    assert len(out["messages"]) == 4


@pytest.mark.parametrize(
    "given",
    [{}, {"messages": []}, {"messages": [HumanMessage("   ")]}],
)
def test_no_question_in_any_form_is_refused(given):
    with pytest.raises(QuestionError):
        app().invoke(given, context=CTX)


def test_earlier_turns_pair_each_question_with_its_answer():
    messages: list[AnyMessage] = [
        HumanMessage("a?"),
        AIMessage("A."),
        HumanMessage("unanswered?"),
        HumanMessage("b?"),
        AIMessage(""),  # an empty reply answers nothing
        AIMessage("B."),
    ]
    assert [(t["question"], t["answer"]) for t in earlier_turns(messages)] == [
        ("a?", "A."),
        ("b?", "B."),
    ]


def test_a_reply_without_sources_is_the_answer_alone():
    message = reply("I don't know.", [])
    assert message.text == "I don't know." and message.additional_kwargs["sources"] == []
    located = reply("x", [{"id": "d__c0001", "source": "/a.pdf", "location": "page 3"}])
    assert located.text.endswith("[1] /a.pdf (page 3)")


def test_the_answer_streams_token_by_token_and_nothing_else_does(fake_services):
    llm = make_llm(thread_responder())
    fake_services(llm=llm)
    tokens: list[str] = []
    result = run_question(FIRST, CTX, on_token=tokens.append)
    assert len(tokens) > 3 and "".join(tokens) == "The Denver Broncos won, 24–10. [S1]"  # the draft
    assert result.state["answer"] == ANSWER
    # One streamed call (the generator's); the verdicts came whole, with log-probabilities.
    assert [c.get("streamed", False) for c in llm.calls] == [False, True, False, False]
    assert llm.prompts_called() == [
        "grade_documents",
        "generate",
        "check_hallucination",
        "check_relevance",
    ]
    assert all(c["kwargs"].get("stream") is False for c in llm.calls if not c.get("streamed"))


def test_without_a_token_callback_nothing_streams(fake_services):
    llm = make_llm(thread_responder())
    fake_services(llm=llm)
    run_question(FIRST, CTX)
    assert not any(c.get("streamed") for c in llm.calls)
