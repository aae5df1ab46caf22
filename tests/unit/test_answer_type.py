"""Whether an answer is of the kind its question asks for (a confidence signal)."""

from __future__ import annotations

import pytest

from crag_core.text.answer_type import choice, names_one, type_fits


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


@pytest.mark.parametrize(
    ("question", "answer", "named"),
    [
        ("Which data set has more instances: diabetes or iris plants?", "442", False),
        ("Which data set has more instances: diabetes or iris plants?", "Iris", True),
        (
            "Which has more: optical recognition of handwritten digits or wine recognition?",
            "the handwritten digits",
            True,
        ),
        ("Who got more votes in Villeray: Joly or Coderre?", "Coderre", True),
        ("Who got more votes in Villeray: Joly or Coderre?", "Bergeron", False),
        ("Which is older: the bridge or the tower?", "Neither: both were built in 1889", True),
        ("Which had the higher GDP per capita in 1987: Nigeria or Niger?", "Niger", True),
        ("How many instances do the wine or iris data sets have?", "150", None),
        ("What expression is generally used to convey upper or lower bounds?", "x", None),
        ("Which river flows through the city?", "Seine", None),
    ],
)
def test_an_answer_to_a_choice_names_one_of_its_alternatives(question, answer, named):
    pair = choice(question)
    assert (pair is None) is (named is None)
    assert pair is None or names_one(answer, pair) is named
