"""Questions with several parts: the fan-out with Send, per-part passes, the chain of parts."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from crag.run import run_question
from crag_core.schema.context import Context
from crag_core.schema.state import Source, Turn
from crag_core.text.answer_text import NO_ANSWER
from graph.graph import build_graph, route_after_question
from tests.fakes import FakeRetriever, FakeWebSearch, as_state, doc, make_llm, make_services

DOCS = {
    "broncos": doc("sb50__c0000", "Super Bowl 50 was won by the Denver Broncos, 24–10."),
    "louvre": doc("mona__c0000", "The Mona Lisa is displayed at the Louvre in Paris."),
    "cameron": doc("titanic__c0000", "Titanic (1997) was directed by James Cameron."),
    "born": doc("cameron__c0000", "James Cameron was born in 1954 in Kapuskasing, Ontario."),
    "lost": doc("sb50__c0001", "The Carolina Panthers lost Super Bowl 50."),
    "coach": doc("panthers__c0000", "Ron Rivera coached the Carolina Panthers from 2011."),
    "whole": doc("rivera__c0000", "Ron Rivera coached the team that lost Super Bowl 50."),
    "record": doc("record__c0000", "The Carolina Panthers finished the regular season 15–1."),
}


class TopicRetriever(FakeRetriever):
    """Returns the documents whose words the query shares; records every query."""

    def search(self, query: str, k: int, where: Any = None) -> list[Document]:
        self.queries.append(query)
        words = {w.strip("?,.'").lower() for w in query.split() if len(w) > 3}
        hits = [
            d for d in self.docs if words & set(d.page_content.lower().replace(".", "").split())
        ]
        return hits[:k]


def question_in(text: str) -> str:
    """The question the prompt asks (its last "Question:" line)."""
    return [line for line in text.splitlines() if line.startswith("Question:")][-1]


def responder(prompt: str, text: str) -> Any:
    """Grades by whether the shown document answers the asked question; answers from it."""
    if prompt == "contextualize_question":  # the thread's turn is asked again, standalone
        return "Which team won Super Bowl 50, and where is the Mona Lisa displayed?"
    question = question_in(text)
    answers = {
        "coached the team that lost": ("Rivera coached the team", "Ron Rivera [S1]"),
        "regular season record of the": ("15–1", "15–1 [S1]"),
        "won Super Bowl": ("Broncos", "Denver Broncos [S1]"),
        "displayed": ("Louvre", "the Louvre [S1]"),
        "directed": ("Cameron", "James Cameron [S1]"),
        "James Cameron born": ("1954", "1954 [S1]"),
        "lost Super Bowl": ("Panthers lost", "the Carolina Panthers [S1]"),
        "coached the Carolina": ("Rivera", "Ron Rivera [S1]"),
    }
    for key, (evidence, answer) in answers.items():
        if key in question:
            if prompt == "grade_documents":
                return "yes" if evidence in text.split("Question:")[0] else "no"
            if prompt == "generate":
                return answer
    if prompt == "grade_documents":
        return "no"
    if prompt == "generate":
        return NO_ANSWER
    if prompt in ("check_hallucination", "check_relevance", "check_support"):
        return "yes"
    raise AssertionError(f"unexpected prompt {prompt!r}: {question}")


def services_for(*topics: str) -> Any:
    return make_services(
        llm=make_llm(responder),
        retriever=TopicRetriever([DOCS[t] for t in topics]),
        web=FakeWebSearch([]),
    )


def test_independent_parts_fan_out_and_each_is_answered_and_cited_on_its_own():
    services = services_for("broncos", "louvre")
    graph = build_graph(services=lambda ctx: services)
    question = "Which team won Super Bowl 50, and where is the Mona Lisa displayed?"
    result = run_question(question, Context(answer_cache=False), graph=graph)
    state = result.state
    assert state["route"] == "multi_part"
    assert state["answer"] == (
        "Which team won Super Bowl 50? Denver Broncos [1]\n"
        "Where is the Mona Lisa displayed? the Louvre [2]"
    )
    assert [s["id"] for s in state["sources"]] == ["sb50__c0000", "mona__c0000"]
    by_index = sorted(state["parts"], key=lambda p: p["index"])
    assert [p["sources"][0]["id"] for p in by_index] == ["sb50__c0000", "mona__c0000"]
    # each part searched for itself, never for the whole question
    assert sorted(services.retriever.queries) == [
        "Where is the Mona Lisa displayed?",
        "Which team won Super Bowl 50?",
    ]
    assert {s.split("/")[0] for s in result.path if "/" in s} == {"part 1", "part 2"}
    for step in result.steps:  # each part's nodes are labelled with that part
        if step.node.endswith("/collect_part"):
            assert step.summary.startswith(step.node.split("/")[0] + ":")
    assert result.path[-1] == "finalize" and result.path.count("answer_part") == 2
    as_json = result.to_json()
    assert as_json["route"] == "multi_part"
    assert [p["answer"] for p in as_json["parts"]] == ["Denver Broncos", "the Louvre"]
    assert "\n[2] /kb/mona__c0000.md" in state["messages"][-1].content


def test_a_part_nothing_supports_is_said_to_be_unknown_and_the_other_still_answered():
    services = services_for("broncos")  # nothing about the Mona Lisa, and no web results
    graph = build_graph(services=lambda ctx: services)
    question = "Which team won Super Bowl 50, and where is the Mona Lisa displayed?"
    out = graph.invoke({"question": question}, context=Context(answer_cache=False))
    assert out["answer"] == (
        f"Which team won Super Bowl 50? Denver Broncos [1]\n"
        f"Where is the Mona Lisa displayed? {NO_ANSWER}"
    )
    assert [s["id"] for s in out["sources"]] == ["sb50__c0000"]
    assert services.web_search.queries == ["Where is the Mona Lisa displayed?"]  # per part


def test_no_part_answered_is_the_no_answer_reply():
    services = services_for()
    graph = build_graph(services=lambda ctx: services)
    question = "Which team won Super Bowl 50, and where is the Mona Lisa displayed?"
    out = graph.invoke({"question": question}, context=Context(answer_cache=False))
    assert out["answer"] == NO_ANSWER and out["sources"] == []


def test_dependent_parts_run_in_order_the_later_asked_with_the_earlier_answer():
    services = services_for("cameron", "born")
    graph = build_graph(services=lambda ctx: services)
    result = run_question(
        "Who directed Titanic, and when was he born?", Context(answer_cache=False), graph=graph
    )
    state = result.state
    assert state["route"] == "multi_step"
    assert services.retriever.queries == ["Who directed Titanic?", "When was James Cameron born?"]
    assert (
        state["answer"]
        == "Who directed Titanic? James Cameron [1]\nWhen was James Cameron born? 1954 [2]"
    )
    second = next(p for p in state["parts"] if p["index"] == 1)
    assert second["query"] == "When was James Cameron born?"
    # one part at a time: part 1's pass ends before part 2's starts
    first_of_2 = next(i for i, s in enumerate(result.path) if s.startswith("part 2/"))
    assert all(not s.startswith("part 1/") for s in result.path[first_of_2:])


def test_a_described_question_is_asked_whole_first_and_one_sentence_answers_it():
    services = services_for("whole", "lost", "coach")
    graph = build_graph(services=lambda ctx: services)
    question = "Who coached the team that lost Super Bowl 50?"
    result = run_question(question, Context(answer_cache=False), graph=graph)
    assert result.state["route"] == "single" and result.state["answer"] == "Ron Rivera"
    assert services.retriever.queries == [question]  # one look-up, no steps


def test_a_described_question_found_nowhere_whole_is_asked_in_two_lookups():
    services = services_for("lost", "coach")
    graph = build_graph(services=lambda ctx: services)
    question = "Who coached the team that lost Super Bowl 50?"
    result = run_question(question, Context(answer_cache=False), graph=graph)
    state = result.state
    assert state["route"] == "multi_step"
    assert "decompose" in result.path and result.path.index("decompose") > result.path.index(
        "choose_answer"
    )
    assert state["subquestions"] == ["Which team lost Super Bowl 50?", "Who coached #1?"]
    assert services.retriever.queries == [
        question,  # asked whole first: nothing states it
        "Which team lost Super Bowl 50?",
        "Who coached the Carolina Panthers?",
    ]
    # the reply starts with the answer to the question asked, then shows the steps
    assert state["answer"] == (
        "Ron Rivera [1, 2]\n\nSteps:\n"
        "Which team lost Super Bowl 50? the Carolina Panthers [1]\n"
        "Who coached the Carolina Panthers? Ron Rivera [2]"
    )
    assert [s["id"] for s in state["sources"]] == ["sb50__c0001", "panthers__c0000"]


def test_a_described_question_no_tool_answered_whole_is_asked_in_its_steps():
    # a table's "I don't know" to "How many customers are in the country whose capital is
    # Oslo?" (no evidence read): a note may name the country, the table count its customers
    steps = ["Which country's capital is Oslo?", "How many customers are in #1?"]
    described = {"route": "single", "nested": True, "subquestions": steps}
    assert route_after_question(as_state({**described, "answer": NO_ANSWER})) == "decompose"
    assert route_after_question(as_state({**described, "answer": "2"})) == "finalize"  # stands
    premise = {"answer": "customers.csv has no city 'Oslo'", "answer_kind": "table:premise:1"}
    assert route_after_question(as_state({**described, **premise})) == "decompose"
    asked = {**described, "answer": "Norway", "relevant_documents": []}
    assert route_after_question(as_state(asked)) == "decompose"  # from evidence: weighed
    plain = {"route": "single", "answer": NO_ANSWER}
    assert route_after_question(as_state(plain)) == "finalize"


def test_a_described_question_is_not_asked_in_steps_when_no_pass_fits_in_its_time():
    services = services_for("lost", "coach")
    graph = build_graph(services=lambda ctx: services)
    question = "Who coached the team that lost Super Bowl 50?"
    late = Context(answer_cache=False, answer_seconds=0.001)  # spent by the whole pass
    result = run_question(question, late, graph=graph)
    assert services.retriever.queries == [question]  # asked whole only
    assert result.state["route"] == "single" and result.state["answer"] == NO_ANSWER
    assert any("not asked again in its 2 steps" in w for w in result.state["warnings"])


def test_an_answer_beside_another_description_is_asked_again_in_steps():
    # Asked whole, "15–1" is found, but its sentence says nothing of losing Super Bowl 50:
    # the steps find the team first, then its record.
    services = services_for("lost", "record")
    graph = build_graph(services=lambda ctx: services)
    question = "What was the regular season record of the team that lost Super Bowl 50?"
    result = run_question(question, Context(answer_cache=False), graph=graph)
    assert result.state["route"] == "multi_step"
    assert services.retriever.queries == [
        question,
        "Which team lost Super Bowl 50?",
        "What was the regular season record of the Carolina Panthers?",
    ]
    assert result.state["answer"].startswith("15–1")


def test_a_described_question_whose_chain_stops_is_not_answered():
    services = services_for("lost")  # who coached the Panthers is nowhere
    graph = build_graph(services=lambda ctx: services)
    out = graph.invoke(
        {"question": "Who coached the team that lost Super Bowl 50?"},
        context=Context(answer_cache=False),
    )
    assert len(out["parts"]) == 2  # the first step was answered, the second was not
    assert out["answer"] == NO_ANSWER and out["sources"] == []


def test_a_nested_question_is_one_lookup_when_splitting_is_off():
    services = services_for("lost", "coach")
    graph = build_graph(services=lambda ctx: services)
    question = "Who coached the team that lost Super Bowl 50?"
    out = graph.invoke({"question": question}, context=Context(max_subquestions=1))
    assert out["route"] == "single" and services.retriever.queries == [question]


class SlowRetriever(TopicRetriever):
    """``TopicRetriever`` whose every search takes ``seconds`` of the question's clock."""

    def __init__(self, docs: list[Document], clock: Any, seconds: float) -> None:
        super().__init__(docs)
        self.clock, self.seconds = clock, seconds

    def search(self, query: str, k: int, where: Any = None) -> list[Document]:
        self.clock.now += self.seconds
        return super().search(query, k, where)


