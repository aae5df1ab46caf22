"""The grader benchmark's case selection and its candidate prompts (no model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import grader
from crag.eval.squad import Question
from tests.conftest import doc

CANDIDATES = sorted((Path(grader.__file__).parent / "candidates").glob("grade_documents-*.md"))
QUESTION = Question(
    id="q1",
    question="When was John Gallagher born?",
    answers=("1919",),
    paragraph_id="imperialism-p015",
)


def test_answers_are_matched_as_whole_normalised_words():
    assert grader.contains_answer(doc("a", "John Gallagher (1919–1980) wrote"), ("1919",))
    assert not grader.contains_answer(doc("b", "In 19190 nothing happened"), ("1919",))
    assert grader.contains_answer(doc("c", "The Denver Broncos won."), ("the Denver Broncos!",))


def test_cases_are_the_best_answer_chunk_and_the_best_distractor():
    retrieved = [
        doc("imperialism-p014__c0000", "Imperialism in 1919 elsewhere."),  # mentions the answer
        doc("imperialism-p015__c0000", "Historians of empire."),  # gold paragraph, no answer
        doc("imperialism-p015__c0001", "John Gallagher (1919–1980) and Ronald Robinson."),
        doc("warsaw-p017__c0000", "Warsaw's history."),
    ]
    cases = grader.cases_for(QUESTION, retrieved)
    assert [(c.doc.metadata["id"], c.expected) for c in cases] == [
        ("imperialism-p015__c0001", "yes"),
        ("warsaw-p017__c0000", "no"),
    ]


def test_a_missing_gold_chunk_leaves_only_the_negative():
    cases = grader.cases_for(QUESTION, [doc("warsaw-p017__c0000", "Warsaw's history.")])
    assert [c.expected for c in cases] == ["no"]


@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_candidates_render_like_the_product_prompt(path):
    prompt = grader.prompt_for(str(path))
    assert prompt.variables == grader.prompt_for("v1").variables
    assert prompt.template.template.startswith("{document}")
    assert "When was" in prompt.render(document="<documents/>", question="When was it?").text
