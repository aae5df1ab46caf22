"""A chunk's region on its page, from the lines its reader placed (crag_core.text.regions)."""

from __future__ import annotations

from crag_core.text.regions import (
    box_text,
    chunk_lines,
    lines_text,
    parse_box,
    quote_region,
    region,
)

LINES = (
    ("Flood warnings for the Velna", (0.1, 0.10, 0.8, 0.12)),
    ("basin were issued on Monday.", (0.1, 0.13, 0.7, 0.15)),
    ("The gauge at Orsk read 4.2 m", (0.1, 0.16, 0.75, 0.18)),
    ("and rose until Thursday.", (0.1, 0.19, 0.5, 0.21)),
    ("Page 3", (0.45, 0.95, 0.55, 0.97)),
)


def test_a_chunk_spans_the_lines_from_its_first_words_to_its_last():
    chunk = "basin were issued on Monday. The gauge at Orsk read 4.2 m"
    assert region(chunk, LINES) == (0.1, 0.13, 0.75, 0.18)


def test_a_chunk_cut_inside_a_line_still_takes_that_line():
    assert region("issued on Monday. The gauge at", LINES) == (0.1, 0.13, 0.75, 0.18)


def test_spacing_and_case_do_not_matter_but_other_words_do():
    assert region("FLOOD   warnings\nfor the Velna basin", LINES) == (0.1, 0.10, 0.8, 0.15)
    assert region("Rain warnings for the Tamra", LINES) is None
    assert region("", LINES) is None and region("Flood", ()) is None


def test_a_box_is_stored_as_text_and_read_back_only_when_it_is_one():
    assert parse_box(box_text((0.1, 0.13, 0.75, 0.18))) == (0.1, 0.13, 0.75, 0.18)
    for bad in (None, "", "1,2,3", "0.1,0.2,0.3,1.5", "a,b,c,d", 7):
        assert parse_box(bad) is None


def test_an_answers_source_carries_its_chunks_region():
    from langchain_core.documents import Document

    from nodes.shared.answers import sources_of

    doc = Document(
        "The gauge at Orsk read 4.2 m.",
        metadata={
            "id": "scan__c0000",
            "source": "/docs/scan.pdf",
            "page": 1,
            "box": "0.1,0.2,0.9,0.3",
        },
    )
    plain = Document("No place.", metadata={"id": "notes__c0000", "source": "/docs/notes.md"})
    with_box, without = sources_of([doc, plain])
    assert with_box["box"] == [0.1, 0.2, 0.9, 0.3] and with_box["location"] == "page 1"
    assert "box" not in without


def test_a_chunk_keeps_where_each_of_its_lines_starts_and_sits():
    chunk = "basin were issued on Monday. The gauge at Orsk read 4.2 m"
    spans = chunk_lines(chunk, LINES)
    assert spans == [(0, LINES[1][1]), (5, LINES[2][1])]  # "basin" is word 0, "The" word 5
    assert chunk_lines("Rain warnings for the Tamra", LINES) == []


def test_a_word_the_text_layer_spells_otherwise_does_not_lose_the_lines_after_it():
    layer = "basin were issued on Mon- day. The gauge at Orsk read 4.2 m"  # a split word
    assert [first for first, _ in chunk_lines(layer, LINES)] == [0, 6]


def test_the_quoted_sentence_is_marked_not_the_whole_chunk():
    chunk = "Flood warnings for the Velna basin were issued on Monday. The gauge at Orsk read 4.2 m"
    stored = lines_text(chunk_lines(chunk, LINES))
    assert quote_region(chunk, stored, "The gauge at Orsk read 4.2 m") == LINES[2][1]
    on_two = quote_region(
        chunk, stored, "Flood warnings for the Velna basin were issued on Monday."
    )
    assert on_two == (0.1, 0.10, 0.8, 0.15)
    assert quote_region(chunk, stored, "Rain fell in Tamra all week.") is None
    assert quote_region(chunk, None, "The gauge at Orsk read 4.2 m") is None  # no places kept
    assert quote_region(chunk, "3:garbage;x:0.1,0.1,0.2,0.2", "The gauge at Orsk read") is None


def test_an_answers_source_on_a_page_marks_the_sentence_it_stands_on():
    from langchain_core.documents import Document

    from nodes.shared.answers import sources_of

    text = "Flood warnings for the Velna basin were issued on Monday. The gauge at Orsk read 4.2 m"
    doc = Document(
        text,
        metadata={
            "id": "scan__c0000",
            "source": "/docs/scan.pdf",
            "page": 1,
            "box": box_text(region(text, LINES) or (0, 0, 1, 1)),
            "lines": lines_text(chunk_lines(text, LINES)),
        },
    )
    (source,) = sources_of([doc], "4.2 m", "What did the gauge at Orsk read?")
    assert source["quote"] == "The gauge at Orsk read 4.2 m"
    assert source["box"] == list(LINES[2][1])
    (unanswered,) = sources_of([doc])
    assert unanswered["box"] == [0.1, 0.10, 0.8, 0.18]  # no answer: the chunk's region


def test_a_chunk_under_its_context_line_marks_the_same_lines():
    from langchain_core.documents import Document

    from crag_core.text.documents import with_context
    from nodes.shared.answers import sources_of

    text = "Flood warnings for the Velna basin were issued on Monday. The gauge at Orsk read 4.2 m"
    doc = Document(
        with_context(text, "Velna river report"),  # as ingest stores it; the lines are the text's
        metadata={
            "id": "scan__c0000",
            "source": "/docs/scan.pdf",
            "page": 1,
            "context": "Velna river report",
            "lines": lines_text(chunk_lines(text, LINES)),
        },
    )
    (source,) = sources_of([doc], "Monday", "When were flood warnings issued for the Velna?")
    assert source["quote"] == "Flood warnings for the Velna basin were issued on Monday."
    assert source["box"] == [0.1, 0.10, 0.8, 0.15]  # its two lines, not the one after
