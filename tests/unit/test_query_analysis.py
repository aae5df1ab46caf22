"""The small-talk rules: whole messages only, never a question."""

from __future__ import annotations

import pytest

from adapters.query_analysis import is_small_talk


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
