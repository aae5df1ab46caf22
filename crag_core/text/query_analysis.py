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
from collections.abc import Iterator

from crag_core.text.words import STOPWORDS, words_of

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


_WH_WORD = (
    r"who|whom|whose|what|when|where|which|why|how|"
    r"in (?:what|which)|on (?:what|which)|at (?:what|which)|for (?:what|which)|from (?:what|which)"
)
_AUXILIARY = r"is|are|was|were|did|does|do|can|could|has|have|had|will|would"
_QUESTION_WORD = rf"{_WH_WORD}|{_AUXILIARY}"
_NOT_RELATIVE = r"what|when|where|why|how|in (?:what|which)|on (?:what|which)|at (?:what|which)"


def _part_break(after_comma: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?:\?\s+|[,;]\s*and\s+(?:also\s+)?)(?=(?:{_QUESTION_WORD})\b)"
        rf"|\s+and\s+(?:also\s+)?(?=(?:{_WH_WORD})\b)"
        rf"|[,;]\s*(?=(?:{after_comma})\b)",
        re.IGNORECASE,
    )


_PART_BREAK = _part_break(_NOT_RELATIVE)
"""Where a new question starts: after "?" or ", and" before a question word, after "and"
before a wh-word, or at "," / ";" before a wh-word that does not start a relative clause
("…Super Bowl 50, and what was the final score?"). Not at ", who was hired …", ", which gave
…", "and were rewarded …", "…, once completed, will …": they go on the same question."""
_LIST_BREAK = _part_break(_WH_WORD)
"""In a list of questions ("Where is Machu Picchu, who built it, and when was it
rediscovered?") a comma before any wh-word starts one."""
_LIST = re.compile(rf",\s*and\s+(?:also\s+)?(?:{_QUESTION_WORD})\b", re.IGNORECASE)
_SUBORDINATE = re.compile(rf"when\s+(?!(?:{_AUXILIARY})\b)", re.IGNORECASE)
"""A "when" with no auxiliary after it is a clause of the next question, not a question: "When
John Fox left, who replaced him?"."""
_STARTS_QUESTION = re.compile(rf"(?:{_QUESTION_WORD})\b", re.IGNORECASE)
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
    "and"). A fragment of fewer than three words is no part of its own ("…, and why?"), nor is
    a phrase or clause put before the question ("Prior to Super Bowl 50, what was …?", "When
    John Fox left, who replaced him?": every part starts with a question word, and a "when"
    part with an auxiliary). More than ``max_parts`` parts are not split at all: the question
    is answered as one.
    """
    text = " ".join(question.split())
    breaks = _LIST_BREAK if _LIST.search(text) else _PART_BREAK
    pieces = [p.strip(" ,;") for p in breaks.split(text)]
    parts = [_as_question(p) for p in pieces if p]
    if (
        len(parts) < 2
        or len(parts) > max_parts
        or any(
            len(p.split()) < 3 or not _STARTS_QUESTION.match(p) or _SUBORDINATE.match(p)
            for p in parts
        )
    ):
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


_SUBJECT = re.compile(
    r"(?:the\s+)?[A-Z0-9][\w.'-]*(?:\s+(?:(?:of|the|and|de|von)\s+)*[A-Z0-9][\w.'-]*)*"
)
_THING_PRONOUN = re.compile(r"\b(?:it|its|they|them|their)\b", re.I)
_ENDS_IN_NOUN = re.compile(r"\b(?:the|a|an)\s+(?:[\w-]+\s+){0,2}[\w-]+\?$", re.I)


def subject_of(question: str) -> str | None:
    """The thing a question names: its longest run of capitalised words, not the first word.

    "Which team won Super Bowl 50?" -> "Super Bowl 50"; "Who painted the Mona Lisa?" -> "the
    Mona Lisa"; None when it names nothing.
    """
    names = [m.group(0) for m in _SUBJECT.finditer(question) if m.start() > 0]
    names = [n for n in names if n.lower() not in ("i", "the")]
    return max(names, key=len) if names else None


def with_subject(part: str, subject: str) -> str:
    """A part that leans on the question, with the subject it shares named in it.

    Its pronoun becomes the subject ("When did it end?", "World War I" -> "When did World War
    I end?"), or the subject is added ("What was the final score?", "Super Bowl 50" -> "What
    was the final score of Super Bowl 50?"): the part then stands alone, as a search query and
    for the model that answers it.
    """
    found = _THING_PRONOUN.search(part)
    if found:
        word = found.group(0).lower()
        named = f"{subject}'s" if word in ("its", "their") else subject
        return part[: found.start()] + named + part[found.end() :]
    joint = "of" if _ENDS_IN_NOUN.search(part) else "in"
    return f"{part.rstrip('?').rstrip()} {joint} {subject}?"


ANSWER_SLOT = "#1"
"""Where the second step of a nested question takes the first step's answer."""
_NOUN = r"[a-z][\w-]*"
_NOT_HEAD = (
    r"(?!(?:at|in|on|of|by|for|from|with|to|under|during|fact|view|idea|claim|belief|notion|"
    r"argument|theory|hypothesis|possibility|assumption|condition|probability|statement|"
    r"principle|news|hope|fear|best|worst|first|second|"
    r"third|last|only|main|most|least|top|latest|earliest|largest|biggest|smallest|highest|"
    r"lowest|oldest|youngest|longest|shortest|greatest|nearest)\b)"
)
"""Not the noun of a description to look up: a preposition ("the temperature at which …"),
a noun whose "that" states a claim ("the fact that …"), or a superlative or ordinal ("the first
person who …": the question asks for it)."""
_RELATIVE_CLAUSE = re.compile(
    rf"\bthe\s+(?P<head>(?:{_NOT_HEAD}{_NOUN}\s+){{0,2}}{_NOT_HEAD}{_NOUN})\s+"
    r"(?P<rel>that|which|who|whom|whose|where)\s+(?!else\b)(?P<clause>[^?]+?)\s*\??$"
)
"""A thing named by what it did or where something happened, to the question's end: "Who
coached the team that lost Super Bowl 50?"."""
_NOT_ARTICLE = r"(?!(?:the|an?)\b)"
_CONTACT_CLAUSE = re.compile(
    rf"\bthe\s+(?P<head>(?:{_NOT_HEAD}{_NOT_ARTICLE}{_NOUN}\s+){{0,2}}{_NOT_HEAD}{_NOT_ARTICLE}{_NOUN})\s+"
    r"(?P<subject>(?:(?:the|an?)\s+(?:[a-z][\w-]*\s+)?)?[A-Z][^?]*?)\s+(?P<aux>is|are|was|were)\s+"
    r"(?P<rest>(?:[a-z]+\s+)?(?:in|from|at|on|by|for|with))\s*\??$"
)
"""A thing named by what something named is in, from or at, no "that" before it, to the
question's end: "What is the capital of the country the customer Hanari Carnes is in?",
"… of the country Chai is supplied from?"."""
_NAME = (
    r"(?:the\s+)?[A-Z0-9][\w.-]*(?:\s+(?:(?:of|the|and|de|von)\s+)*[A-Z0-9][\w.-]*)*\b(?!['\u2019])"
)
_ROLES = (
    "author|writer|founder|co-founder|inventor|discoverer|director|producer|composer|painter|"
    "sculptor|architect|designer|creator|owner|wife|husband|son|daughter|father|mother|"
    "brother|sister|king|queen|president|chancellor|coach|captain|leader|ceo|mayor|governor|"
    "pope|emperor|ruler|teacher|successor|predecessor|singer|manager|chairman|capital"
)
_ROLE_OF_NAME = re.compile(rf"\bthe\s+(?P<role>{_ROLES})\s+of\s+(?P<name>{_NAME})")
"""Someone (or a capital) known by a role of something named: "the founder of Amazon", "the
composer of the Moonlight Sonata", "the capital of Hungary"."""
_WHEN_EVENT = re.compile(
    r"^(?i:who\b[^?]*?\b(?:was|were)\b)[^?]*?\s(?P<when>when\s+"
    r"(?P<event>(?:the|a|an|[A-Z])\b[^?]*?))\s*\??$"
)
"""Who someone was at a time given by another event, to the question's end: "Who was
king of England when the Magna Carta was sealed?"."""
_DO_SUPPORT = re.compile(r"\b(?:did|does|do)\s+(?:[a-z]+\s+(?:in|of|from|at)\s+)?$", re.I)
"""A description right after "did", or after "did" and a noun it qualifies, is (in) the
subject of a verb still to come ("In what year did the leader who founded the Mongol Empire
die?", "How many orders did customers in the country whose capital is Oslo place in 1997?"):
its clause does not run to the end."""
_ASKS_ROLE = re.compile(r"^(?:who|what)\s+(?:is|was|are|were)\s+$", re.I)
_PREDICATE = re.compile(
    r"\b(?:become|became|becomes|remain|remained|remains|"
    r"(?i:is|was|are|were)\s+(?:the\s+)?[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)\s+$"
)
"""A description that is what the question asks for ("Who was the leader of Russia in the
1960s?") or says of its subject ("When did Warsaw become the capital of Poland?", "Was Denver
the team that won?"): one look-up."""
_PAST = re.compile(r"\b(?:was|were|did|had)\b", re.I)
_NOT_ASKED = STOPWORDS | {
    "name",
    "named",
    "last",
    "full",
    "call",
    "called",
    "known",
    ANSWER_SLOT.strip("#"),
}
"""Words of a second step that ask for the thing itself: "What do we call #1?"."""


def nested_steps(question: str) -> list[str]:
    """The two look-ups of a question that describes a thing instead of naming it, or ``[]``.

    The first look-up finds the thing, the second asks the question about it, with
    ``ANSWER_SLOT`` where its answer goes:

    - a relative clause to the question's end: "Who coached the team that lost Super Bowl
      50?" -> "Which team lost Super Bowl 50?", "Who coached #1?";
    - one without "that", saying what something named is in, from or at: "What is the
      capital of the country the customer Hanari Carnes is in?" -> "Which country is the
      customer Hanari Carnes in?", "What is the capital of #1?";
    - a time given by another event: "Who was king of England when the Magna Carta was
      sealed?" -> "When was it that the Magna Carta was sealed?", "Who was king of England in
      #1?";
    - a role of something named: "Where was the founder of Amazon born?" -> "Who was the
      founder of Amazon?", "Where was #1 born?".

    A question that asks for the described thing itself ("Who was the man who shot Abraham
    Lincoln?", "What is the name of the river that flows through Warsaw?", "What is the
    capital of Hungary?") is one look-up: its second step would ask nothing.
    """
    text = " ".join(question.split())
    return next((steps for steps in _candidate_steps(text) if _asks_something(steps[1])), [])


def _candidate_steps(text: str) -> Iterator[list[str]]:
    """Every way of reading ``text`` as two look-ups, in order of preference."""
    clause = _RELATIVE_CLAUSE.search(text)
    if clause:
        before = text[: clause.start()]
        if not (_DO_SUPPORT.search(before) or _PREDICATE.search(before)):
            yield [_which(clause), _as_question(before + ANSWER_SLOT)]
    contact = _CONTACT_CLAUSE.search(text)
    if contact:
        before = text[: contact.start()]
        if not (_DO_SUPPORT.search(before) or _PREDICATE.search(before)):
            found = (
                f"Which {contact['head']} {contact['aux']} {contact['subject']} {contact['rest']}?"
            )
            yield [found, _as_question(before + ANSWER_SLOT)]
    when = _WHEN_EVENT.search(text)
    if when:
        before = text[: when.start("when")]
        yield [f"When was it that {when['event']}?", _as_question(f"{before}in {ANSWER_SLOT}")]
    for role in _ROLE_OF_NAME.finditer(text):
        before = text[: role.start()]
        if _ASKS_ROLE.match(before) or _PREDICATE.search(before):
            continue
        asks = "What" if role["role"] == "capital" else "Who"
        verb = "was" if _PAST.search(text) else "is"
        rest = before + ANSWER_SLOT + text[role.end() :]
        yield [f"{asks} {verb} {role.group(0)}?", _as_question(rest)]


_AUXILIARY_LAST = re.compile(r"^(?P<subject>.+?)\s+(?P<aux>was|is|were|are)\s+(?P<rest>\S.*)$")


def _which(found: re.Match[str]) -> str:
    """The look-up that finds what a relative clause describes."""
    head, clause = found["head"], found["clause"]
    if found["rel"] == "where":  # "Mozart was born" -> "was Mozart born"
        clause = _AUXILIARY_LAST.sub(r"\g<aux> \g<subject> \g<rest>", clause, count=1)
        return f"In which {head} {clause}?"
    if found["rel"] == "whose":
        return f"Which {head}'s {clause}?"
    return f"Which {head} {clause}?"


def _asks_something(step: str) -> bool:
    """Whether a second step asks about the found thing, not just for it ("Who was #1?")."""
    return any(w not in _NOT_ASKED for w in words_of(step, underscores=True))


MAX_ANSWER_WORDS_IN_PLACE = 6
"""A longer earlier answer is a sentence, not a name: it is given beside the part instead."""


def with_answer(part: str, answer: str) -> str:
    """A dependent part with its pronoun replaced by the earlier part's answer.

    ("When was he born?", "James Cameron") -> "When was James Cameron born?"; possessives
    take "'s" ("Who was its coach?", "the Denver Broncos") -> "Who was the Denver Broncos's
    coach?" — a search query, not prose. An answer longer than a name goes beside the part:
    "When was he born? (he: The film was directed by James Cameron)". A step of a nested
    question takes the answer at its ``#1`` ("Who coached #1?").
    """
    answer = answer.strip().rstrip(".")
    if ANSWER_SLOT in part:  # a step of a nested question
        if len(answer.split()) > MAX_ANSWER_WORDS_IN_PLACE:
            return f"{part.replace(ANSWER_SLOT, 'it')} (it: {answer})"
        return part.replace(ANSWER_SLOT, answer)
    found = _ANSWER_PRONOUN.search(part)
    if found and len(answer.split()) > MAX_ANSWER_WORDS_IN_PLACE:
        return f"{part} ({found.group(0)}: {answer})"

    def replace(match: re.Match[str]) -> str:
        word = match.group(0).lower()
        return f"{answer}'s" if word in ("his", "its", "their") else answer

    return _ANSWER_PRONOUN.sub(replace, part, count=1)
