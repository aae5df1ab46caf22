"""Knowledge refinement (strips) and CRAG's three-way retrieval decision with thresholds."""

from __future__ import annotations

from langgraph.runtime import Runtime

from graph.context import Context
from nodes.grade_documents import decide
from nodes.refine_knowledge import GAP, refine_knowledge, split_strips
from tests.conftest import doc
from tests.unit.test_ingest import HashEmbeddings

LONG = (
    "The stadium opened in 2014. Parking is free on Sundays. The Denver Broncos won Super "
    "Bowl 50 there. Tickets sold out in an hour. The halftime show featured Coldplay. "
    "Rain was forecast but never came."
)


def rt(**ctx) -> Runtime[Context]:
    return Runtime(context=Context(**ctx))


def test_split_strips_splits_sentences_only_at_sentence_ends():
    assert split_strips("Dr. No was filmed in 1962. It starred Sean Connery.") == [
        "Dr. No was filmed in 1962.",
        "It starred Sean Connery.",
    ]
    assert split_strips("One sentence without an end") == ["One sentence without an end"]
    assert split_strips("J. R. R. Tolkien was born in the U.S. He was not. Really?") == [
        "J. R. R. Tolkien was born in the U.S. He was not.",
        "Really?",
    ]


def test_refinement_keeps_the_best_strips_in_document_order():
    from crag.services import Services, use_services
    from tests.conftest import FakeRetriever, FakeWebSearch, happy_responder, make_llm

    services = Services(
        llm=make_llm(happy_responder),
        retriever=FakeRetriever([]),
        web_search=FakeWebSearch(),
        embeddings=HashEmbeddings(),
    )
    state = {
        "question": "Who won Super Bowl 50 at the stadium?",
        "relevant_documents": [doc("long__c0000", LONG), doc("short__c0000", "Short one.")],
    }
    with use_services(services):
        update = refine_knowledge(state, rt(refine_top_strips=2))
    long_doc, short_doc = update["refined_documents"]
    assert "Denver Broncos won Super Bowl 50" in long_doc.page_content
    assert "Coldplay" not in long_doc.page_content
    assert long_doc.metadata["refined"] == "2/6 strips"
    assert long_doc.page_content.index("stadium") < long_doc.page_content.index("Broncos")
    assert GAP in long_doc.page_content  # the kept strips were not adjacent
    assert short_doc.page_content == "Short one."  # nothing to remove
    assert long_doc.metadata["id"] == "long__c0000"  # citations still name the chunk

    with use_services(services):
        off = refine_knowledge(state, rt(refine=False))
    assert [d.page_content for d in off["refined_documents"]] == [LONG, "Short one."]


def test_three_way_decision_uses_the_thresholds():
    ctx = Context(confident_similarity=0.5, min_relevant_docs=1)
    assert decide([], ctx) == "incorrect"
    assert decide([doc("a", "x", score=0.45)], ctx) == "ambiguous"
    assert decide([doc("a", "x", score=0.45), doc("b", "y", score=0.55)], ctx) == "correct"
    two = Context(confident_similarity=0.5, min_relevant_docs=2)
    assert decide([doc("b", "y", score=0.55)], two) == "ambiguous"


def test_thresholds_are_validated():
    import pytest

    from crag.errors import ConfigError

    with pytest.raises(ConfigError, match="confident_similarity"):
        Context(min_similarity=0.5, confident_similarity=0.4)
