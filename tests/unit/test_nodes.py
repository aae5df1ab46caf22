"""Every node, alone, with fake clients."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from langgraph.runtime import Runtime

import nodes
from crag_core.schema.context import Context
from crag_core.schema.state import Attempt, PassState
from crag_core.text.answer_text import NO_ANSWER
from graph.factory import bind
from nodes.correction import choose_answer, increment_retry
from nodes.correction.grade_documents import decide
from nodes.turn import finalize
from tests.fakes import (
    KB_DOCS,
    WEB_DOCS,
    FakeRetriever,
    FakeWebSearch,
    applied,
    as_state,
    doc,
    make_llm,
)

# The nodes as the graph calls them: ``(state, runtime)``, clients from the services factory.
check_hallucination = bind(nodes.correction.check_hallucination, None)
check_relevance = bind(nodes.correction.check_relevance, None)
generate = bind(nodes.correction.generate, None)
grade_documents = bind(nodes.correction.grade_documents, None)
retrieve = bind(nodes.correction.retrieve, None)
rewrite_query = bind(nodes.correction.rewrite_query, None)
web_search = bind(nodes.correction.web_search, None)


def rt(**ctx: Any) -> Runtime[Context]:
    return Runtime(context=Context(**ctx))


Q = "Which team won Super Bowl 50?"


# rewrite_query ---------------------------------------------------------------------------


def test_rewrite_query_cleans_reply_and_records_prompt_version(fake_services):
    llm = make_llm(lambda p, t: 'Query: "Super Bowl 50 champion"\nextra line')
    fake_services(llm=llm)
    update = rewrite_query({"question": Q}, rt())
    assert update["rewritten_query"] == "Super Bowl 50 champion"
    assert update["prompt_versions"] == {"rewrite_query": "v1"}


def test_rewrite_query_falls_back_to_question_on_empty_reply(fake_services):
    fake_services(llm=make_llm(lambda p, t: "   \n"))
    assert rewrite_query({"question": Q}, rt())["rewritten_query"] == Q


def test_rewrite_query_on_retry_sees_feedback_and_previous_queries(fake_services):
    llm = make_llm(lambda p, t: "new query")
    fake_services(llm=llm)
    state: PassState = {
        "question": Q,
        "feedback": "the answer named the wrong team.",
        "attempts": [
            {
                "query": "old query",
                "generation": "x",
                "sources": [],
                "grounded": "no",
                "answers_question": None,
            }
        ],
    }
    rewrite_query(state, rt())
    text = llm.calls[0]["text"]
    assert "the answer named the wrong team." in text and "- old query" in text


def test_rewrite_query_replaces_a_guessed_answer_with_the_question(fake_services):
    fake_services(llm=make_llm(lambda p, t: "John Gallagher was born on January 1, 1950."))
    question = "When was John Gallagher born?"
    assert rewrite_query({"question": question}, rt())["rewritten_query"] == question
    fake_services(llm=make_llm(lambda p, t: "Super Bowl 50 winning team"))
    assert rewrite_query({"question": Q}, rt())["rewritten_query"] == "Super Bowl 50 winning team"


def attempt(query: str) -> Attempt:
    return {
        "query": query,
        "generation": "x",
        "sources": [],
        "grounded": "no",
        "answers_question": None,
    }


def test_rewrite_query_never_repeats_a_tried_query_while_the_question_is_untried(fake_services):
    fake_services(llm=make_llm(lambda p, t: "Super Bowl 50 champion"))
    state: PassState = {"question": Q, "attempts": [attempt("super bowl 50 CHAMPION.")]}
    assert rewrite_query(state, rt())["rewritten_query"] == Q
    state["attempts"].append(attempt(Q))  # both tried: the repeat stands (retrieve goes deeper)
    assert rewrite_query(state, rt())["rewritten_query"] == "Super Bowl 50 champion"


# retrieve --------------------------------------------------------------------------------


def test_retrieve_searches_question_and_rewrite_and_fuses(fake_services):
    retriever = FakeRetriever(KB_DOCS)
    fake_services(retriever=retriever)
    update = retrieve({"question": Q, "rewritten_query": "sb50 winner"}, rt(top_k=2))
    assert retriever.queries == [Q, "sb50 winner"]
    assert [d.metadata["id"] for d in update["documents"]] == ["sb50__c0000", "sb50__c0001"]


def test_retrieve_drops_chunks_below_min_similarity_and_caps_top_k(fake_services):
    docs = [doc("a", "x", 0.9), doc("b", "y", 0.1), doc("c", "z", 0.5), doc("d", "w", 0.4)]
    fake_services(retriever=FakeRetriever(docs))
    update = retrieve({"question": Q}, rt(top_k=4, min_similarity=0.3))
    assert [d.metadata["id"] for d in update["documents"]] == ["a", "c", "d"]
    update = retrieve({"question": Q}, rt(top_k=2, min_similarity=0.3))
    assert len(update["documents"]) == 1  # top_k bounds the search, then the floor applies


def keyword_hit(doc_id: str, score: float, rank: int) -> Any:
    d = doc(doc_id, doc_id, score)
    d.metadata["keyword_rank"] = rank
    return d


def test_retrieve_keeps_a_top_keyword_hit_down_to_the_keyword_floor(fake_services):
    docs = [
        doc("dense", "x", 0.5),
        keyword_hit("bm25-top", 0.25, rank=1),  # under 0.3, over 0.2: kept
        keyword_hit("bm25-second", 0.25, rank=2),  # not the top hit: the usual floor
        keyword_hit("bm25-top-far", 0.1, rank=1),  # under both floors
    ]
    fake_services(retriever=FakeRetriever(docs))
    ctx = {"top_k": 4, "min_similarity": 0.3, "keyword_min_similarity": 0.2}
    update = retrieve({"question": Q}, rt(**ctx))
    assert [d.metadata["id"] for d in update["documents"]] == ["dense", "bm25-top"]
    ctx["keyword_min_similarity"] = 0.3  # equal floors: no exemption
    assert [d.metadata["id"] for d in retrieve({"question": Q}, rt(**ctx))["documents"]] == [
        "dense"
    ]
    ctx = {"top_k": 4, "min_similarity": 0.05, "keyword_min_similarity": 0.2}
    kept = [d.metadata["id"] for d in retrieve({"question": Q}, rt(**ctx))["documents"]]
    assert kept == ["dense", "bm25-top", "bm25-second", "bm25-top-far"]  # never stricter


def test_retrieve_exempts_a_chunk_that_only_the_rewrite_ranks_first(fake_services):
    from crag_core.text.documents import above_floor

    by_question = [doc("dense", "x", 0.5), keyword_hit("gold", 0.27, rank=2)]
    by_rewrite = [keyword_hit("gold", 0.24, rank=1)]
    kept = above_floor([by_question, by_rewrite], 0.3, 0.2)
    assert [d.metadata["id"] for d in kept] == ["gold", "dense"]  # gold: in both rankings


def test_retrieve_on_a_retry_searches_past_the_rejected_chunks(fake_services):
    docs = [doc("a", "x", 0.9), doc("b", "y", 0.8), doc("c", "z", 0.7), doc("d", "w", 0.6)]
    fake_services(retriever=FakeRetriever(docs))
    update = retrieve({"question": Q, "rejected_chunks": ["a", "b"]}, rt(top_k=2))
    assert [d.metadata["id"] for d in update["documents"]] == ["c", "d"]


def test_the_keyword_exemption_passes_to_the_best_hit_not_rejected():
    from crag_core.text.documents import above_floor

    ranking = [
        doc("dense", "x", 0.5),
        keyword_hit("kw1", 0.28, rank=1),
        keyword_hit("kw2", 0.27, rank=2),
        keyword_hit("kw3", 0.26, rank=3),
    ]
    ids = lambda docs: [d.metadata["id"] for d in docs]  # noqa: E731
    assert ids(above_floor([ranking], 0.3, 0.2)) == ["dense", "kw1"]
    assert ids(above_floor([ranking], 0.3, 0.2, {"kw1"})) == ["dense", "kw2"]
    assert ids(above_floor([ranking], 0.3, 0.2, {"kw1", "kw2"})) == ["dense", "kw3"]
    gap = [doc("dense", "x", 0.5), keyword_hit("kw3", 0.26, rank=3)]
    assert ids(above_floor([gap], 0.3, 0.2, {"kw1"})) == ["dense"]  # rank 2 unknown: no exemption


# grade_documents -------------------------------------------------------------------------


def test_grade_documents_scores_the_documents_once_and_says_correct(fake_services):
    llm = fake_services().llm
    update = grade_documents({"question": Q, "documents": KB_DOCS}, rt())
    assert update["retrieval_verdict"] == "correct" and update["retrieval_score"] == 1.0
    assert [d.metadata["id"] for d in update["relevant_documents"]] == [
        "sb50__c0000",
        "sb50__c0001",
    ]
    assert [d.metadata["relevant"] for d in update["documents"]] == ["yes", "yes"]
    assert llm.prompts_called() == ["grade_documents"]  # one call for the whole set
    assert update["prompt_versions"] == {"grade_documents": "v2", "evidence": "v1"}


def test_grade_documents_incorrect_rejects_every_document(fake_services):
    fake_services(llm=make_llm(lambda p, t: "no"))
    update = grade_documents({"question": Q, "documents": KB_DOCS}, rt())
    assert update["retrieval_verdict"] == "incorrect"
    assert update["relevant_documents"] == []
    assert [d.metadata["relevant"] for d in update["documents"]] == ["no", "no"]


@pytest.mark.parametrize(
    ("score", "verdict"),
    [(0.9, "correct"), (0.7, "correct"), (0.5, "ambiguous"), (0.2, "incorrect")],
)
def test_the_three_way_decision_uses_both_thresholds(score, verdict):
    ctx = Context(correct_threshold=0.7, incorrect_threshold=0.3)
    assert decide(score, ctx) == verdict


def test_grade_documents_with_no_documents_calls_no_model(fake_services):
    llm = fake_services().llm
    update = grade_documents({"question": Q, "documents": []}, rt())
    assert update["retrieval_verdict"] == "incorrect" and llm.calls == []


def test_grade_documents_unusable_reply_keeps_documents_with_warning(fake_services):
    fake_services(llm=make_llm(lambda p, t: "Sure! The document is great."))
    update = grade_documents({"question": Q, "documents": KB_DOCS[:1]}, rt())
    assert update["retrieval_verdict"] == "correct"
    assert "neither yes nor no" in update["warnings"][0]


def test_grade_documents_after_web_search_scores_kept_documents_and_results_together(
    fake_services,
):
    llm = make_llm(lambda p, t: "yes" if "Leonardo" in t else "no")
    fake_services(llm=llm)
    state: PassState = {
        "question": Q,
        "documents": KB_DOCS,
        "relevant_documents": KB_DOCS[:1],
        "web_searched": True,
        "web_results": WEB_DOCS,
    }
    update = grade_documents(state, rt())
    assert [d.metadata["id"] for d in update["relevant_documents"]] == [
        "sb50__c0000",
        "web:Mona_Lisa",
    ]
    text = llm.calls[0]["text"]
    assert text.index('id="S1"') < text.index("Broncos defeated") < text.index("Leonardo")
    fake_services(llm=make_llm(lambda p, t: "no"))
    assert grade_documents(state, rt())["relevant_documents"] == []


@pytest.mark.parametrize(("evidence_threshold", "kept"), [(0.3, 1), (0.5, 0)])
def test_web_evidence_is_answered_from_at_the_evidence_threshold_not_the_lower_one(
    fake_services, evidence_threshold, kept
):
    fake_services(llm=make_llm(lambda p, t: 0.4))
    state: PassState = {
        "question": Q,
        "documents": KB_DOCS,
        "relevant_documents": [],
        "web_searched": True,
        "web_results": WEB_DOCS,
    }
    ctx = {"incorrect_threshold": 0.45, "evidence_threshold": evidence_threshold}
    update = grade_documents(state, rt(**ctx))
    assert update["evidence_score"] == pytest.approx(0.4)
    assert len(update["relevant_documents"]) == kept


@pytest.mark.parametrize(
    ("kb_score", "fallback", "kept"),
    [(0.45, True, ["sb50__c0000"]), (0.35, True, []), (0.45, False, [])],
)
def test_ambiguous_documents_that_scored_higher_alone_are_kept_when_the_web_lowers_them(
    fake_services, kb_score, fallback, kept
):
    fake_services(llm=make_llm(lambda p, t: 0.4))  # the evidence with the web scores 0.4
    state: PassState = {
        "question": Q,
        "documents": KB_DOCS,
        "retrieval_score": kb_score,
        "retrieval_verdict": "ambiguous",
        "relevant_documents": KB_DOCS[:1],
        "web_searched": True,
        "web_results": WEB_DOCS,
    }
    update = grade_documents(state, rt(kb_fallback=fallback))
    assert [d.metadata["id"] for d in update["relevant_documents"]] == kept
    assert bool(update.get("kb_fallback")) == bool(kept)


def test_grade_documents_after_a_failed_web_search_keeps_the_decision(fake_services):
    llm = fake_services().llm
    state: PassState = {
        "question": Q,
        "documents": KB_DOCS,
        "web_searched": True,
        "web_results": [],
    }
    assert grade_documents(state, rt()) == {} and llm.calls == []


def test_every_prompt_of_a_pass_starts_with_the_same_documents(fake_services):
    llm = fake_services().llm
    state: PassState = {"question": Q, "documents": KB_DOCS}
    state = as_state({**state, **grade_documents(state, rt())})
    state = as_state({**state, **generate(state, rt())})
    state["generation"] = "They won easily."
    check_relevance(state, rt(answer_threshold=0.5))
    firsts = [str(c["messages"][0]) for c in llm.calls]
    shared = firsts[0].split("Question:")[0]
    assert KB_DOCS[0].page_content in shared and "data from a search" in shared
    assert len(firsts) == 3 and all(f.startswith(shared) for f in firsts)
    # the evaluator and the check follow the evidence message; the generator asks last
    assert [len(c["messages"]) for c in llm.calls] == [2, 1, 2]
    assert firsts[1].rstrip().endswith(f"Question: {Q}\nAnswer:")


# web_search ------------------------------------------------------------------------------


def test_web_search_adds_results(fake_services):
    web = FakeWebSearch(WEB_DOCS)
    fake_services(web=web)
    update = web_search({"question": Q, "rewritten_query": "mona lisa painter"}, rt())
    assert update["web_results"] == WEB_DOCS and update["web_search_used"] is True
    assert update["web_searched"] is True
    assert web.queries == ["mona lisa painter"]


def test_web_search_failure_is_a_warning_not_a_document(fake_services):
    fake_services(web=FakeWebSearch(error="HTTP 429 Too Many Requests"))
    update = web_search({"question": Q, "web_results": WEB_DOCS}, rt())
    assert "web_results" not in update  # earlier results stay; the error text is no document
    assert "429" in update["warnings"][0]


def test_web_search_off(fake_services):
    fake_services(web=None)
    update = web_search({"question": Q}, rt())
    assert update == {
        "web_searched": True,
        "warnings": ["Web search is off; the answer uses the knowledge base only."],
    }


# generate --------------------------------------------------------------------------------


def test_generate_answers_original_question_from_the_accepted_evidence(fake_services):
    llm = fake_services().llm
    state: PassState = {
        "question": Q,
        "rewritten_query": "REWRITE",
        "relevant_documents": [KB_DOCS[0], WEB_DOCS[0]],
    }
    update = generate(state, rt())
    assert update["generation"] == "The Denver Broncos won, 24–10. [S1]"
    text = llm.calls[0]["text"]
    assert Q in text and "REWRITE" not in text
    # Documents are shown under the short keys the answer cites, kept documents first.
    assert text.index('id="S1"') < text.index("Broncos defeated") < text.index('id="S2"')
    assert text.index('id="S2"') < text.index("Leonardo da Vinci")


def test_generate_without_documents_declines_without_model(fake_services):
    llm = fake_services().llm
    assert generate({"question": Q}, rt())["generation"] == NO_ANSWER
    assert llm.calls == []


def test_generate_includes_feedback_on_retry(fake_services):
    llm = fake_services().llm
    generate({"question": Q, "relevant_documents": KB_DOCS, "feedback": "it was wrong."}, rt())
    assert "A previous answer was rejected: it was wrong." in llm.calls[0]["text"]


@pytest.mark.parametrize(
    ("reply", "text", "expected"),
    [
        ("A name, number, date, place or short phrase [S1]", "Knots are tied.", NO_ANSWER),
        ("date [S1]", "Its fruit is the date.", "date [S1]"),  # in a document: an answer
        ("short phrase", "No phrase here.", NO_ANSWER),
        ("Denver Broncos [S1]", "Knots are tied.", "Denver Broncos [S1]"),
    ],
)
def test_generate_an_echo_of_the_instructions_is_no_answer(fake_services, reply, text, expected):
    fake_services(llm=make_llm(lambda p, t: reply))
    state: PassState = {"question": Q, "relevant_documents": [doc("d1", text)]}
    assert generate(state, rt())["generation"] == expected


def test_generate_an_answer_repeated_after_feedback_is_no_echo(fake_services):
    # The feedback quotes the previous answer; the answer is still the model's own.
    fake_services(llm=make_llm(lambda p, t: "The Broncos did it."))
    state: PassState = {
        "question": Q,
        "relevant_documents": KB_DOCS,
        "citation_feedback": "Your previous answer was: 'The Broncos did it.', but it cited no "
        "document.",
    }
    assert generate(state, rt())["generation"] == "The Broncos did it."


# check_hallucination ---------------------------------------------------------------------


def test_check_hallucination_verbatim_span_needs_no_grounding_judge(fake_services):
    llm = fake_services().llm
    state: PassState = {
        "question": Q,
        "generation": "the Denver Broncos",
        "relevant_documents": KB_DOCS,
    }
    update = check_hallucination(state, rt())
    assert update["grounded"] == "yes" and update["support_score"] == 1.0
    # one short call: is the sentence it was copied from about this question?
    assert llm.prompts_called() == ["check_support"]
    sentence = llm.calls[0]["text"]
    assert "Sentence: Super Bowl 50: the Denver Broncos defeated" in sentence
    assert f"Question: {Q}" in sentence and "Proposed answer: the Denver Broncos" in sentence


def test_check_hallucination_rejects_names_and_numbers_absent_from_documents(fake_services):
    llm = fake_services().llm
    state: PassState = {
        "question": Q,
        "generation": "The Panthers won 31–7.",
        "relevant_documents": KB_DOCS,
    }
    update = check_hallucination(state, rt())
    assert update["grounded"] == "no" and "31" in update["feedback"]
    state["generation"] = "Jupiter is the answer."
    assert check_hallucination(state, rt())["grounded"] == "no"
    assert llm.calls == []


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ("6", "Six-time Grammy winner Lady Gaga performed."),
        ("9", "at least three members and no more than nine members"),
        ("25 years", "It lasted twenty-five years."),
    ],
)
def test_check_hallucination_spelled_numbers_are_copied_spans(fake_services, answer, text):
    llm = fake_services().llm
    docs = [doc("d1", text)]
    state: PassState = {"question": Q, "generation": answer, "relevant_documents": docs}
    assert check_hallucination(state, rt())["grounded"] == "yes"
    assert llm.prompts_called() == ["check_support"]  # no grounding judge, its sentence only
    assert text in llm.calls[0]["text"]


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ("Yes, it does.", "The word means burn."),
        ("They were 6 times champions.", "Six-time winners of the cup."),
        ("Forces act on bodies.", "A force acts on a body."),
    ],
)
def test_check_hallucination_leaves_function_words_and_plurals_to_the_judge(
    fake_services, answer, text
):
    llm = make_llm(lambda p, t: "yes")
    fake_services(llm=llm)
    docs = [doc("d1", text)]
    state: PassState = {"question": Q, "generation": answer, "relevant_documents": docs}
    update = check_hallucination(state, rt())
    assert update["grounded"] == "yes" and update["grounding_score"] == 1.0
    assert len(llm.calls) == 1


@pytest.mark.parametrize(
    ("answer", "text"),
    [("7", "Six-time winner."), ("26 years", "It lasted twenty-five years."), ("2", "twenty")],
)
def test_check_hallucination_other_numbers_still_fail_without_the_model(
    fake_services, answer, text
):
    llm = fake_services().llm
    docs = [doc("d1", text)]
    state: PassState = {"question": Q, "generation": answer, "relevant_documents": docs}
    assert check_hallucination(state, rt())["grounded"] == "no"
    assert llm.calls == []


def test_check_hallucination_asks_judge_otherwise(fake_services):
    llm = make_llm(lambda p, t: "no")
    fake_services(llm=llm)
    state: PassState = {
        "question": Q,
        "generation": "The Broncos won easily.",
        "relevant_documents": KB_DOCS,
    }
    update = check_hallucination(state, rt())
    assert update["grounded"] == "no" and "won easily" in update["feedback"]
    assert update["prompt_versions"] == {"check_hallucination": "v2", "evidence": "v1"}


def test_check_hallucination_unparsable_is_unknown_with_warning(fake_services):
    fake_services(llm=make_llm(lambda p, t: "maybe"))
    state: PassState = {
        "question": Q,
        "generation": "The Broncos won easily.",
        "relevant_documents": KB_DOCS,
    }
    update = check_hallucination(state, rt())
    assert update["grounded"] == "unknown" and update["warnings"]


# check_relevance -------------------------------------------------------------------------


def test_check_relevance_declined_answer_fails_without_model(fake_services):
    llm = fake_services().llm
    update = check_relevance({"question": Q, "generation": NO_ANSWER}, rt())
    assert update["answers_question"] == "no" and llm.calls == []


def test_check_relevance_reads_documents_question_and_answer(fake_services):
    llm = make_llm(lambda p, t: "no")
    fake_services(llm=llm)
    state: PassState = {
        "question": Q,
        "generation": "Carolina Panthers",
        "relevant_documents": KB_DOCS,
    }
    update = check_relevance(state, rt(answer_threshold=0.5))
    assert update["answers_question"] == "no" and "Carolina Panthers" in update["feedback"]
    text = llm.calls[0]["text"]
    assert "Broncos defeated" in text and Q in text and "Proposed answer: Carolina Panthers" in text


def test_check_relevance_compares_the_score_with_the_answer_threshold(fake_services):
    fake_services(llm=make_llm(lambda p, t: "yes"))
    state: PassState = {
        "question": Q,
        "generation": "Denver Broncos",
        "relevant_documents": KB_DOCS,
    }
    assert check_relevance(state, rt(answer_threshold=0.5))["answers_question"] == "yes"
    assert check_relevance(state, rt(answer_threshold=1.0))["answers_question"] == "yes"
    llm = fake_services(llm=make_llm(lambda p, t: "no")).llm
    assert check_relevance(state, rt(answer_threshold=0.5))["answers_question"] == "no"
    llm.calls.clear()
    assert check_relevance(state, rt(answer_threshold=0.0))["answers_question"] == "yes"
    assert llm.calls == []  # a threshold of 0 turns the check off


def test_check_relevance_refuses_an_answer_to_a_choice_that_names_neither(fake_services):
    llm = fake_services(llm=make_llm(lambda p, t: "yes")).llm
    question = "Which data set has more instances: diabetes or iris plants?"
    state: PassState = {"question": question, "generation": "442", "relevant_documents": KB_DOCS}
    update = check_relevance(state, rt())  # whatever answer_threshold: no model is asked
    assert update["answers_question"] == "no" and llm.calls == []
    assert "'diabetes' or 'iris plants'" in update["feedback"] and "'442'" in update["feedback"]
    named = check_relevance({**state, "generation": "The diabetes data set"}, rt())
    assert named["answers_question"] == "yes"


def test_check_relevance_unparsable_is_unknown(fake_services):
    fake_services(llm=make_llm(lambda p, t: "Perhaps!"))
    update = check_relevance(
        {"question": Q, "generation": "The Broncos."}, rt(answer_threshold=0.5)
    )
    assert update["answers_question"] == "unknown" and update["warnings"]


def finish(values: Mapping[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """choose_answer, then finalize on its update: what a single pass's run returns."""
    state = as_state(values)
    chosen = choose_answer(state, runtime)
    return {**chosen, **finalize(as_state({**state, **chosen}), runtime)}


