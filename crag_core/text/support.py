"""Where an answer comes from in its documents, and whether that place is about the question.

A span copied word for word from a retrieved text is grounded, yet it may answer a
neighbouring question: the score of another game, a decade from the next paragraph. What
separates the two is the sentence the span sits in: a right answer's sentence speaks of the
question's subject, a neighbour's speaks of something else. ``support_sentences`` finds those
sentences (with the one before, which often names the subject a pronoun refers to), and
``subject_overlap`` scores how much of the question's own words they share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from langchain_core.documents import Document

from crag_core.text.sentences import split_sentences
from crag_core.text.words import STOPWORDS, fold_numbers, forms, normalize, stem

_QUESTION_WORDS = frozenset(
    "who whom whose what when where which why how many much long old did does do was were is "
    "are has have had can could will would name called".split()
)


@dataclass(frozen=True)
class Support:
    """A sentence of a document that contains the answer."""

    doc: int
    """The document's index in the evidence."""
    sentence: str
    """The sentence holding the answer."""
    context: str
    """The sentence before it in the same document ("" for the first)."""


def _words(text: str) -> list[str]:
    return fold_numbers(normalize(text).split())


def _holds(words: list[str], needle: list[str]) -> bool:
    return f" {' '.join(needle)} " in f" {' '.join(words)} "


def support_sentences(answer: str, docs: list[Document]) -> list[Support]:
    """Every sentence of ``docs`` that contains ``answer`` word for word (numbers either way)."""
    needle = _words(answer)
    if not needle:
        return []
    found = []
    for i, doc in enumerate(docs):
        sentences = split_sentences(doc.page_content)
        for n, sentence in enumerate(sentences):
            if _holds(_words(sentence), needle):
                found.append(Support(i, sentence, sentences[n - 1] if n else ""))
    return found


def question_terms(question: str, answer: str = "") -> set[str]:
    """The question's content words, stemmed: no stopwords, question words or answer words."""
    skip = STOPWORDS | _QUESTION_WORDS | set(_words(answer))
    return {stem(w) for w in _words(question) if w not in skip and len(w) > 1}


def subject_overlap(
    question: str, answer: str, docs: list[Document], with_before: bool = True
) -> float | None:
    """The best share of the question's terms found around a sentence holding the answer.

    Around: the sentence and the one before it (the sentence alone without ``with_before``).
    ``None`` when the answer is in no sentence
    (it is not a span of the documents) or the question has no terms to look for.
    """
    terms = question_terms(question, answer)
    supports = support_sentences(answer, docs)
    if not terms or not supports:
        return None
    best = 0.0
    for s in supports:
        around = {stem(w) for w in _words(f"{s.context if with_before else ''} {s.sentence}")}
        best = max(best, len(terms & around) / len(terms))
    return best


def quote(text: str, answer: str, question: str) -> str:
    """The sentence of ``text`` that supports ``answer`` ("" when none bears on it).

    The sentence the answer was copied from, else the one sharing most of the answer's and the
    question's content words. A citation preview marks it, so a reader sees at a glance where
    the answer stands.
    """
    paragraphs = re.split(r"\n\s*\n", text)  # a heading above is not part of the sentence
    sentences = [s for paragraph in paragraphs for s in split_sentences(paragraph)]
    needle = _words(answer)
    if needle:
        for sentence in sentences:
            if _holds(_words(sentence), needle):
                return sentence
    terms = question_terms(question) | {stem(w) for w in needle if w not in STOPWORDS}
    best, best_shared = "", 0
    for sentence in sentences:
        shared = len(terms & {stem(w) for w in _words(sentence)})
        if shared > best_shared:
            best, best_shared = sentence, shared
    return best


# Numbers, and capitalised words (names, places, titles): the claims a small model invents.
_KEY_TERM = re.compile(r"\d+(?:[.,]\d+)*|\b[A-Z][\w'-]*\w")
# Answer words that are no claim: a yes/no answer is left to the judge.
_NOT_CLAIMS = frozenset({"yes", "no"})


def unsupported_terms(answer: str, docs: list[Document]) -> list[str]:
    """Numbers and capitalised words of the answer that appear in none of the documents.

    A number the documents spell out counts as present ("6" against "six-time winner"), and a
    word in its plural or singular. Capitalised function words ("They", "The" opening a
    sentence) and "yes"/"no" are no claims.
    """
    words = normalize(" ".join(d.page_content for d in docs)).split()
    known = set(words) | set(fold_numbers(words))
    missing = []
    for term in dict.fromkeys(_KEY_TERM.findall(answer)):
        parts = [w for w in normalize(term).split() if w not in STOPWORDS | _NOT_CLAIMS]
        if parts and not all(forms(w) & known for w in parts):  # "Forces": "force"
            missing.append(term)
    return missing