@pytest.mark.parametrize(("answer_seconds", "begun"), [(150, False), (250, True)])
def test_a_chains_next_step_is_begun_only_if_it_would_end_in_time(
    monkeypatch, answer_seconds, begun
):
    import importlib

    clock = SimpleNamespace(now=1_000.0)
    clock.time = lambda: clock.now
    for module in ("nodes.shared.common", "nodes.turn.contextualize_question"):
        monkeypatch.setattr(importlib.import_module(module), "time", clock)
    retriever = SlowRetriever([DOCS["cameron"], DOCS["born"]], clock, 100)  # a pass: 100 s
    services = make_services(llm=make_llm(responder), retriever=retriever, web=FakeWebSearch([]))
    graph = build_graph(services=lambda ctx: services)
    ctx = Context(answer_cache=False, answer_seconds=answer_seconds)
    state = run_question("Who directed Titanic, and when was he born?", ctx, graph=graph).state
    assert len(state["parts"]) == (2 if begun else 1)
    cut = [w for w in state["warnings"] if "Step 2 of 2 was not begun" in w]
    assert bool(cut) != begun
    if not begun:  # the first step's answer stands; the second is said to be unknown
        assert state["answer"] == (
            f"Who directed Titanic? James Cameron [1]\nWhen was he born? {NO_ANSWER}"
        )


