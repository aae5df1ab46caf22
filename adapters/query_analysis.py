"""Query analysis by rules: is a message small talk, or something to look up?

Small talk — greetings, thanks, farewells, acknowledgements, and questions about the assistant
itself — needs no retrieval, no web and no citations. The rules recognise it only when the
*whole* message is small talk: every clause (split at punctuation) must be one of the known
phrases, possibly with a filler word ("hi there", "ok thanks!", "hello, how are you?"). Anything
else, however short, is treated as a question: a factual question routed to small talk would
be answered without evidence, which is the error to avoid (measured in
docs/benchmarks/routing.md).
"""

from __future__ import annotations

import re

_ADDRESS = r"there|all|everyone|crag|bot|assistant|mate|friend"
"""Who a greeting is addressed to: a clause of its own in "Good evening, crag."."""
_FILLER = rf"(?:\s+(?:{_ADDRESS}|again|so much|very much|a lot))*"
_PHRASES = [
    # greetings
    r"hi|hello|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|day)",
    # thanks
    r"thanks?|thank you|thx|ty|cheers|much appreciated|(?:that|this) (?:was|is) helpful|"
    r"(?:great|perfect|awesome|nice|cool),? thanks?",
    # farewells
    r"bye|goodbye|bye bye|see you(?: later| soon)?|good night|take care|have a (?:nice|good) day",
    # acknowledgements
    r"ok|okay|k|cool|great|nice|awesome|perfect|got it|understood|sure|alright|all right|"
    r"sounds good|makes sense|i see|yes|no|yep|nope|lol|haha",
    # about the assistant and the conversation
    r"how are you(?: doing)?(?: today)?|how(?:'s| is) it going|what(?:'s| is) up|sup|"
    r"who are you|what are you|what(?:'s| is) your name|"
    r"are you (?:a )?(?:bot|robot|human|an ai|ai)|"
    r"what can you do|what do you do|how do you work|how can you help(?: me)?|"
    r"can you help(?: me)?|help|nice to meet you|good to see you",
]
_PHRASE = rf"(?:{'|'.join(f'(?:{p})' for p in _PHRASES)}){_FILLER}"
_CLAUSE = re.compile(rf"{_PHRASE}(?:\s+{_PHRASE})*")  # "ok thanks", "hi there how are you"
_SPLIT = re.compile(r"[,.!?;:]+|\s+-\s+")


def is_small_talk(message: str) -> bool:
    """Whether ``message`` is small talk through and through.

    Every clause (and there is at least one) is a greeting, thanks, farewell, acknowledgement
    or a question about the assistant.
    """
    text = re.sub(r"[^\w\s,.!?;:'-]", " ", message.lower().replace("\u2019", "'"))
    clauses = [c.strip() for c in _SPLIT.split(text) if c.strip()]
    clauses = [c for c in clauses if not re.fullmatch(_ADDRESS, c)]
    return bool(clauses) and all(_CLAUSE.fullmatch(c) for c in clauses)


_QUESTION_WORD = (
    r"who|whom|whose|what|when|where|which|why|how|"
    r"in (?:what|which)|on (?:what|which)|at (?:what|which)|for (?:what|which)|from (?:what|which)|"
    r"is|are|was|were|did|does|do|can|could|has|have|had|will|would"
)
_PART_BREAK = re.compile(
    rf"(?:\?\s+|[,;]\s*(?:and\s+(?:also\s+)?)?|\s+and\s+(?:also\s+)?)(?=(?:{_QUESTION_WORD})\b)",
    re.IGNORECASE,
)
"""Where a new question starts: after "?", or at ", and" / "and" / "," / ";" before a
question word ("…Super Bowl 50, and what was the final score?")."""
_PERSON = r"he|him|his|she|her|they|them|their"
_THING = r"it|its|they|them|their"
_PRONOUN = re.compile(rf"\b(?:{_PERSON}|{_THING}|this|that|these|those|there)\b", re.I)
_PERSON_PRONOUN = re.compile(rf"\b(?:{_PERSON})\b", re.I)
_REFERS_BACK = {
    "who": _PERSON_PRONOUN,
    "whom": _PERSON_PRONOUN,
    "which": re.compile(rf"\b(?:{_THING})\b", re.I),
}
"""The pronouns that name the answer of a first part starting with that word."""
_ANSWER_PRONOUN = re.compile(rf"\b(?:{_PERSON}|{_THING})\b", re.I)
_ENTITY = re.compile(r"(?<!^)\b[A-Z0-9][\w'-]*|\"[^\"]+\"")


def split_parts(question: str, max_parts: int) -> list[str]:
    """The question's parts when it asks several things; ``[question]`` when it asks one.

    A part starts with a question word after "?", "," , ";" or "and": "Which team won Super
    Bowl 50, and what was the final score?" has two parts; "Who painted the Mona Lisa?" and
    "What language is spoken in Brazil and Mexico?" have one (no question word follows the
    "and"). A fragment of fewer than three words is no part of its own ("…, and why?"). More
    than ``max_parts`` parts are not split at all: the question is answered as one.
    """
    text = " ".join(question.split())
    pieces = [p.strip(" ,;") for p in _PART_BREAK.split(text)]
    parts = [_as_question(p) for p in pieces if p]
    if len(parts) < 2 or len(parts) > max_parts or any(len(p.split()) < 3 for p in parts):
        return [text]
    return parts


def _as_question(part: str) -> str:
    part = part.strip()
    part = part[0].upper() + part[1:]
    return part if part.endswith("?") else part.rstrip(".!") + "?"


def needs_context(part: str) -> bool:
    """Whether a part leans on the rest of the question: a pronoun, or no named entity.

    "When did it end?" and "What was the final score?" do; "Who wrote Hamlet?" does not.
    """
    return bool(_PRONOUN.search(part)) or not _ENTITY.search(part.rstrip("?"))


def is_dependent(parts: list[str]) -> bool:
    """Whether later parts ask about the first part's answer: chain, not tree, of retrieval.

    The first part asks for someone (who: a later "he", "her", "their" …) or something by
    name (which: a later "it", "its", "they" …): "Who directed Titanic, and when was he
    born?", "Which team won Super Bowl 50, and who was its coach?". "Who painted the Mona Lisa
    and where is it displayed?" and "When did World War I start and when did it end?" are
    not: their "it" is the subject the parts share.
    """
    refers_back = _REFERS_BACK.get(parts[0].split()[0].lower())
    return refers_back is not None and any(refers_back.search(p) for p in parts[1:])


MAX_ANSWER_WORDS_IN_PLACE = 6
"""A longer earlier answer is a sentence, not a name: it is given beside the part instead."""


def with_answer(part: str, answer: str) -> str:
    """A dependent part with its pronoun replaced by the earlier part's answer.

    ("When was he born?", "James Cameron") -> "When was James Cameron born?"; possessives
    take "'s" ("Who was its coach?", "the Denver Broncos") -> "Who was the Denver Broncos's
    coach?" — a search query, not prose. An answer longer than a name goes beside the part:
    "When was he born? (he: The film was directed by James Cameron)".
    """
    answer = answer.strip().rstrip(".")
    found = _ANSWER_PRONOUN.search(part)
    if found and len(answer.split()) > MAX_ANSWER_WORDS_IN_PLACE:
        return f"{part} ({found.group(0)}: {answer})"

    def replace(match: re.Match[str]) -> str:
        word = match.group(0).lower()
        return f"{answer}'s" if word in ("his", "its", "their") else answer

    return _ANSWER_PRONOUN.sub(replace, part, count=1)
