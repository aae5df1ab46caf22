"""A question about one whole document: named, read in order, in parts when long."""

from __future__ import annotations

from typing import Any

import pytest

from crag.run import run_question
from crag_core.schema.context import Context
from crag_core.text.whole_document import document_request, joined, parts
from tests.fakes import doc, happy_responder, make_llm

DOCS: list[dict[str, Any]] = [
    {"doc_id": "ps", "label": "notes/packet_switching.md", "title": "Packet switching"},
    {"doc_id": "sb", "label": "super_bowl_50.md", "title": "Super Bowl 50"},
    {"doc_id": "sb2", "label": "super_bowl_51.md", "title": "Super Bowl 51"},
]


@pytest.mark.parametrize(
    ("question", "doc_id", "topic"),
    [
        ("Summarise packet switching", "ps", ""),
        ("Give me an overview of packet_switching.md", "ps", ""),
        ("What does the Packet switching note say about Baran?", "ps", "Baran?"),
        ("Summarize Super Bowl 50", "sb", ""),
    ],
)
def test_the_document_a_question_names(question, doc_id, topic):
    request = document_request(question, DOCS)
    assert request is not None and request.document["doc_id"] == doc_id
    assert request.topic == topic.rstrip("?")


@pytest.mark.parametrize(
    "question",
    [
        "Who invented packet switching?",  # a look-up, not about the document
        "Summarise the Super Bowl",  # names neither document: both alike
        "Summarise my taxes",  # names none
    ],
)
def test_not_a_whole_document_question(question):
    assert document_request(question, DOCS) is None


def test_chunks_joined_with_their_overlap_once_and_cut_into_parts():
    assert joined(["one two three four", "three four five six", "seven"]) == (
        "one two three four five six\nseven"
    )
    text = "\n".join(f"line {i:03d} " + "x" * 30 for i in range(100))
    pieces = parts(text, 200)  # 800 characters each at most
    assert all(len(p) <= 800 for p in pieces) and len(pieces) >= 5
    assert "".join(p + "\n" for p in pieces).strip() == text


def reader(prompt: str, text: str) -> Any:
    if prompt == "read_document":
        return f"part about {text.count('chunk')} chunks"
    if prompt == "combine_readings":
        return "joined: " + text.split("Part 1: ")[1].split("\n")[0]
    return happy_responder(prompt, text)


def install(fake_services: Any, chunks: list[str]) -> Any:
    services = fake_services(llm=make_llm(reader))
    object.__setattr__(services, "documents", lambda: DOCS)
    object.__setattr__(
        services,
        "document_chunks",
        lambda doc_id: [doc(f"{doc_id}__c{i:04d}", c) for i, c in enumerate(chunks)],
    )
    return services


def test_a_short_document_is_read_whole_in_one_call(fake_services):
    services = install(fake_services, ["chunk one.", "chunk two."])
    result = run_question("Summarise packet switching", Context())
    assert result.path[3:] == ["choose_tool", "read_document", "finalize"]
    assert result.state["answer"] == "part about 2 chunks"
    assert result.state["sources"] == [
        {"id": "ps", "source": "notes/packet_switching.md", "location": "the whole document"}
    ]
    assert [c["prompt"] for c in services.llm.calls] == ["read_document"]


def test_a_long_document_is_read_in_bounded_parts_and_joined(fake_services):
    services = install(fake_services, [f"chunk {i} " + "y" * 900 for i in range(40)])
    result = run_question("Summarise packet switching", Context(context_tokens=1000))
    prompts = [c["prompt"] for c in services.llm.calls]
    assert prompts == ["read_document"] * 6 + ["combine_readings"]
    assert result.state["answer"].startswith("joined: part about")
    assert "the first 6 of its" in result.state["sources"][0]["location"]
    assert any("Only the first 6" in w for w in result.state["warnings"])


def test_a_document_that_does_not_say_is_i_dont_know_and_its_silent_parts_left_out(
    fake_services,
):
    def silent(prompt: str, text: str) -> Any:
        if prompt == "read_document":
            return "Baran wrote it." if "chunk 3 " in text else "The document does not say."
        return happy_responder(prompt, text)

    services = install(fake_services, ["chunk one.", "chunk two."])
    object.__setattr__(services, "llm", make_llm(silent))
    result = run_question("Summarise packet switching", Context())
    assert result.state["answer"] == "I don't know."
    assert any(
        "was read (the whole document) and does not say" in w for w in result.state["warnings"]
    )
    services = install(fake_services, [f"chunk {i} " + "y" * 900 for i in range(12)])
    object.__setattr__(services, "llm", make_llm(silent))
    result = run_question("Summarise packet switching", Context(context_tokens=1000))
    assert result.state["answer"] == "Baran wrote it."  # the one part that says, uncombined
    assert "combine_readings" not in [c["prompt"] for c in services.llm.calls]


def test_a_readings_signals_say_how_much_of_the_document_the_answer_covers():
    from nodes.shared.confidence import document_signals, salient

    text = (
        "Packet switching sends data in packets. Each packet is routed on its own; "
        "packets are reassembled at the destination. Baran and Davies designed packet "
        "switching networks. Routers forward packets by their headers."
    )
    assert salient(text, 2) == ["packet", "switch"]  # stems, most frequent first
    on_topic = document_signals("packet_switching.md", text, "Packets routed alone.", 1, 1, 0)
    off_topic = document_signals("packet_switching.md", text, "Baran designed it.", 2, 4, 1)
    assert (on_topic["covered"] or 0.0) > (off_topic["covered"] or 0.0)
    assert on_topic["named"] == 0.5 and off_topic["named"] == 0.0  # "packet" of the name said
    assert (on_topic["unread"], off_topic["unread"]) == (0.0, 0.5)  # 2 of 4 parts read
    assert (on_topic["declined"], off_topic["declined"]) == (0.0, 0.5)


def test_a_summary_carries_a_fitted_confidence_and_the_one_gate_reads_it(fake_services):
    install(fake_services, ["chunk one.", "chunk two."])
    result = run_question("Summarise packet switching", Context())
    assert result.state["answer"] == "part about 2 chunks"  # says "chunk", the doc's top word
    confidence = result.state["confidence"]
    assert confidence is not None and 0.5 < confidence < 1.0
    install(fake_services, ["chunk one.", "chunk two."])
    held = run_question("Summarise packet switching", Context(min_confidence=0.99))
    assert held.state["answer"] == "I don't know."  # withheld by finalize's gate
    assert any("under min_confidence 0.99" in w for w in held.state["warnings"])
