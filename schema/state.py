"""State of the CRAG graph: what callers give, what they get back, and what flows between nodes.

The graph runs one node at a time (no parallel branches), so no field needs a reducer: every
node returns whole new values for the keys it changes, e.g. ``warnings`` is returned as the
old list plus the new warning. That keeps each update readable on its own in a trace.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.documents import Document
from typing_extensions import TypedDict

Verdict = Literal["yes", "no", "unknown"]
"""A check's outcome; ``unknown`` means the judge's reply could not be parsed."""

MAX_HISTORY_TURNS = 10
"""How many earlier turns a thread keeps in its state (older ones are dropped)."""

RetrievalVerdict = Literal["correct", "ambiguous", "incorrect"]
"""CRAG's three-way judgement of the retrieval (see ``nodes.grade_documents``)."""


class Source(TypedDict):
    """A document an answer was generated from."""

    id: str
    """Chunk id (``<doc_id>__c0000``) or web result id (``web:...``)."""
    source: str
    """File path of the knowledge-base document, or URL of the web result."""


class Attempt(TypedDict):
    """One generate-and-check pass, kept so the run can end with its best answer."""

    query: str
    """The search query used for this pass."""
    generation: str
    """The answer produced."""
    sources: list[Source]
    """The documents the answer was generated from."""
    grounded: Verdict
    """Hallucination check verdict."""
    answers_question: Verdict | None
    """Answer-relevance verdict (``None`` when the grounding check already failed)."""


class Turn(TypedDict):
    """One finished question-and-answer turn of a thread."""

    question: str
    """The question as asked."""
    standalone_question: str
    """The question with references to earlier turns resolved."""
    answer: str
    """The answer returned."""


class InputState(TypedDict):
    """What a caller gives the graph."""

    question: str
    """The user's question, answered and graded as asked (never replaced by the rewrite)."""


class OutputState(TypedDict, total=False):
    """What a caller gets back."""

    standalone_question: str
    """The question that was answered: on a thread's follow-up turn, the question rewritten
    with the earlier turns resolved ("what about its population?" -> "What is the population
    of Lyon?"); otherwise the question as asked."""

    answer: str
    """The final answer (the best attempt's answer when checks kept failing)."""
    sources: list[Source]
    """Documents the answer was generated from."""
    warnings: list[str]
    """Anything the caller should know: retries exhausted, web search failed, unparsable judge."""
    web_search_used: bool
    """Whether web results were fetched during the run."""
    retry_count: int
    """How many retries ran (0 when the first answer passed both checks)."""
    prompt_versions: dict[str, str]
    """Prompt name -> version of every prompt that ran."""


class RAGState(InputState, OutputState, total=False):
    """Everything that flows between the nodes.

    On a checkpointed thread the state persists between turns. ``contextualize_question``
    starts every turn by resetting the per-turn keys, so only ``history`` carries over.
    """

    history: list[Turn]
    """The thread's earlier turns, oldest first (the last ``MAX_HISTORY_TURNS``)."""

    rewritten_query: str
    """Search query written from the question (and, on a retry, the checks' feedback)."""
    documents: list[Document]
    """Documents retrieved from the knowledge base for this pass, best first; after grading
    each carries ``metadata["relevant"]`` ("yes" or "no")."""
    retrieval_score: float
    """The retrieval evaluator's score of this pass's knowledge-base documents: P(yes) that
    they state the answer (1.0 or 0.0 when the model gives no log-probabilities)."""
    retrieval_verdict: RetrievalVerdict
    """correct: score at or above ``correct_threshold``; incorrect: below
    ``incorrect_threshold`` (or nothing retrieved); ambiguous: in between."""
    web_searched: bool
    """Whether this pass has searched the web yet (reset by ``retrieve``)."""
    web_results: list[Document]
    """This pass's web-search results, refined to the strips that bear on the question."""
    evidence_score: float
    """The evaluator's score of the evidence after web search (knowledge-base documents kept
    as ambiguous plus web results)."""
    relevant_documents: list[Document]
    """The evidence the answer is generated from: the graded documents the evaluator
    accepted (empty: nothing states the answer, and the reply is the no-answer reply)."""
    generation: str
    """The answer generated in this pass (citation markers removed once validated)."""
    citations: list[str]
    """Chunk ids the answer cites, each validated against this pass's documents."""
    citation_feedback: str
    """Why the generator is asked to redo its citations (empty when they are fine)."""
    citation_corrections: int
    """Citation corrections used in this pass (bounded by ``max_citation_corrections``)."""
    grounded: Verdict
    """Hallucination check: is the generation supported by the documents?"""
    answers_question: Verdict
    """Answer check: do the documents state the generation as the answer to the question?"""
    answer_score: float
    """The answer check's score (P(yes)); compared with ``answer_threshold``."""
    feedback: str
    """Why the last pass failed its checks; fed to the next rewrite and generation."""
    attempts: list[Attempt]
    """Every failed pass so far, for choosing the best answer when retries run out."""
    rejected_chunks: list[str]
    """Ids of the chunks the grader judged irrelevant in the failed passes of this turn: a
    retry searches past them instead of grading them again."""
