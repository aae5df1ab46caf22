"""Citation parsing and validation: only [S<n>] keys count; unknown keys get one correction."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from langchain_core.documents import Document
from langgraph.runtime import Runtime

from crag_core.schema.context import Context
from crag_core.text.citations import citation_keys, parse_citations, strip_citations
from crag_core.text.documents import containing
from crag_core.text.words import fold_numbers
from graph.graph import route_after_citations
from nodes.correction.validate_citations import validate_citations
from tests.fakes import KB_DOCS, WEB_DOCS, as_state


def rt(**ctx: Any) -> Runtime[Context]:
    return Runtime(context=Context(**ctx))


def test_parse_citations_finds_keys_in_order_without_duplicates():
    text = "Broncos [S2] won 24–10 [S1, S3]; again [s2] and [S4;S5]."
    assert parse_citations(text) == ["S2", "S1", "S3", "S4", "S5"]


def test_footnotes_and_references_are_not_citations():
    text = "The treaty [1] was signed in 1648 [Smith 2023], see [a] and [S] or [S1a] [12]."
    assert parse_citations(text) == []
    assert strip_citations(text) == text


def test_strip_citations_keeps_the_text_tidy():
    assert strip_citations("The Broncos won [S1]. Score 24–10 [S2, S3].") == (
        "The Broncos won. Score 24–10."
    )
    assert strip_citations("Denver Broncos [S1]") == "Denver Broncos"


@given(st.text())
def test_parsing_never_fails_and_stripping_removes_every_citation(text):
    keys = parse_citations(text)
    assert all(k.startswith("S") and k[1:].isdigit() for k in keys)
    assert parse_citations(strip_citations(text)) == []


@given(st.lists(st.integers(min_value=1, max_value=999), min_size=1, max_size=5))
def test_any_cited_key_list_round_trips(numbers):
    text = "Answer " + " ".join(f"[S{n}]" for n in numbers) + "."
    assert parse_citations(text) == list(dict.fromkeys(f"S{n}" for n in numbers))


def state(generation: str, **extra: Any) -> Any:
    return as_state(
        {
            "question": "Who won?",
            "generation": generation,
            "relevant_documents": [KB_DOCS[0], *WEB_DOCS],
            **extra,
        }
    )


def test_valid_citations_become_chunk_ids_and_markers_go():
    update = validate_citations(state("Broncos [S1], painted by Leonardo [S2]."), rt())
    assert update["citations"] == ["sb50__c0000", "web:Mona_Lisa"]
    assert update["generation"] == "Broncos, painted by Leonardo."
    assert "warnings" not in update
    assert route_after_citations(as_state(update)) == "check_hallucination"


def test_an_unknown_key_gets_one_correction_then_is_removed():
    first = validate_citations(state("Broncos [S7]."), rt())
    assert first["citation_corrections"] == 1
    assert "[S7]" in first["citation_feedback"] and "[S1], [S2]" in first["citation_feedback"]
    assert route_after_citations(as_state(first)) == "generate"

    second = validate_citations(state("Broncos [S7] [S1].", citation_corrections=1), rt())
    assert second["citations"] == ["sb50__c0000"]
    assert second["generation"] == "Broncos."
    assert any("S7" in w for w in second["warnings"])
    assert route_after_citations(as_state(second)) == "check_hallucination"


def test_an_answer_citing_a_document_without_it_is_attributed_to_the_one_that_has_it():
    update = validate_citations(state("Leonardo da Vinci [S1]"), rt())
    assert update["citations"] == ["web:Mona_Lisa"]
    assert update["generation"] == "Leonardo da Vinci"


def test_the_naive_pipeline_drops_unknown_keys_without_a_correction():
    update = validate_citations(state("Nobody [S7]."), rt(max_citation_corrections=0))
    assert update["citations"] == [] and any("S7" in w for w in update["warnings"])


def test_an_uncited_answer_found_in_a_document_is_attributed_without_a_second_generation():
    update = validate_citations(state("Leonardo da Vinci."), rt())
    assert update["citations"] == ["web:Mona_Lisa"]
    assert update["generation"] == "Leonardo da Vinci."
    assert "warnings" not in update and not update["citation_feedback"]
    assert route_after_citations(as_state(update)) == "check_hallucination"


def test_attribution_by_evidence_matches_whole_words_in_every_document_that_has_them():
    docs = [Document("It has 145 galleries."), Document("Room 4 of 145."), Document("None.")]
    assert containing("145", docs) == [0, 1]
    assert containing("4", docs) == [1]
    assert containing("One hundred", docs) == []
    assert containing("...", docs) == []
    assert containing("ROOM 4", docs) == [1]


def test_numbers_match_whether_written_in_digits_or_words():
    docs = [Document("It won seven times."), Document("Twenty-five years on."), Document("7")]
    assert containing("7", docs) == [0, 2]
    assert containing("seven times", docs) == [0]
    assert containing("25 years", docs) == [1]
    assert containing("20", docs) == []  # "twenty-five" is one number
    assert fold_numbers("one hundred and twenty five".split()) == ["100", "and", "25"]
    assert containing("100", [Document("Over a hundred species live there.")]) == [0]
    assert containing("2000", [Document("Two thousand people came.")]) == [0]


def test_an_uncited_answer_found_in_no_document_is_asked_once_then_has_no_sources():
    first = validate_citations(state("The Patriots."), rt())
    assert "cited no document" in first["citation_feedback"]
    second = validate_citations(state("The Patriots.", citation_corrections=1), rt())
    assert second["citations"] == [] and second["warnings"]


def test_the_answer_goes_on_without_talk_about_its_documents():
    update = validate_citations(state("Broncos. This was in document [S1]."), rt())
    assert update["generation"] == "Broncos." and update["citations"] == ["sb50__c0000"]
    update = validate_citations(state("According to the documents, Leonardo da Vinci."), rt())
    assert update["generation"] == "Leonardo da Vinci." and update["citations"] == ["web:Mona_Lisa"]
    assert not update["citation_feedback"]  # found word for word once the lead-in is gone


def test_a_no_answer_hidden_in_a_sentence_is_no_answer():
    update = validate_citations(state("Guilt implies [I don't know]."), rt())
    assert update == {"generation": "I don't know.", "citations": [], "citation_feedback": ""}
    assert route_after_citations(as_state(update)) == "choose_answer"


def test_no_answer_needs_no_citation():
    update = validate_citations(state("I don't know."), rt())
    assert update["citations"] == [] and not update["citation_feedback"]


def test_footnotes_inside_documents_do_not_count_as_citations():
    update = validate_citations(state("Signed in 1648 [1] [S1]."), rt())
    assert update["citations"] == ["sb50__c0000"]
    assert update["generation"] == "Signed in 1648 [1]."


def test_citation_keys():
    assert citation_keys(3) == ["S1", "S2", "S3"] and citation_keys(0) == []


def test_a_run_whose_generator_miscites_is_corrected_once(fake_services):
    from crag.run import run_question
    from tests.fakes import happy_responder, make_llm

    replies = iter(["The Denver Broncos won, 24–10. [S9]", "The Denver Broncos won, 24–10. [S1]"])

    def responder(prompt: str, text: str) -> Any:
        return next(replies) if prompt == "generate" else happy_responder(prompt, text)

    llm = make_llm(responder)
    fake_services(llm=llm)
    result = run_question("Which team won Super Bowl 50?", Context())
    assert result.path.count("generate") == 2 and result.path.count("validate_citations") == 2
    assert "cited [S9]" in [c for c in llm.calls if c["prompt"] == "generate"][1]["text"]
    assert [s["id"] for s in result.state["sources"]] == ["sb50__c0000"]
    assert result.state["warnings"] == []
