"""A chunk's region on its page, from the lines its reader placed (crag_core.text.regions)."""

from __future__ import annotations

from crag_core.text.regions import box_text, parse_box, region

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

    from nodes.answers import sources_of

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
