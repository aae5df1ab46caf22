"""The small-talk rules: whole messages only, never a question."""

from __future__ import annotations

import pytest

from crag_core.text.query_analysis import (
    is_dependent,
    is_small_talk,
    needs_context,
    nested_steps,
    split_parts,
    with_answer,
)


@pytest.mark.parametrize(
    "text",
    [
        "Hi!",
        "hello there, how are you?",
        "ok thanks",
        "Thank you so much!",
        "Who are you?",
        "What’s your name?",
        "bye",
        "Good evening, crag.",
        "cool - got it",
    ],
)
def test_small_talk(text):
    assert is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    [
        "Who won Super Bowl 50?",
        "Hi, who won Super Bowl 50?",
        "What can you tell me about Rome?",
        "help me find the capital of France",
        "Who are the Denver Broncos?",
        "thanks to whom?",
        "What is your source for that?",
        "",
        "   ",
        "yes, who is the president?",
    ],
)
def test_not_small_talk(text):
    assert not is_small_talk(text)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        (
            "Which team won Super Bowl 50, and what was the final score?",
            ["Which team won Super Bowl 50?", "What was the final score?"],
        ),
        (
            "How tall is the Eiffel Tower? How tall is the Empire State Building?",
            ["How tall is the Eiffel Tower?", "How tall is the Empire State Building?"],
        ),
        (
            "Where is Machu Picchu, who built it, and when was it rediscovered?",
            ["Where is Machu Picchu?", "Who built it?", "When was it rediscovered?"],
        ),
        (
            "Who wrote Hamlet and who wrote Don Quixote",
            ["Who wrote Hamlet?", "Who wrote Don Quixote?"],
        ),
        # one question, whatever its "and"
        ("What language is spoken in Brazil, in Mexico and in Haiti?", None),
        ("What do cats and dogs eat?", None),
        ("How and why did Rome fall?", None),
        ("Who won Super Bowl 50, and why?", None),  # "why?" is no question on its own
        # a phrase or clause before the question, a relative clause, a verb going on
        ("Before the merger, what was the company called?", None),
        ("In number theory, which theorem describes primes?", None),
        ("When the coach left the team, who replaced him?", None),
        ("Who was the quarterback, who was drafted in 2011?", None),
        ("Which player got a penalty, which gave the Broncos a first down?", None),
        ("How many miles, once completed, will the trail cover?", None),
        ("How many astronauts flew to space and were honoured for it?", None),
    ],
)
def test_split_parts(text, parts):
    assert split_parts(text, 3) == (parts or [" ".join(text.split())])


def test_more_parts_than_allowed_are_answered_as_one_question():
    text = "Who wrote Hamlet, who wrote Faust, and who wrote Don Quixote?"
    assert len(split_parts(text, 3)) == 3
    assert split_parts(text, 2) == [text]
    assert split_parts(text, 1) == [text]


def test_parts_that_lean_on_the_question():
    assert needs_context("What was the final score?")
    assert needs_context("When did it end?")
    assert not needs_context("Who wrote Don Quixote?")


@pytest.mark.parametrize(
    ("text", "dependent"),
    [
        ("Who directed Titanic, and when was he born?", True),
        ("Which team won Super Bowl 50, and who was its coach?", True),
        ("Who painted the Mona Lisa and where is it displayed?", False),
        ("When did World War I start and when did it end?", False),
        ("Who wrote Hamlet, and who wrote Don Quixote?", False),
    ],
)
def test_dependent_parts(text, dependent):
    assert is_dependent(split_parts(text, 3)) is dependent


