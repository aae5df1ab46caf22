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
