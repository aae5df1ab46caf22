"""The light retrieval evaluator: its signals, its fitted score, and the model graded only in
the grey zone (the real encoder; a scripted model that records its calls)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from langchain_core.documents import Document
from langgraph.runtime import Runtime

import nodes.correction
from crag_core.clients.embeddings import default_embeddings
from crag_core.schema.context import Context
from crag_core.text.evidence_signals import signals
from graph.factory import bind
from nodes.shared import evaluator
from tests.fakes import as_state, make_llm, make_services

Q = "Which team won Super Bowl 50?"
STATES = Document(
    id="sb50__c0000",
    page_content="Super Bowl 50 was played in 2016. The Denver Broncos won Super Bowl 50, "
    "defeating the Carolina Panthers 24-10.",
    metadata={"id": "sb50__c0000"},
)
ELSEWHERE = Document(
    id="chl__c0000",
    page_content="Chloroplasts are organelles that conduct photosynthesis in plant cells.",
    metadata={"id": "chl__c0000"},
)


def test_signals_read_the_questions_words_names_and_kind_in_the_chunk():
    held = signals(
        "When was Luther buried?", "Luther was buried in Wittenberg in 1546.", 0.7, [0.7]
    )
    assert held["coverage"] == 1.0 and held["sentence_coverage"] == 1.0
    assert held["names"] == 1.0 and held["kind_found"] == 1.0 and held["pairs"] == 1.0
    missing = signals("When was Luther buried?", "Luther was born in Eisleben.", 0.5, [0.5])
    assert missing["coverage"] == 0.5 and missing["kind_found"] == 0.0
    no_kind = signals("What is a chloroplast?", "Chloroplasts are organelles.", 0.6, [0.6])
    assert no_kind["kind_found"] is None and no_kind["names"] is None


def test_a_chunk_longer_than_the_sentences_the_encoder_compares_is_scored():
    # a documentation page's chunk: many short lines, the answer past the twelfth
    lines = [f"Variable x{i} is a numeric column." for i in range(20)]
    text = " ".join([*lines, "Luther was buried in Wittenberg in 1546."])
    found = signals("When was Luther buried?", text, 0.5, [0.1] * evaluator.MAX_SENTENCES)
    assert found["sentence_coverage"] == 1.0 and found["kind_found"] == 1.0
    page = Document(id="p__c0000", page_content=text, metadata={"id": "p__c0000"})
    (score,) = evaluator.chunk_scores(default_embeddings(), "When was Luther buried?", [page])
    assert 0.0 <= score <= 1.0


def test_the_fitted_score_is_high_where_a_chunk_states_the_answer_and_low_elsewhere():
    embeddings = default_embeddings()
    stated, other = evaluator.chunk_scores(embeddings, Q, [STATES, ELSEWHERE])
    assert stated > 0.6 > 0.05 > other
    assert evaluator.light_score(embeddings, Q, [ELSEWHERE, STATES]) == stated
    assert evaluator.light_score(embeddings, Q, []) == 0.0


def test_the_fit_says_what_it_was_fitted_on_and_reads_only_signals_that_exist():
    fit = json.loads(evaluator.FIT.read_text())
    known = set(signals(Q, STATES.page_content, 0.5, [0.5, 0.5]))
    assert {f.partition(":")[0] for f in fit["features"]} <= known
    assert len(fit["weights"]) == len(fit["features"])
    assert fit["fitted_on"]["leave_one_article_out"]["auc_pairs"] > 0.8


def _services(replies: Any) -> Any:
    llm = make_llm(replies)
    return dataclasses.replace(make_services(llm), embeddings=default_embeddings()), llm


def _grade(services: Any, state: dict[str, Any], **ctx: Any) -> dict[str, Any]:
    node = bind(nodes.correction.grade_documents, lambda _ctx: services)
    return dict(node(as_state(state), Runtime(context=Context(**ctx))))


def test_a_chunk_that_states_the_answer_is_correct_without_the_model():
    services, llm = _services(lambda p, t: "no")
    update = _grade(services, {"question": Q, "documents": [STATES, ELSEWHERE]})
    assert update["retrieval_verdict"] == "correct" and llm.calls == []
    assert update["retrieval_score"] == update["light_score"] >= 0.6
    assert len(update["relevant_documents"]) == 2


def test_documents_that_say_nothing_of_it_are_incorrect_without_the_model():
    services, llm = _services(lambda p, t: "yes")
    update = _grade(services, {"question": Q, "documents": [ELSEWHERE]})
    assert update["retrieval_verdict"] == "incorrect" and llm.calls == []
    assert update["relevant_documents"] == []


@pytest.mark.parametrize("reply", ["yes", "no"])
def test_the_grey_zone_is_graded_by_the_model_whose_score_decides(reply):
    services, llm = _services(lambda p, t: reply)
    state = {"question": Q, "documents": [STATES]}
    update = _grade(services, state, light_correct=1.0, light_incorrect=0.0)
    assert llm.prompts_called() == ["grade_documents"]
    assert update["retrieval_verdict"] == ("correct" if reply == "yes" else "incorrect")
    assert update["light_score"] >= 0.6 and update["retrieval_score"] in (0.0, 1.0)


def test_with_light_grey_ambiguous_the_grey_zone_is_ambiguous_and_no_model_reads_it():
    services, llm = _services(lambda p, t: "no")
    grey = {"light_correct": 1.0, "light_incorrect": 0.0, "light_grey": "ambiguous"}
    update = _grade(services, {"question": Q, "documents": [ELSEWHERE]}, **grey)
    assert update["retrieval_verdict"] == "ambiguous" and llm.calls == []
    assert update["retrieval_score"] == update["light_score"] < 0.05
    assert [d.id for d in update["relevant_documents"]] == ["chl__c0000"]  # kept, web searched
    with_web = {
        "question": Q,
        "documents": [ELSEWHERE],
        "relevant_documents": [ELSEWHERE],
        "web_searched": True,
        "web_results": [STATES],
    }
    evidence = _grade(services, with_web, **grey)
    assert llm.calls == [] and evidence["evidence_score"] == evidence["evidence_light_score"]
    assert [d.id for d in evidence["relevant_documents"]] == ["chl__c0000", "sb50__c0000"]


def test_a_light_score_at_or_above_light_correct_is_correct_whatever_the_models_thresholds():
    services, llm = _services(lambda p, t: "no")
    update = _grade(
        services, {"question": Q, "documents": [STATES]}, light_correct=0.5, correct_threshold=0.95
    )
    assert update["retrieval_verdict"] == "correct" and llm.calls == []


def test_web_results_are_judged_light_before_the_model_reads_them():
    services, llm = _services(lambda p, t: "yes")
    state = {
        "question": Q,
        "documents": [ELSEWHERE],
        "relevant_documents": [],
        "web_searched": True,
        "web_results": [STATES],
    }
    update = _grade(services, state)
    assert llm.calls == [] and update["evidence_score"] == update["evidence_light_score"] >= 0.6
    assert [d.id for d in update["relevant_documents"]] == ["sb50__c0000"]
    unrelated = {**state, "web_results": [ELSEWHERE]}
    assert _grade(services, unrelated)["relevant_documents"] == [] and llm.calls == []


def test_grey_zone_bands_must_be_ordered():
    with pytest.raises(Exception, match="light_correct"):
        Context(light_correct=0.1, light_incorrect=0.5)


def test_without_an_encoder_the_model_grades_everything():
    services = make_services(make_llm(lambda p, t: "yes"))
    update = _grade(services, {"question": Q, "documents": [ELSEWHERE]})
    assert services.llm.prompts_called() == ["grade_documents"]  # type: ignore[attr-defined]
    assert update["light_score"] is None and update["retrieval_verdict"] == "correct"


def test_the_strips_probe_keeps_the_sentences_closest_to_the_question_in_document_order():
    """``light_evaluator strips``' read of the evidence: its best sentences, not its chunks."""
    from benchmarks.calibration.light_evaluator import best_strips

    more = Document(
        id="sb50__c0001",
        page_content="The game was held in Santa Clara. Tickets sold out in a day. "
        "The Broncos' defense was ranked first in the league.",
    )
    kept = best_strips(default_embeddings(), Q, [ELSEWHERE, STATES, more], k=2)
    assert [d.id for d in kept] == ["sb50__c0000"]
    assert kept[0].page_content == (
        "Super Bowl 50 was played in 2016. … The Denver Broncos won Super Bowl 50, "
        "defeating the Carolina Panthers 24-10."
    )