def test_a_chain_stops_at_an_unknown_part():
    services = services_for("born")  # who directed Titanic is nowhere
    graph = build_graph(services=lambda ctx: services)
    out = graph.invoke(
        {"question": "Who directed Titanic, and when was he born?"},
        context=Context(answer_cache=False),
    )
    assert services.retriever.queries == ["Who directed Titanic?"]  # part 2 never searched
    assert out["answer"] == NO_ANSWER and len(out["parts"]) == 1


def test_a_part_leaning_on_the_question_is_asked_with_its_subject_named():
    services = services_for("broncos")
    graph = build_graph(services=lambda ctx: services)
    question = "Which team won Super Bowl 50, and what was the final score?"
    out = graph.invoke({"question": question}, context=Context(answer_cache=False))
    assert "What was the final score of Super Bowl 50?" in services.retriever.queries
    assert [p["query"] for p in sorted(out["parts"], key=lambda p: p["index"])] == [
        "Which team won Super Bowl 50?",
        "What was the final score of Super Bowl 50?",
    ]


def test_a_part_whose_subject_cannot_be_told_is_asked_as_part_of_the_question():
    services = services_for("broncos")
    graph = build_graph(services=lambda ctx: services)
    question = "Which team won, and what was the final score?"  # names nothing
    graph.invoke({"question": question}, context=Context(answer_cache=False))
    assert f"What was the final score? (asked as part of: {question})" in services.retriever.queries


