"""Knowledge refinement (strips) and CRAG's three-way retrieval decision with thresholds."""

from __future__ import annotations

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.schema.context import Context
from crag_core.schema.state import PassState
from crag_core.text.sentences import split_sentences
from nodes.correction.refine_knowledge import GAP, refine_knowledge
from tests.fakes import HashEmbeddings, doc, make_services

LONG = (
    "The stadium opened in 2014. Parking is free on Sundays. The Denver Broncos won Super "
    "Bowl 50 there. Tickets sold out in an hour. The halftime show featured Coldplay. "
    "Rain was forecast but never came."
)


def rt(**ctx) -> Runtime[Context]:
    return Runtime(context=Context(**ctx))


def test_split_sentences_splits_sentences_only_at_sentence_ends():
    assert split_sentences("Dr. No was filmed in 1962. It starred Sean Connery.") == [
        "Dr. No was filmed in 1962.",
        "It starred Sean Connery.",
    ]
    assert split_sentences("One sentence without an end") == ["One sentence without an end"]
    assert split_sentences("J. R. R. Tolkien was born in the U.S. He was not. Really?") == [
        "J. R. R. Tolkien was born in the U.S. He was not.",
        "Really?",
    ]


def test_refinement_keeps_the_best_strips_in_document_order():
    from tests.fakes import FakeRetriever, FakeWebSearch, happy_responder, make_llm

    services = Services(
        llm=make_llm(happy_responder),
        retriever=FakeRetriever([]),
        web_search=FakeWebSearch(),
        embeddings=HashEmbeddings(),
    )
    state: PassState = {
        "question": "Who won Super Bowl 50 at the stadium?",
        "web_results": [doc("web:long", LONG), doc("web:short", "Short one.")],
    }
    update = refine_knowledge(state, rt(refine_top_strips=2), services)
    long_doc, short_doc = update["web_results"]
    assert "Denver Broncos won Super Bowl 50" in long_doc.page_content
    assert "Coldplay" not in long_doc.page_content
    assert long_doc.metadata["refined"] == "2/6 strips"
    assert long_doc.page_content.index("stadium") < long_doc.page_content.index("Broncos")
    assert GAP in long_doc.page_content  # the kept strips were not adjacent
    assert short_doc.page_content == "Short one."  # nothing to remove
    assert long_doc.metadata["id"] == "web:long"  # citations still name the result

    assert refine_knowledge(state, rt(refine=False), services) == {}  # results pass unchanged


def test_knowledge_base_chunks_are_never_refined():
    # They are the pass's shared prompt prefix: rewriting them would cost a full re-read.
    state: PassState = {"question": "Who won?", "relevant_documents": [doc("long__c0000", LONG)]}
    assert refine_knowledge(state, rt(refine_top_strips=1), make_services()) == {}
