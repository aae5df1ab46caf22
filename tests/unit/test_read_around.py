"""Reading around a hit (completing its cut sentences from its neighbours) and the token budget."""

from __future__ import annotations

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from crag_core.schema.context import Context
from crag_core.schema.state import PassState
from crag_core.text.documents import body
from crag_core.text.read_around import (
    beginning,
    continuation,
    ends_cut,
    estimate_tokens,
    read_around,
    starts_cut,
    within_budget,
)
from nodes.correction.grade_documents import grade_documents
from nodes.correction.retrieve import retrieve
from tests.fakes import FakeRetriever, doc, make_llm, make_services

FIRST = (
    "The Panthers offense was loaded with talent. Other key receivers included veteran Jerricho "
    "Cotchery (39 receptions for 485 yards), rookie Devin Funchess (31"
)
SECOND = (
    "rookie Devin Funchess (31 receptions for 473 yards and five touchdowns), and second-year "
    "receiver Corey Brown (31 receptions for 447 yards). Carolina's line was strong."
)


def chunk(index: int, text: str, count: int = 2, score: float = 0.8) -> Document:
    d = doc(f"panthers__c{index:04d}", text, score=score)
    d.metadata |= {"doc_id": "panthers", "chunk": index, "chunks": count}
    return d


def test_cut_sentences_are_recognised():
    assert ends_cut(FIRST) and not ends_cut(SECOND)
    assert starts_cut(SECOND) and not starts_cut(FIRST)
    assert not ends_cut('He said "yes."') and not starts_cut("# Install\nRun it.")


def test_the_cut_sentence_is_completed_and_no_more():
    assert continuation(FIRST, SECOND) == (
        "receptions for 473 yards and five touchdowns), and second-year receiver Corey Brown "
        "(31 receptions for 447 yards)."
    )
    assert beginning(FIRST, SECOND) == (
        "Other key receivers included veteran Jerricho Cotchery (39 receptions for 485 yards),"
    )


def test_a_hit_reads_its_neighbours_by_positional_id():
    first, second = chunk(0, FIRST), chunk(1, SECOND)
    fetched: list[list[str]] = []

    def fetch(ids: list[str]) -> list[Document]:
        fetched.append(ids)
        return [d for d in (first, second) if d.id in ids]

    [read] = read_around([first], fetch)
    assert read.id == first.id and read.metadata["read_around"] == ["panthers__c0001"]
    assert read.page_content.endswith("Corey Brown (31 receptions for 447 yards).")
    assert "Carolina's line" not in read.page_content  # only the cut sentence
    assert first.page_content == FIRST  # the retrieved document is not changed in place
    [back] = read_around([second], fetch)
    assert back.page_content.startswith("Other key receivers included veteran Jerricho")
    # both neighbours retrieved: nothing to read, nothing fetched
    fetched.clear()
    assert read_around([first, second], fetch) == [first, second] and fetched == []


def test_a_chunk_without_position_or_at_the_document_end_reads_nothing():
    calls: list[list[str]] = []

    def fetch(ids: list[str]) -> list[Document]:
        calls.append(ids)
        return []

    last = chunk(1, SECOND + " And then the", count=2)
    assert read_around([doc("x", FIRST), last], fetch) == [
        doc("x", FIRST),
        last,
    ]
    assert calls == [["panthers__c0000"]]  # only the start of the last chunk looks back


def test_documents_are_held_to_the_budget_best_first():
    docs = [doc("a", "One. " * 40), doc("b", "Two two. " * 40), doc("c", "Three.")]
    assert estimate_tokens(docs[0].page_content) == 50
    kept = within_budget(docs, 80)
    assert [d.id for d in kept] == ["a", "b"]
    assert kept[1].metadata["truncated"] and kept[1].page_content.endswith("Two two.")
    assert sum(estimate_tokens(d.page_content) for d in kept) <= 80
    assert within_budget(docs, 1000) == docs


def test_a_chunk_cut_to_its_context_line_alone_is_dropped():
    from crag_core.text.documents import with_context

    line = "Velna river report. Annual figures. " * 3  # a line of sentences, 108 characters
    own = "The gauge at Orsk read 4.2 m on Monday. It rose until Thursday."
    text = with_context(own, line.strip())
    first = Document(page_content=text, id="a", metadata={"context": line.strip()})
    assert within_budget([first], 27) == []  # 108 characters fit: the line, none of its text
    [kept] = within_budget([first], 40)
    assert body(kept) == "The gauge at Orsk read 4.2 m on Monday." and kept.metadata["truncated"]


def test_retrieve_reads_around_and_keeps_to_the_budget():
    first, second = chunk(0, FIRST), chunk(1, SECOND, score=0.1)  # the neighbour is no hit
    retriever = FakeRetriever([first, second])
    runtime = Runtime(context=Context(min_similarity=0.3, read_around=True))
    update = retrieve(
        {"question": "How many receptions did Funchess have?"},
        runtime,
        make_services(retriever=retriever),
    )
    [hit] = update["documents"]
    assert "473 yards and five touchdowns" in hit.page_content
    off = Runtime(context=Context(min_similarity=0.3))  # off by default
    update = retrieve({"question": "Funchess?"}, off, make_services(retriever=retriever))
    assert update["documents"][0].page_content == FIRST
    tight = Runtime(context=Context(min_similarity=0.3, context_tokens=200))
    update = retrieve(
        {"question": "Funchess?"},
        tight,
        make_services(retriever=FakeRetriever([doc("long", "Word. " * 400)])),
    )
    assert sum(estimate_tokens(d.page_content) for d in update["documents"]) <= 200


def test_the_evidence_after_web_search_is_held_to_the_budget_too():
    llm = make_llm(lambda p, t: 0.9)
    state: PassState = {
        "question": "Who?",
        "web_searched": True,
        "relevant_documents": [doc("kb", "Known. " * 100)],
        "web_results": [doc("web:a", "Found. " * 100)],
    }
    update = grade_documents(
        state, Runtime(context=Context(context_tokens=250)), make_services(llm=llm)
    )
    assert sum(estimate_tokens(d.page_content) for d in update["relevant_documents"] or []) <= 250
    shown = llm.calls[0]["messages"][0]
    assert "Found." in shown and shown.count("Known.") == 100


def test_the_knowledge_base_hands_out_neighbours_by_id(tmp_path, data_dir):
    from crag.ingest import ingest
    from crag_core.clients.knowledge_base import KnowledgeBase, ModeRetriever
    from tests.fakes import HashEmbeddings

    sentences = [
        f"Sentence number {n} tells about item {n} in some detail here." for n in range(60)
    ]
    (tmp_path / "long.md").write_text(" ".join(sentences))
    kb = KnowledgeBase(data_dir / "chroma", "long-doc", HashEmbeddings())
    ingest(kb, [str(tmp_path / "long.md")])
    retriever = ModeRetriever(kb, "keyword")
    [hit] = retriever.search("item 12", 1)
    assert hit.metadata["chunks"] > 1
    [read] = read_around([hit], retriever.chunks)
    assert read.metadata.get("read_around") and not ends_cut(body(read))
    assert not starts_cut(body(read))
    assert read.page_content.startswith("long\n\n")  # still under its context line
    assert retriever.chunks(["nope__c0000"]) == []
