"""Small talk the rules do not list, recognised by its likeness to examples.

``crag_core.text.query_analysis.is_small_talk`` knows the phrases it lists ("thanks", "bye"); people
write "Cheers, that was really helpful!" or "Nice work, bye for now". ``SmallTalk`` embeds each
clause of a message with the retrieval encoder and compares it with two sets of examples:
small talk, and questions and requests that look chatty ("Thanks! And who invented the
telephone?", "Tell me about the Ottoman Empire"). A clause is small talk when its nearest
small-talk example is close (``MIN_SIMILARITY``) and closer than its nearest question by
``MARGIN``, unless it asks a question that is not about the assistant ("Where is it displayed
today?"); a message is small talk when every clause is. ``MIN_SIMILARITY`` and ``MARGIN``
were chosen on the examples alone (leave-one-out, ``benchmarks.measurements.routing``), never on the
held-out set the routing benchmark reports.
"""

from __future__ import annotations

import re
import threading

from langchain_core.embeddings import Embeddings

from crag_core.clients.embeddings import cosine

SMALL_TALK = [
    # greetings
    "hello",
    "hi there",
    "hey",
    "good morning",
    "hey, how's it going",
    "hello crag, nice to meet you",
    "hi, I'm back",
    "evening!",
    "yo",
    # thanks and praise
    "thanks",
    "thank you very much",
    "many thanks",
    "thanks so much, really useful",
    "that helped a lot, thank you",
    "I appreciate the help",
    "you're a star",
    "thanks for your help",
    "great answer",
    "this is exactly right, thank you",
    "well done",
    # farewells and endings
    "bye",
    "goodbye",
    "see you soon",
    "that's all for now",
    "I'm finished for today",
    "gotta go",
    "have a great day",
    "until next time",
    "good night",
    "I have no more questions",
    # acknowledgements and reactions
    "ok",
    "got it",
    "understood",
    "makes sense",
    "I see",
    "alright",
    "cool",
    "awesome",
    "amazing",
    "oh really",
    "that's surprising",
    "haha",
    "no worries",
    # about the assistant
    "who are you",
    "what's your name",
    "are you a robot",
    "how do you work",
    "what can you help me with",
    "what do you know how to do",
    "are you an AI",
    "how are you doing today",
    # apologies and slips
    "sorry",
    "my mistake",
    "never mind",
    "ignore that",
    "forget it",
]
"""Messages that ask nothing to look up."""

QUESTIONS = [
    "what is the capital of Peru",
    "who discovered penicillin",
    "what does thank you mean in Japanese",
    "who wrote the song Goodbye Yellow Brick Road",
    "tell me about the French Revolution",
    "how are rainbows formed",
    "who are the members of the Beatles",
    "what is your source for that",
    "explain quantum entanglement",
    "what is the name of the largest ocean",
    "are dolphins mammals",
    "when did it happen",
    "what about its population",
    "who was the runner-up",
    "how do you say good morning in Spanish",
    "history of the Roman Empire",
    "who is the chief executive of Apple",
    "summarize the causes of World War I",
    "what can cause a headache",
    "how do I install Python on Linux",
    "what was the final score",
    "are you sure about that date",
    "what is a greeting card",
    "who is the author of Hello, Goodbye",
    "how many people live in Tokyo",
    "list the members of the European Union",
    "what did Einstein win the Nobel Prize for",
    "why is the sky blue",
    "where is the Taj Mahal",
    "describe the water cycle",
    "which team won the match",
    "what happened next",
    "and who replaced him",
    "give me the population of Canada",
    "what is the meaning of life",
    "how old is the universe",
]
"""Questions and requests, some of them chatty or about greetings, thanks and farewells."""

MIN_SIMILARITY = 0.35
"""The cosine a clause needs to its nearest small-talk example."""
MARGIN = 0.1
"""How much closer that example must be than the nearest question."""
_CLAUSES = re.compile(r"[.!?;]+\s*|,\s+(?=(?:and|but|now|so)\b)|\s+-\s+")
_QUESTION = re.compile(
    r"^(?:and\s+|so\s+|now\s+)?(?:who|whom|whose|what|when|where|which|why|how|is|are|was|were|"
    r"did|does|do|can|could|will|would|has|have|had)\b",
    re.IGNORECASE,
)
_TO_THE_ASSISTANT = re.compile(r"\b(?:you|your|yours|yourself|crag)\b", re.IGNORECASE)


def clauses(message: str) -> list[str]:
    """The message's clauses: split at sentence ends and before a joined "and"/"now"."""
    return [c.strip(" ,") for c in _CLAUSES.split(message) if c.strip(" ,")]


class SmallTalk:
    """Recognises small talk by its nearest examples (the examples are embedded once)."""

    def __init__(self, embeddings: Embeddings) -> None:
        self._embeddings = embeddings
        self._examples: tuple[list[list[float]], list[list[float]]] | None = None
        self._lock = threading.Lock()

    def examples(self) -> tuple[list[list[float]], list[list[float]]]:
        """The vectors of the small-talk examples and of the question examples."""
        with self._lock:
            if self._examples is None:
                vectors = self._embeddings.embed_documents([*SMALL_TALK, *QUESTIONS])
                self._examples = vectors[: len(SMALL_TALK)], vectors[len(SMALL_TALK) :]
            return self._examples

    def margins(self, text: str) -> tuple[float, float]:
        """The clause's nearest small-talk and nearest question similarities."""
        chat, questions = self.examples()
        vector = self._embeddings.embed_query(text)
        return (
            max(cosine(vector, v) for v in chat),
            max(cosine(vector, v) for v in questions),
        )

    def is_small_talk(self, message: str) -> bool:
        """Whether every clause of ``message`` is nearer small talk than any question."""
        parts = clauses(message)
        if not parts:
            return False
        for part in parts:
            if _QUESTION.match(part) and not _TO_THE_ASSISTANT.search(part):
                return False  # a question about the world ("Where is it displayed today?")
            chat, question = self.margins(part)
            if chat < MIN_SIMILARITY or chat - question < MARGIN:
                return False
        return True
