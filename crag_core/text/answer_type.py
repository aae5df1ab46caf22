"""Whether an answer is of the kind its question asks for: a number, a time, a name.

"How many …?" wants a number, "When …?" a time, "Who …?" someone named: an answer of another kind
("Denver" to "How many …?") is more often a span of the wrong sentence than the answer.
``type_fits`` says so (True or False), or None when the question's wording sets no kind ("What …?",
"Which …?", "Why …?"). It is one of the confidence's signals (``nodes.shared.confidence``).

"Which has more instances: diabetes or iris?" asks for one of two things it names
(``choice``); an answer that names neither ("442") is not an answer to it (``names_one``),
whatever the documents say.
"""

from __future__ import annotations

import re

from crag_core.text.words import NUMBER_WORDS, content_words, stem, words_of

_PAIR = re.compile(
    r"(?:^|[:,]\s*|\bbetween\s+)(?P<a>[\w$][\w .'&$()-]{0,60}?)\s+or\s+"
    r"(?P<b>[\w$][\w .'&$()-]{0,60}?)\s*\?*\s*$",
    re.I,
)
"""A question that ends by naming two alternatives: "…: Adelie or Gentoo?"."""
_CHOICE_QUESTION = re.compile(r"^\s*(?:which|who|whose|what)\b", re.I)
_NEITHER = re.compile(r"\b(?:neither|both|same|equal|equally|tied?)\b", re.I)
"""An answer that declines the choice itself: "neither", "both the same"."""


def _named(found: re.Match[str] | None) -> tuple[str, str] | None:
    """The two alternatives a ``_PAIR`` match names (None: no match, or one named twice)."""
    if not found:
        return None
    a, b = (found.group(k).strip(" .'") for k in ("a", "b"))
    return (a, b) if a and b and a.lower() != b.lower() else None


def alternatives(question: str) -> tuple[str, str] | None:
    """The two values a question asks to choose between ("…: A or B?"), if it does.

    Named after a colon, a comma or "between": a question whose first words would be the
    first alternative names none ("Which teams won the pennant in 2011 or 2012?" asks for
    the teams of either year).
    """
    found = _PAIR.search(question.strip())
    return None if found is None or found.start("a") == 0 else _named(found)


def choice(question: str) -> tuple[str, str] | None:
    """The two things a "Which …: A or B?" question asks to choose between (None if it does not).

    Only a which / who / what question that names them after a colon, a comma or "between":
    "How many X or Y?" asks for a count, and "What is used to convey upper or lower bounds?"
    names no alternatives.
    """
    found = _PAIR.search(question.strip())
    if not _CHOICE_QUESTION.match(question) or not found or found.start("a") == 0:
        return None
    return _named(found)


def _distinct_words(one: str, other: str) -> set[str]:
    """The stems of ``one``'s content words that ``other`` lacks (all of them if none)."""
    mine = {stem(w) for w in content_words(one, underscores=False)}
    theirs = {stem(w) for w in content_words(other, underscores=False)}
    return (mine - theirs) or mine


def names_one(answer: str, pair: tuple[str, str]) -> bool:
    """Whether ``answer`` names one of ``pair``, the two things a ``choice`` asks between.

    An alternative is named by any of its words the other lacks ("handwritten digits" names
    "optical recognition of handwritten digits" beside "wine recognition"); "neither" or "both
    the same" declines the choice, and counts as named.
    """
    said = {stem(w) for w in words_of(answer)}
    a, b = _distinct_words(*pair), _distinct_words(pair[1], pair[0])
    return bool(said & (a | b)) or bool(_NEITHER.search(answer))


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
