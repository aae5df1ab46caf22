"""Where an answer was copied from, and whether that sentence is about the question."""

from __future__ import annotations

from langchain_core.documents import Document

from crag_core.text.support import question_terms, subject_overlap, support_sentences

GAME = Document(
    page_content=(
        "The Broncos finished the regular season with a 12–4 record. They beat the New England "
        "Patriots 20–18 in the AFC Championship Game. In Super Bowl 50 the Denver Broncos "
        "defeated the Carolina Panthers 24–10."
    )
)
QUESTION = "What was the final score of the Denver Broncos' Super Bowl 50 victory?"


def test_the_sentence_an_answer_was_copied_from_and_the_one_before():
    [found] = support_sentences("24–10", [GAME])
    assert found.sentence.startswith("In Super Bowl 50") and found.context.startswith("They beat")
    assert support_sentences("seven", [Document(page_content="It won 7 titles.")])
    assert support_sentences("31–7", [GAME]) == [] and support_sentences("", [GAME]) == []


def test_a_span_from_a_neighbouring_sentence_shares_less_of_the_question():
    right = subject_overlap(QUESTION, "24–10", [GAME])
    neighbour = subject_overlap(QUESTION, "20–18", [GAME])
    assert right is not None and neighbour is not None and right > neighbour
    assert subject_overlap(QUESTION, "a score nobody wrote", [GAME]) is None


def test_question_terms_leave_out_question_words_stopwords_and_the_answer():
    terms = question_terms("Who coached the Carolina Panthers in 2015?", "Ron Rivera")
    assert terms == {"coach", "carolina", "panther", "2015"}
    assert "carolina" not in question_terms("Who beat Carolina?", "Carolina")


def test_a_quote_is_the_sentence_the_answer_was_copied_from_or_the_closest():
    from crag_core.text.support import quote

    text = (
        "Carolina beat Arizona 49–15 in the NFC title game. The Broncos defeated the Panthers "
        "24–10 in Super Bowl 50. The game was played in Santa Clara."
    )
    # copied word for word: that sentence, even though another shares the question's words
    assert quote(text, "24–10", "What was the final score of Super Bowl 50?") == (
        "The Broncos defeated the Panthers 24–10 in Super Bowl 50."
    )
    # not a span: the sentence sharing most of the answer's and question's words
    assert quote(text, "It was held in Santa Clara, California.", "Where was the game?") == (
        "The game was played in Santa Clara."
    )
    assert quote(text, "Purple", "What colour is the sky?") == ""  # nothing bears on it
