"""The nested-questions benchmark's scoring: the final answer holds an accepted answer."""

from __future__ import annotations

from benchmarks.measurements.nested import is_right, questions


def test_steps_are_scored_on_the_last_step():
    steps = "Which team lost Super Bowl 50? Carolina Panthers [1]\nWho coached them? Ron Rivera [2]"
    assert is_right(steps, "multi_step", ["Ron Rivera"])
    assert not is_right(steps, "multi_step", ["Carolina Panthers"])  # a step, not the answer
    assert is_right("It was Ron Rivera.", "single", ["rivera"])
    assert not is_right("Riverade", "single", ["Rivera"])  # whole words only


def test_every_nested_question_has_accepted_answers():
    rows = questions()
    assert len(rows) == 35 and all(r["answers"] for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)
