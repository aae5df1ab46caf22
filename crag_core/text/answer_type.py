"""Whether an answer is of the kind its question asks for: a number, a time, a name.

"How many …?" wants a number, "When …?" a time, "Who …?" someone named: an answer of another kind
("Denver" to "How many …?") is more often a span of the wrong sentence than the answer.
``type_fits`` says so (True or False), or None when the question's wording sets no kind ("What …?",
"Which …?", "Why …?"). It is one of the confidence's signals (``nodes.shared.confidence``).
"""

from __future__ import annotations

import re

from crag_core.text.words import NUMBER_WORDS, words_of

_NUMBER_QUESTION = re.compile(
    r"^\s*(?:how\s+(?:many|much|long|old|far|big|large|tall|high|deep|wide|heavy|often)|"
    r"what\s+(?:percentage|percent|number|amount|proportion|fraction|share)|"
    r"(?:in\s+)?what\s+year|which\s+year)\b",
    re.IGNORECASE,
)
_TIME_QUESTION = re.compile(
    r"^\s*(?:when|(?:in|on|by|since|until)\s+(?:what|which)\s+(?:year|date|day|month|century|decade)|"
    r"what\s+(?:year|date|day|month|century|decade|time))\b",
    re.IGNORECASE,
)
_PERSON_QUESTION = re.compile(r"^\s*(?:who|whom|whose)\b", re.IGNORECASE)
_PLACE_QUESTION = re.compile(r"^\s*where\b", re.IGNORECASE)
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec spring summer autumn fall winter "
    "century centuries decade bc bce ad ce"
).split()
_DIGIT = re.compile(r"\d")
_CAPITAL = re.compile(r"(?:^|\s)[A-Z\u00c0-\u024f]")


def _has_number(answer: str) -> bool:
    words = words_of(answer)
    return (
        bool(_DIGIT.search(answer))
        or any(w in NUMBER_WORDS for w in words)
        or any(
            w in ("hundred", "thousand", "million", "billion", "dozen", "half", "twice")
            for w in words
        )
    )


def _has_time(answer: str) -> bool:
    words = words_of(answer)
    return bool(_DIGIT.search(answer)) or any(w in _MONTHS for w in words)


def _has_name(answer: str) -> bool:
    return bool(_CAPITAL.search(answer)) and not answer.strip().replace(",", "").isdigit()


Kind = str
"""What a question asks for: ``number``, ``time`` or ``name``."""


def asked_kind(question: str) -> Kind | None:
    """The kind ``question``'s wording asks for; None when it asks for no kind."""
    if _NUMBER_QUESTION.match(question):
        return "number"
    if _TIME_QUESTION.match(question):
        return "time"
    if _PERSON_QUESTION.match(question) or _PLACE_QUESTION.match(question):
        return "name"
    return None


_HAS = {"number": _has_number, "time": _has_time, "name": _has_name}


def type_fits(question: str, answer: str) -> bool | None:
    """Whether ``answer`` is of the kind ``question`` asks for; None: it asks for no kind."""
    kind = asked_kind(question)
    return None if kind is None else _HAS[kind](answer)


def kind_in(kind: Kind, sentence: str, question: str) -> bool:
    """Whether ``sentence`` holds something of ``kind`` beyond the words ``question`` says.

    "When did Luther die?" and "Luther died in 1546." hold a time; "Luther died in Eisleben."
    does not. The question's own words are taken out first, so a sentence that only repeats
    the question's name or year holds nothing new, and so is the sentence's first word (its
    capital says nothing of a name).
    """
    said = set(words_of(question))
    rest = " ".join(w for w in sentence.split()[1:] if not set(words_of(w)) <= said)
    return _HAS[kind](rest)