def test_a_dependent_part_is_asked_with_the_earlier_answer():
    assert with_answer("When was he born?", "James Cameron.") == "When was James Cameron born?"
    assert with_answer("Who was its coach?", "Denver Broncos") == "Who was Denver Broncos's coach?"
    sentence = "The film was directed by James Cameron in 1997."
    assert with_answer("When was he born?", sentence) == (
        "When was he born? (he: The film was directed by James Cameron in 1997)"
    )


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        (
            "Who founded the company that makes the Walkman?",
            ["Which company makes the Walkman?", "Who founded #1?"],
        ),
        (
            "What is the capital of the country where the Danube ends?",
            ["In which country the Danube ends?", "What is the capital of #1?"],
        ),
        (
            "Who designed the hall where the treaty was signed?",
            ["In which hall was the treaty signed?", "Who designed #1?"],
        ),
        (
            "Which sea borders the country whose capital is Tallinn?",
            ["Which country's capital is Tallinn?", "Which sea borders #1?"],
        ),
        (
            "Who was pope when the Sistine Chapel was built?",
            ["When was it that the Sistine Chapel was built?", "Who was pope in #1?"],
        ),
        (
            "When was the architect of the Sagrada Familia born?",
            ["Who was the architect of the Sagrada Familia?", "When was #1 born?"],
        ),
        (
            "What river flows through the capital of Austria?",
            ["What is the capital of Austria?", "What river flows through #1?"],
        ),
        (  # no "that": what something named is in
            "What is the capital of the country the customer Hanari Carnes is in?",
            ["Which country is the customer Hanari Carnes in?", "What is the capital of #1?"],
        ),
        (
            "How many people live in the state the Golden Gate Bridge is in?",
            ["Which state is the Golden Gate Bridge in?", "How many people live in #1?"],
        ),
        (
            "What is the capital of the country Chai is supplied from?",
            ["Which country is Chai supplied from?", "What is the capital of #1?"],
        ),
    ],
)
def test_nested_questions_are_two_lookups(text, steps):
    assert nested_steps(text) == steps


@pytest.mark.parametrize(
    "text",
    [
        "Who painted the Mona Lisa?",
        "Who is the author of Hamlet?",  # asks for the role itself
        "Who was the man who shot Abraham Lincoln?",  # asks for the described thing
        "What is the name of the river that flows through Vienna?",
        "What do we call the empire that Genghis Khan founded?",
        "Who was the first person who climbed Everest?",  # superlative: asked for
        "What supports the view that prices fall?",  # "that" states a claim
        "Which flask was used at the temperature at which water boils?",  # a preposition
        "In what year did the leader who founded the Mongol Empire die?",  # clause ends early
        "How many orders did customers in the country whose capital is Oslo place in 1997?",
        "Who was the leader of Russia in the 1960s?",  # a role asked for, with a time
        "When did Warsaw become the capital of Poland?",  # a role said of its subject
        "Was the Denver Broncos the team that won Super Bowl 50?",  # a description said of it
        "What is formed when a phagosome fuses with a lysosome?",  # a condition, not a time
        "What was the title of Philo's work?",  # a possessive is no name
        "Who is the player the Broncos traded in 2010?",  # no "is … in" after the name
        "What is the name of the river Warsaw is on?",  # asks for the described thing
    ],
)
def test_one_lookup_questions_are_not_split(text):
    assert nested_steps(text) == []


def test_a_step_takes_the_earlier_answer_at_its_slot():
    assert with_answer("Who coached #1?", "the Carolina Panthers.") == (
        "Who coached the Carolina Panthers?"
    )
    assert with_answer("Who coached #1?", "Super Bowl 50 was lost by the Carolina Panthers.") == (
        "Who coached it? (it: Super Bowl 50 was lost by the Carolina Panthers)"
    )


@pytest.mark.parametrize(
    "question, part, standalone",
    [
        (
            "Which team won Super Bowl 50?",
            "What was the final score?",
            "What was the final score of Super Bowl 50?",
        ),
        (
            "Who painted the Mona Lisa?",
            "Where is it displayed?",
            "Where is the Mona Lisa displayed?",
        ),
        ("When did World War I start?", "When did it end?", "When did World War I end?"),
        ("Where is Machu Picchu?", "Who built it?", "Who built Machu Picchu?"),
    ],
)
def test_a_part_is_asked_with_the_subject_it_shares(question, part, standalone):
    from crag_core.text.query_analysis import subject_of, with_subject

    subject = subject_of(question)
    assert subject is not None and with_subject(part, subject) == standalone


def test_a_question_that_names_nothing_has_no_subject():
    from crag_core.text.query_analysis import subject_of

    assert subject_of("Which team won?") is None and subject_of("What is it?") is None
