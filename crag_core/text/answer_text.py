"""Answer text as a reader sees it: no citation markers, no talk about documents, no debris.

A small model asked to cite its documents sometimes writes about them instead ("This was in
document.", "According to the documents, ..."), leaves a bracket behind once its citation
marker is removed ("[406]", "Carolina ["), or folds the no-answer reply into a sentence
("Guilt implies [I don't know]."). ``clean_answer`` removes all of that and nothing else;
``meta_text`` finds what is left of it, so a benchmark can count answers that still talk
about their sources.
"""

from __future__ import annotations

import re

from crag_core.text.citations import strip_citations
from crag_core.text.sentences import split_sentences
from crag_core.text.words import normalize

NO_ANSWER = "I don't know."
"""What crag says when no answer passed its checks (and what the generator is told to say)."""


def is_no_answer(text: str) -> bool:
    """Whether a generation declines to answer."""
    return not text.strip() or normalize(text).startswith(normalize(NO_ANSWER))


_META_NOUN = (
    r"(?:documents?|texts?|passages?|context|sources?|search results?|excerpts?|citations?)"
)
_META_LEAD = re.compile(
    r"^\s*(?:(?:according to|based on|as (?:stated|mentioned|given|shown|said) in|from|in|per)\s+"
    rf"(?:the\s+)?(?:(?:provided|given|above|cited|retrieved)\s+)?{_META_NOUN}"
    r"(?:\s+(?:above|provided|S?\d+))?\s*[,:]"
    rf"|(?:the\s+)?{_META_NOUN}(?:\s+S?\d+)?\s+(?:says?|states?|mentions?)(?:\s+that)?\b:?)\s*",
    flags=re.IGNORECASE,
)
"""A leading "According to the documents," or "Document S2 says" before the answer itself."""
_META_SENTENCE = re.compile(
    rf"^(?:(?:this|it|that|the answer|which)\b.*\b{_META_NOUN}\b"
    rf"|(?:see|cited? (?:in|from)|as (?:stated|mentioned) in)\b.*"
    rf"|(?:the|these|those)\s+(?:provided\s+|given\s+)?{_META_NOUN}\s+"
    r"(?:do|does|did|are|is|was|were|have|has|contain|mention|say|state|provide|show|give|list)\b.*)$",
    flags=re.IGNORECASE,
)
"""A sentence about where the answer is, not about the world: "This was in document."."""
_NO_ANSWER_INSIDE = re.compile(r"\[?\s*i\s+(?:do\s+not|don'?t)\s+know\s*\]?", flags=re.IGNORECASE)
_EMPTY_BRACKETS = re.compile(r"\[\s*\]|\(\s*\)")
_LABEL = re.compile(r"^\s*(?:final\s+)?answer\s*:\s*", flags=re.IGNORECASE)
STEPS_HEADING = "\n\nSteps:\n"
"""Where a nested question's reply goes on from its answer to the look-ups that found it."""


def answer_only(text: str) -> str:
    """The reply without the steps that explain it (what a reader takes as the answer)."""
    return text.split(STEPS_HEADING, 1)[0]


def _is_meta(sentence: str) -> bool:
    return bool(_META_SENTENCE.match(sentence.strip().rstrip(".!")))


def _unbracket(text: str) -> str:
    """Brackets left around or beside the answer once citations are gone: "[406]" -> "406"."""
    text = _EMPTY_BRACKETS.sub("", text)
    whole = re.fullmatch(r"\s*\[([^\[\]]+)\]\s*\.?\s*", text)
    if whole:
        text = whole.group(1)
    if text.count("[") != text.count("]"):
        text = text.replace("[", "").replace("]", "")
    return " ".join(text.split()) if "\n" not in text else text.strip()


def clean_answer(text: str, no_answer: str) -> str:
    """``text`` as the answer to show: citation markers, meta sentences and debris removed.

    A reply that only talks about the documents ("The documents do not say.") or hides the
    no-answer reply in a sentence is ``no_answer``.
    """
    text = _LABEL.sub("", strip_citations(text))
    if _NO_ANSWER_INSIDE.search(text):
        return no_answer
    kept = [s for s in split_sentences(text) if not _is_meta(s)]
    if not kept:
        return no_answer if text.strip() else text.strip()
    first = _META_LEAD.sub("", kept[0])
    if first and first != kept[0]:
        first = first[0].upper() + first[1:]
    return _unbracket(" ".join([first, *kept[1:]]))


def meta_text(text: str) -> list[str]:
    """The sentences or phrases of ``text`` that talk about documents or citations."""
    plain = strip_citations(text)
    found = [s for s in split_sentences(plain) if _is_meta(s)]
    lead = _META_LEAD.match(plain)
    if lead:
        found.insert(0, lead.group(0).strip())
    if re.search(r"\[\s*S?\d+\s*\]|\[\s*$|^\s*\]", text):
        found.append("citation marker")
    return found