def test_max_subquestions_one_answers_the_question_as_one():
    services = services_for("broncos", "louvre")
    graph = build_graph(services=lambda ctx: services)
    question = "Which team won Super Bowl 50, and where is the Mona Lisa displayed?"
    out = graph.invoke({"question": question}, context=Context(max_subquestions=1))
    assert out["route"] == "single" and out["parts"] == []
    assert services.retriever.queries == [question]


def test_parts_of_one_turn_do_not_leak_into_the_next():
    services = services_for("broncos", "louvre")
    graph = build_graph(services=lambda ctx: services, checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    ctx = Context(answer_cache=False)
    question = "Which team won Super Bowl 50, and where is the Mona Lisa displayed?"
    first = graph.invoke({"question": question}, config, context=ctx)
    assert len(first["parts"]) == 2
    again = graph.invoke({"question": question}, config, context=ctx)
    assert len(again["parts"]) == 2 and again["answer"] == first["answer"]


def history_responder(p_yes: float) -> Any:
    def respond(prompt: str, text: str) -> Any:
        if prompt == "contextualize_question":
            if "won it again" in text.split("Follow-up question:")[1]:
                return "Which team won Super Bowl 50 again?"
            return "What was the final score of Super Bowl 50?"
        if prompt == "check_history":
            return p_yes
        if prompt == "grade_documents":
            return "yes"
        if prompt == "generate":
            return "Denver Broncos, 24–10 [S1]"
        return "yes"

    return respond


def thread_after_first_turn(p_yes: float, **ctx: Any) -> tuple[Any, Any, Any]:
    """Services, a threaded graph and a function asking on its thread, after one turn."""
    services = make_services(
        llm=make_llm(history_responder(p_yes)), retriever=TopicRetriever([DOCS["broncos"]])
    )
    graph = build_graph(services=lambda ctx: services, checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    def ask(question: str) -> Any:
        context = Context(answer_cache=False, **ctx)
        return graph.invoke({"question": question}, config, context=context)

    return services, ask, ask("Which team won Super Bowl 50?")


def test_a_follow_up_repeating_an_answered_question_is_answered_from_the_thread():
    services, ask, first = thread_after_first_turn(0.0)
    searched = list(services.retriever.queries)
    again = ask("Which team won it again?")
    assert again["route"] == "history"
    assert again["answer"] == first["answer"] and again["sources"] == first["sources"]
    assert services.retriever.queries == searched  # nothing retrieved
    assert services.llm.prompts_called()[-1] == "contextualize_question"  # no judge call
    assert again["messages"][-1].additional_kwargs["sources"] == first["sources"]


def test_by_default_a_new_follow_up_takes_its_pass_with_no_judge_call():
    services, ask, _ = thread_after_first_turn(0.9)
    out = ask("What was the score again?")
    assert out["route"] == "single" and "check_history" not in services.llm.prompts_called()


def test_with_the_judge_on_an_answered_follow_up_is_answered_from_the_thread():
    services, ask, first = thread_after_first_turn(0.9, history_threshold=0.5)
    searched = list(services.retriever.queries)
    out = ask("What was the score again?")
    assert out["route"] == "history" and out["answer"] == first["answer"]
    assert services.retriever.queries == searched
    assert services.llm.prompts_called()[-2:] == ["contextualize_question", "check_history"]


def test_with_the_judge_on_an_unanswered_follow_up_takes_its_pass():
    services, ask, _ = thread_after_first_turn(0.1, history_threshold=0.5)
    out = ask("What was the final score?")
    assert out["route"] == "single"
    assert services.retriever.queries[-1] == "What was the final score of Super Bowl 50?"


def test_no_judge_call_for_a_new_topic_or_after_an_unknown_answer():
    from nodes.turn.history import earlier_answer

    turn = {"question": "q", "standalone_question": "Which team won Super Bowl 50?"}
    answered = [{**turn, "answer": "Denver Broncos"}]
    asked = as_state({"question": "Who painted the Mona Lisa?", "history": answered})
    assert earlier_answer(asked) is None
    assert earlier_answer(as_state({"question": "Who won Super Bowl 50?", "history": answered}))
    unknown = [{**turn, "answer": NO_ANSWER}]
    asked = as_state({"question": "Who won Super Bowl 50?", "history": unknown})
    assert earlier_answer(asked) is None


def test_a_repeat_is_most_of_the_same_words():
    from nodes.turn.history import repeats

    turn: Turn = {
        "question": "q",
        "standalone_question": "Which team won Super Bowl 50?",
        "answer": "x",
    }
    assert repeats("Who won Super Bowl 50 again?", turn)
    assert not repeats("What was the final score of Super Bowl 50?", turn)


def test_a_caller_kept_conversation_keeps_its_sources_for_the_history_route():
    from nodes.turn.chat import earlier_turns, reply

    source: Source = {"id": "sb50__c0000", "source": "/kb/sb50.md"}
    messages: list[AnyMessage] = [
        HumanMessage("Which team won Super Bowl 50?"),
        reply("Denver Broncos", [source]),
    ]
    [turn] = earlier_turns(messages)
    assert turn["answer"] == "Denver Broncos" and turn["sources"] == [source]
