"""Whether an answer is of the kind its question asks for (a confidence signal)."""

from __future__ import annotations

import pytest

from crag_core.text.answer_type import type_fits


@pytest.mark.parametrize(
    ("question", "answer", "fits"),
    [
        ("How many touchdowns did Newton throw?", "two", True),
        ("How many touchdowns did Newton throw?", "12,000 millimetres", True),
        ("How many touchdowns did Newton throw?", "Cam Newton", False),
        ("What percentage of voters turned out?", "about half", True),
        ("When did the war end?", "1945", True),
        ("When did the war end?", "in the spring", True),
        ("When did the war end?", "the treaty", False),
        ("In what year was it built?", "1889", True),
        ("Who designed the tower?", "Gustave Eiffel", True),
        ("Who designed the tower?", "1889", False),
        ("Where is the tower?", "Paris", True),
        ("Where is the tower?", "on the river bank", False),
        ("What is the tower made of?", "iron", None),
        ("Which river flows through the city?", "Seine", None),
    ],
)
def test_an_answer_fits_the_kind_its_question_asks_for(question, answer, fits):
    assert type_fits(question, answer) is fits
