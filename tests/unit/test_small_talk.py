"""Small talk the rules do not list, recognised by its nearest examples (the real encoder)."""

from __future__ import annotations

from typing import Any

import pytest

from crag_core.clients.embeddings import default_embeddings
from crag_core.clients.small_talk import SmallTalk, clauses
from crag_core.schema.context import Context
from graph.graph import build_graph
from tests.fakes import make_llm, make_services


@pytest.fixture(scope="module")
def detector() -> SmallTalk:
    return SmallTalk(default_embeddings())


@pytest.mark.parametrize(
    "text",
    [
        "Cheers, that was really helpful!",
        "Great, that is all I needed.",
        "Nice work, bye for now",
        "Thanks a million",
        "You have been very helpful",
    ],
)
def test_thanks_and_farewells_beyond_the_phrase_lists(detector, text):
    assert detector.is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    [
        "Thanks! And who invented the telephone?",
        "Cheers. When was the Magna Carta sealed?",
        "Where is it displayed today?",
        "What is a thank-you note?",
        "Who sang Hello in 2015?",
        "Tell me about the Ottoman Empire",
        "Super Bowl 50 MVP",
    ],
)
def test_questions_that_look_chatty_are_questions(detector, text):
    assert not detector.is_small_talk(text)


def test_a_message_is_cut_into_clauses_before_a_joined_question():
    assert clauses("Thanks! Now, who won?") == ["Thanks", "Now, who won"]
    assert clauses("Great, and what was the score?") == ["Great", "and what was the score"]
    assert clauses("Nice work, bye for now") == ["Nice work, bye for now"]
    assert clauses("...") == []


class CountingEmbeddings:
    """Embeds nothing: a question about the world must be refused before any encoding."""

    calls = 0

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        raise AssertionError("no clause of a question should be embedded")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("the examples are not needed")


def test_a_question_about_the_world_needs_no_encoding():
    embeddings: Any = CountingEmbeddings()
    assert not SmallTalk(embeddings).is_small_talk("Who won Super Bowl 50?")
    assert embeddings.calls == 0


def test_the_graph_replies_to_small_talk_the_rules_do_not_list(detector):
    def responder(prompt: str, text: str) -> Any:
        assert prompt == "small_talk", prompt  # nothing is looked up
        return "Glad it helped!"

    services = make_services(make_llm(responder))
    services = type(services)(**{**services.__dict__, "small_talk": detector})
    graph = build_graph(services=lambda _: services)
    out = graph.invoke({"question": "Cheers, that was really helpful!"}, context=Context())
    assert out["route"] == "small_talk" and out["answer"] == "Glad it helped!"
    assert out["confidence"] is None and out["sources"] == []


def test_small_talk_only_the_classifier_knows_costs_a_thread_no_rewrite(detector):
    """Judged once, before the rewrite: a thread's "Cheers, …" is answered in one call."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.fakes import happy_responder

    llm = make_llm(lambda p, t: "Glad it helped!" if p == "small_talk" else happy_responder(p, t))
    services = make_services(llm)
    services = type(services)(**{**services.__dict__, "small_talk": detector})
    graph = build_graph(services=lambda _: services, checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    graph.invoke({"question": "Which team won Super Bowl 50?"}, config, context=Context())
    asked = len(llm.prompts_called())
    out = graph.invoke({"question": "Cheers, that was really helpful!"}, config, context=Context())
    assert out["route"] == "small_talk" and out["answer"] == "Glad it helped!"
    assert llm.prompts_called()[asked:] == ["small_talk"]  # no contextualize_question call
