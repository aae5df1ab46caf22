"""Right, "I don't know" or wrong: the scoring a user would apply, examples both ways."""

from __future__ import annotations

import pytest

from crag.eval.metrics import contains_answer, cut_short, truthfulness, verdict, verdicts
from crag_core.text.answer_text import clean_answer, meta_text

NO = "I don't know."


@pytest.mark.parametrize(
    ("prediction", "golds", "expected"),
    [
        ("Denver Broncos", ["Denver Broncos"], "right"),
        ("The Denver Broncos won Super Bowl 50.", ["Denver Broncos"], "right"),
        ("seven", ["7"], "right"),
        ("7", ["seven"], "right"),
        ("It lasted 25 years", ["twenty five years"], "right"),
        ("Denver Broncos [S1]", ["Denver Broncos"], "right"),
        ("According to the documents, 1879.", ["1879"], "right"),
        ("[1879]", ["1879"], "right"),
        ("the Rhine–Meuse–Scheldt delta", ["Rhine–Meuse–Scheldt delta"], "right"),
        # F1 >= 0.5 without containing the whole accepted answer
        ("Rhine–Meuse delta", ["the Rhine–Meuse–Scheldt delta"], "right"),
        # word-bounded: a number inside another is not the answer
        ("145", ["4"], "wrong"),
        ("Denver", ["Denver Broncos"], "right"),  # F1 0.67
        ("Carolina Panthers", ["Denver Broncos"], "wrong"),
        ("Rhine", ["the Rhine–Meuse–Scheldt delta"], "wrong"),
        ("1930s and 1940s", ["1977"], "wrong"),
        ("20–18", ["24–10"], "wrong"),
        (NO, ["Denver Broncos"], "unknown"),
        ("I don't know", ["Denver Broncos"], "unknown"),
        ("Guilt implies [I don't know].", ["guilt"], "unknown"),
        ("The documents do not say.", ["Denver Broncos"], "unknown"),
    ],
)
def test_answerable_questions(prediction, golds, expected):
    assert verdict(prediction, golds) == expected


def test_a_whole_chunk_is_not_right_because_it_contains_the_answer():
    chunk = (
        "The Denver Broncos defeated the Carolina Panthers 24–10 to earn their third Super Bowl "
        "title. The game was played on February 7, 2016, at Levi's Stadium in the San Francisco "
        "Bay Area at Santa Clara, California."
    )
    assert len(chunk.split()) > 25
    assert verdict(chunk, ["Denver Broncos"]) == "wrong"
    assert verdict(chunk, [chunk]) == "right"  # ... unless it is the answer (F1 1.0)


def test_a_nested_answer_is_judged_without_the_steps_that_explain_it():
    reply = (
        "Ron Rivera [1, 2]\n\nSteps:\n"
        "Which team lost Super Bowl 50? the Carolina Panthers [1]\n"
        "Who coached the Carolina Panthers? Ron Rivera [2]"
    )
    assert verdict(reply, ["Ron Rivera"]) == "right"
    assert verdict(reply, ["Carolina Panthers"]) == "wrong"


def test_unanswerable_questions_are_right_only_as_i_dont_know():
    assert verdict(NO, ["Paris"], answerable=False) == "unknown"
    assert verdict("Paris", ["Paris"], answerable=False) == "wrong"
    assert verdict("Lyon", [], answerable=False) == "wrong"


def test_contains_answer_folds_numbers_and_articles_at_word_boundaries():
    assert contains_answer("They won seven times", "7")
    assert contains_answer("in the 1990s", "1990s")
    assert not contains_answer("in the 1990s", "1990")
    assert not contains_answer("anything", "")


def test_truthfulness_is_the_mean_of_plus_one_zero_minus_one():
    assert truthfulness(["right", "right", "unknown", "wrong"]) == 25.0
    assert truthfulness(["wrong", "unknown"]) == -50.0
    assert truthfulness([]) == 0.0


def test_verdicts_count_a_run_by_category_rule():
    chunk = " ".join(["word"] * 30)
    records = [
        {"prediction": "Paris", "gold_answers": ["Paris"], "category": "in_kb"},
        {"prediction": NO, "gold_answers": ["Lyon"], "category": "web_only"},
        {"prediction": "Lyon", "gold_answers": [], "category": "unanswerable"},
        {"prediction": NO, "gold_answers": [], "category": "unanswerable"},
        {"prediction": chunk, "gold_answers": ["word"], "category": "in_kb"},
        {"prediction": "Paris. See document 2.", "gold_answers": ["Paris"], "category": "in_kb"},
    ]
    assert verdicts(records) == {
        "right": 2,
        "unknown": 2,
        "wrong": 2,
        "truthfulness": 0.0,
        "right_of_answers": 50.0,
        "long_answers": 1,
        "meta_answers": 1,
    }


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("The final score was 24-10. This was in document [S1].", "The final score was 24-10."),
        ("According to the documents [S2], the Broncos won.", "The Broncos won."),
        ("Based on document S1: 1879", "1879"),
        ("The text states that the river is 1,230 km long.", "The river is 1,230 km long."),
        ("Answer: Paris [S1]", "Paris"),
        ("[406]", "406"),
        ("Carolina Panthers [", "Carolina Panthers"),
        ("Guilt implies [I don't know].", NO),
        ("The documents do not state the answer.", NO),
        ("It was founded in 1850. It is mentioned in the text.", "It was founded in 1850."),
        # talk about a document that is the subject, not the source, stays
        ("The Magna Carta is a charter document sealed in 1215.", None),
        ("The sources of the Rhine are in Switzerland.", None),
        ("Ron Rivera", None),
    ],
)
def test_clean_answer_removes_talk_about_documents_and_debris(raw, shown):
    assert clean_answer(raw, NO) == (raw if shown is None else shown)


def test_meta_text_finds_what_talks_about_sources():
    assert meta_text("The final score was 24-10. This was in document.") == [
        "This was in document."
    ]
    assert meta_text("According to the documents, Paris.") == ["According to the documents,"]
    assert meta_text("Paris [S1]") == ["citation marker"]
    assert meta_text("The sources of the Rhine are in Switzerland.") == []


def test_an_answer_is_cut_short_when_it_is_a_proper_part_of_an_accepted_answer():
    assert cut_short("24", ["24–10"])
    assert cut_short("Rhine", ["Rhine–Meuse–Scheldt delta"])
    assert cut_short("12,000", ["12,000 millimetres"])
    assert not cut_short("24–10", ["24–10"])  # whole
    assert not cut_short("the score was 24–10", ["24–10"])  # holds it whole
    assert not cut_short("Denver", ["Carolina Panthers"])  # wrong, not short
    assert not cut_short("Denver", ["Denver", "Denver Broncos"])  # one accepted answer is whole