# increment_retry, choose_answer and finalize -------------------------------------------


def test_increment_retry_counts_and_keeps_the_attempt():
    state: PassState = {
        "question": Q,
        "retry_count": 1,
        "rewritten_query": "q",
        "generation": "g",
        "grounded": "no",
        "relevant_documents": KB_DOCS[:1],
        "citations": ["sb50__c0000"],
        "attempts": [],
    }
    update = increment_retry(state, rt())
    assert update["retry_count"] == 2
    assert update["attempts"][0]["query"] == "q"
    assert update["attempts"][0]["answers_question"] is None
    assert update["attempts"][0]["sources"][0]["id"] == "sb50__c0000"


def test_increment_retry_records_the_chunks_the_grader_rejected():
    graded = [doc("a", "x"), doc("b", "y"), doc("c", "z")]
    for d, grade in zip(graded, ["yes", "no", "no"], strict=True):
        d.metadata["relevant"] = grade
    state: PassState = {"question": Q, "documents": graded, "rejected_chunks": ["z", "b"]}
    assert applied(state, increment_retry(state, rt()))["rejected_chunks"] == ["z", "b", "c"]


def test_finalize_returns_passing_answer_and_its_sources():
    state = {
        "question": Q,
        "generation": "Broncos",
        "grounded": "yes",
        "answers_question": "yes",
        "relevant_documents": [*KB_DOCS, *WEB_DOCS],
        "citations": ["web:Mona_Lisa", "sb50__c0000"],
    }
    update = finish(state, rt(min_confidence=0))  # the confidence gate: test_confidence.py
    assert update["answer"] == "Broncos" and update["warnings"] == []
    # Only cited documents are sources (sb50__c0001 was in the context but not cited).
    assert [s["id"] for s in update["sources"]] == ["sb50__c0000", "web:Mona_Lisa"]
    assert update["retry_count"] == 0 and update["web_search_used"] is False


def test_finalize_gives_no_unverified_answer_but_names_the_best_one():
    good = {
        "query": "q1",
        "generation": "Broncos",
        "sources": [{"id": "a", "source": "s"}],
        "grounded": "yes",
        "answers_question": "no",
    }
    state = {
        "question": Q,
        "generation": "Panthers 9-9",
        "grounded": "no",
        "retry_count": 2,
        "attempts": [good],
        "feedback": "the answer states 9, which no document contains.",
    }
    update = finish(state, rt())
    assert update["answer"] == NO_ANSWER and update["sources"] == []
    assert "after 2 retries" in update["warnings"][0] and "'Broncos'" in update["warnings"][0]


def test_finalize_passes_a_plain_no_answer_without_a_warning():
    update = finish({"question": Q, "generation": NO_ANSWER}, rt())
    assert update["answer"] == NO_ANSWER and update["warnings"] == []
