"""Whole answers: a span cut short in its document grown to what it names, and no further."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from crag_core.text.whole_answer import whole_answer


@pytest.mark.parametrize(
    "answer, text, whole",
    [
        # a number keeps its unit or scale, and its currency
        (
            "12,000",
            "Rainfall reaches 12,000 millimetres (460 in) on the coast.",
            "12,000 millimetres",
        ),
        ("46", "The river is 46 km long.", "46 km"),
        ("5 million", "A budget of $5 million was set.", "$5 million"),
        ("30", "Turnout was 30% that year.", "30%"),
        # a score both sides, a range both ends
        ("24", "Denver won 24–10 over Carolina.", "24–10"),
        ("10", "Denver won 24 – 10 over Carolina.", "24 – 10"),
        ("1990", "The war lasted 1990–1995 there.", "1990–1995"),
        # a name all of itself
        ("Rhine", "It forms the Rhine–Meuse–Scheldt river delta.", "Rhine–Meuse–Scheldt"),
        ("Denver", "The Denver Broncos defeated the Carolina Panthers.", "Denver Broncos"),
        ("Broncos", "The Denver Broncos defeated the Carolina Panthers.", "Denver Broncos"),
    ],
)
def test_a_span_cut_short_is_made_whole(answer, text, whole):
    assert whole_answer(answer, [Document(page_content=text)]) == whole


@pytest.mark.parametrize(
    "answer, text",
    [
        ("Paris", "Paris – the capital – hosted it."),  # a spaced dash joins numbers only
        ("9", "They scored on a 9-play drive."),  # a number joins no word
        ("1920", "He moved in 1920 to Paris."),  # "in" is a word, not inches
        ("Larry Ellison", "The richest man in America Larry Ellison said."),  # a whole name
        ("Jacksonville", "It struck the coast. Jacksonville was flooded."),  # another sentence
        ("February 7, 2016", "It was played on February 7, 2016, at Levi Stadium."),
        ("Obama", "Nothing here says it."),  # not in the documents: left as it is
        (
            "a long answer of many words that is a sentence",
            "a long answer of many words that is a sentence and more",
        ),
    ],
)
def test_an_answer_that_is_whole_is_left_as_it_is(answer, text):
    assert whole_answer(answer, [Document(page_content=text)]) == answer


def test_it_grows_by_a_few_words_at_most_and_from_the_document_cited_first():
    docs = [Document(page_content="Score: 24–10."), Document(page_content="It ended 24 points up.")]
    assert whole_answer("24", docs) == "24–10"
    assert whole_answer("24", docs[::-1]) == "24 points"
    chain = "The A-B-C-D-E-F-G line."
    assert whole_answer("A", [Document(page_content=chain)]) == "A-B-C-D-E"


def test_an_answer_is_never_grown_into_the_context_line_of_its_chunk():
    from crag_core.text.documents import with_context

    line = "Velna River Authority > Warnings"
    text = "Flood warnings for the Velna basin were issued on Monday."
    doc = Document(with_context(text, line), metadata={"context": line})
    assert whole_answer("Velna", [doc]) == "Velna"  # not "Velna River Authority"
