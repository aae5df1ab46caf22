"""State of the CRAG graph: what callers give, what they get back, and what flows between nodes.

Two states: the turn's (``RAGState``: the conversation, the route, the parts, the answer) and
a question's pass's (``PassState``: the plan, the documents, the scores, the failed attempts),
which lives only while the pass's subgraph runs and gives the turn back the keys they share
(``Answered``).

Keys that accumulate have a reducer, so a node returns only what it adds: a new warning, the
prompt versions it used, the failed pass, the chunks it rejected, the finished turn.

Every key declares its lifetime with exactly one marker (a test holds it): ``INPUT`` (given by
the caller for the run), ``PER_THREAD`` (kept from turn to turn of a thread), ``PER_TURN``
(starts every turn, and every run of a pass's subgraph, from its zero value) or ``PER_PASS``
(starts every retrieval pass from its zero value). ``turn_reset()`` and ``pass_reset()``
derive the resets from the markers, so a new key cannot be forgotten, a score of an earlier
pass never passes for this one's, and nothing of an earlier turn leaks into the next. An
optional key's zero value is ``None``.
"""

from __future__ import annotations

import operator
import time
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Annotated, Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints

from langchain_core.documents import Document
from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite
from typing_extensions import TypedDict

from crag_core.clients.usage import metered

Verdict = Literal["yes", "no", "unknown"]
"""A check's outcome; ``unknown`` means the judge's reply could not be parsed."""

MAX_HISTORY_TURNS = 10
"""How many earlier turns a thread keeps in its state (older ones are dropped)."""


class Lifetime:
    """Marks how long a key's value lives (one marker per key)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


INPUT = Lifetime("INPUT")
"""Given by the caller for the run (the question, a part's place)."""
PER_THREAD = Lifetime("PER_THREAD")
"""Kept from turn to turn of a thread (the conversation, the finished turns)."""
PER_TURN = Lifetime("PER_TURN")
"""Starts every turn from its zero value (``turn_reset``)."""
PER_PASS = Lifetime("PER_PASS")
"""Starts every retrieval pass, and so every turn, from its zero value (``pass_reset``)."""
LIFETIMES = (INPUT, PER_THREAD, PER_TURN, PER_PASS)


def add_unique(left: list[str], right: list[str]) -> list[str]:
    """Reducer: append the new items that are not there yet, in order."""
    return list(dict.fromkeys([*left, *right]))


def merge(left: dict[str, str], right: dict[str, str]) -> dict[str, str]:
    """Reducer: the old mapping updated with the new entries."""
    return {**left, **right}


RetrievalVerdict = Literal["correct", "ambiguous", "incorrect"]
"""CRAG's three-way judgement of the retrieval (see ``nodes.correction.grade_documents``)."""
Route = Literal["small_talk", "history", "single", "multi_part", "multi_step"]
"""How a turn is handled (``analyze_query``)."""
Tool = Literal["search", "table", "catalog", "document", "loop"]
"""What a question's pass reads (``choose_tool``); ``loop``: what the model chooses, by steps."""


class SearchPlan(TypedDict):
    """Search the text (the knowledge base, then the web), of the documents ``where`` keeps."""

    tool: Literal["search"]
    reason: str
    """Why, in a few words."""
    where: str
    """The documents the question limits its search to ("according to the PDFs":
    ``type=pdf``), in crag's filter language (``crag_core.text.filters``); "" for all."""
    rows: NotRequired[list[str]]
    """The tables of which it names listed values though it asks for no computation ("Who won
    more games in 2014, the Atlanta Braves or the Washington Nationals?"): with ``planner``
    ``auto`` the loop takes it on when the text has no answer (``route_after_answer``)."""


class TableAsked(TypedDict):
    """A table the question is asked of, and what of it the question names."""

    name: str
    """The table's name in the table store."""
    columns: list[str]
    """The columns it names (the file's own names)."""
    values: list[str]
    """Listed values of the table's columns it holds."""


class TablePlan(TypedDict):
    """Query the tables the question names with SQL (the text when no query answers)."""

    tool: Literal["table"]
    reason: str
    tables: list[TableAsked]
    """Those it names best, best first (``crag_core.text.sql.asked_matches``)."""


class CatalogAsked(TypedDict):
    """A question about the collection's documents as a query of their metadata.

    ``crag_core.text.catalog.CatalogQuery``, its dates resolved against the day it was asked
    and ISO-written.
    """

    kind: Literal["count", "list"]
    types: list[str]
    date_of: Literal["modified", "ingested"]
    start: str | None
    end: str | None
    topic: str
    said: list[str]
    named: str
    order: Literal["", "newest", "oldest"]


class CatalogPlan(TypedDict):
    """Count or list the documents the catalog query keeps."""

    tool: Literal["catalog"]
    reason: str
    query: CatalogAsked
    where: str
    """The query's filter in crag's filter language (its topic is no metadata: left out)."""


class DocumentPlan(TypedDict):
    """Read one document whole: a summary of it, or what it says of ``topic``."""

    tool: Literal["document"]
    reason: str
    doc_id: str
    name: str
    """What the document is called in the answer: its label, else its title."""
    topic: str
    """What is asked of it ("" for a summary)."""


class LoopPlan(TypedDict):
    """Let the model choose the tools, step by step (the agent loop: ``nodes.tools.agent``)."""

    tool: Literal["loop"]
    reason: str


Plan = SearchPlan | TablePlan | CatalogPlan | DocumentPlan | LoopPlan
"""What ``choose_tool`` decided for a question's pass, with everything the tool needs: the tools
read it and never parse the question again."""


def tool_of(state: Mapping[str, Any]) -> Tool:
    """The tool a pass's plan chose; ``search`` before any plan."""
    plan: Plan | None = state.get("plan")
    return plan["tool"] if plan else "search"


def scope_of(state: Mapping[str, Any]) -> str:
    """The documents a pass's plan keeps, in crag's filter language; "" for all of them."""
    plan: Plan | None = state.get("plan")
    if plan is None or plan["tool"] not in ("search", "catalog"):
        return ""
    return str(plan.get("where", ""))


class Source(TypedDict):
    """A document an answer was generated from."""

    id: str
    """Chunk id (``<doc_id>__c0000``) or web result id (``web:...``)."""
    source: str
    """File path of the knowledge-base document, or URL of the web result."""
    location: NotRequired[str]
    """Where in the file: "page 3" (PDF) or its heading path ("Install > Linux")."""
    quote: NotRequired[str]
    """The sentence of the document the answer stands on (``crag_core.text.support.quote``)."""
    sql: NotRequired[str]
    """For an answer read from a table: the query that read it."""
    box: NotRequired[list[float]]
    """Where on its page the chunk is: [left, top, right, bottom] as fractions of the page
    (a PDF page or an image, ``crag_core.text.regions``)."""


class Cost(TypedDict):
    """What one node run cost: its model calls and its time (``crag_core.clients.usage``)."""

    node: str
    """The node that ran (in a part's pass, the part's node: see ``part``)."""
    part: int | None
    """The part's place in the question, for a node of a part's pass; else None."""
    calls: int
    """Model calls the node made."""
    prompt_tokens: int
    """Prompt tokens of those calls, as the model server counted them."""
    cached_tokens: int
    """Of ``prompt_tokens``, those the server's prompt cache served (not processed again)."""
    completion_tokens: int
    """Tokens the model generated."""
    llm_seconds: float
    """Time spent waiting for the model."""
    seconds: float
    """The node's whole time."""


@contextmanager
def costed(node: str, part: int | None = None) -> Iterator[list[Cost]]:
    """Measure a block's model calls and time as one ledger entry.

    The entry is appended to the list the block gets when it ends (``with costed(name) as
    entry: …``, then ``entry[0]``): the node's (or a step's) calls, tokens and seconds, as
    ``crag_core.clients.usage.metered`` counted them.
    """
    entry: list[Cost] = []
    started = time.perf_counter()
    with metered() as meter:
        yield entry
    entry.append(
        Cost(
            node=node,
            part=part,
            calls=meter.calls,
            prompt_tokens=meter.prompt_tokens,
            cached_tokens=meter.cached_tokens,
            completion_tokens=meter.completion_tokens,
            llm_seconds=round(meter.llm_seconds, 3),
            seconds=round(time.perf_counter() - started, 3),
        )
    )


class Attempt(TypedDict):
    """One generate-and-check pass, kept so the run can end with its best answer."""

    query: str
    """The search query used for this pass."""
    generation: str
    """The answer produced."""
    sources: list[Source]
    """The documents the answer was generated from."""
    grounded: Annotated[Verdict | None, PER_PASS]
    """Hallucination check verdict."""
    answers_question: Verdict | None
    """Answer-relevance verdict (``None`` when the grounding check already failed)."""


class Part(TypedDict):
    """One part of a question with several, answered by its own pass (``answer_part``)."""

    index: int
    """Its place in the question (0 first)."""
    question: str
    """The part as asked ("What was the final score?")."""
    query: str
    """What its pass answered: the part, made standalone with the whole question when it
    leans on it, or with the earlier part's answer when it depends on it."""
    answer: str
    """The part's answer, or the no-answer reply."""
    sources: list[Source]
    """The documents its answer cites."""
    web_search_used: bool
    """Whether its pass searched the web."""
    retry_count: int
    """Retries its pass ran."""
    confidence: NotRequired[float | None]
    """P(right) of its answer (None for "I don't know")."""


class Withheld(TypedDict):
    """An answer not given because its confidence was under ``min_confidence``."""

    answer: str
    """The guess."""
    confidence: float
    """Its confidence."""


class Turn(TypedDict):
    """One finished question-and-answer turn of a thread."""

    question: str
    """The question as asked."""
    standalone_question: str
    """The question with references to earlier turns resolved."""
    answer: str
    """The answer returned."""
    sources: NotRequired[list[Source]]
    """The documents the answer cited (a ``history`` turn answers with them again)."""
    confidence: NotRequired[float | None]
    """The answer's confidence (a ``history`` turn answers with it again)."""


def recent_turns(left: list[Turn], right: list[Turn]) -> list[Turn]:
    """Reducer: append the finished turns, keeping the last ``MAX_HISTORY_TURNS``."""
    return [*left, *right][-MAX_HISTORY_TURNS:]


class InputState(TypedDict, total=False):
    """What a caller gives the graph: a ``question``, or chat ``messages``.

    Messages are LangGraph's chat convention, as Studio's chat view and agent-chat-ui send them.
    """

    question: Annotated[str, INPUT]
    """The user's question, answered and graded as asked (never replaced by the rewrite)."""
    messages: Annotated[list[AnyMessage], PER_THREAD, add_messages]
    """The conversation: when its newest message is the user's, that message is the question
    and the earlier ones are the history. Each turn adds the user's question and an AI message
    carrying the answer and its sources."""


class QuestionInput(TypedDict):
    """A question alone: the input of the naive baseline, which has no chat turns."""

    question: str


class Answered(TypedDict, total=False):
    """What a question's pass gives the turn: its answer, how it was reached, what it cost.

    The keys the pass (``PassState``) and the turn (``RAGState``) share: the pass subgraph's
    last values of them are its update of the turn.
    """

    plan: Annotated[Plan | None, PER_TURN]
    """What ``choose_tool`` decided: ``search`` (the knowledge base's text, then the web;
    limited to the documents the question names), ``table`` (SQL over the tables it names;
    text search when that fails), ``catalog`` (the collection's documents: how many, which, of
    what type, from when) or ``document`` (one document the question names, read whole: a
    summary, what it says), with why and what the tool reads (``Plan``)."""
    sql: Annotated[str, PER_TURN]
    """The SQL of a table question: the query that answered it, or the last one tried."""
    answer_kind: Annotated[str, PER_TURN]
    """For a table's answer, the kind its confidence is counted by (``table:value:1``: one
    value, from the first query; ``nodes.shared.confidence.table_kind``); ``catalog`` for the
    catalog's; "" for any other."""
    tool_signals: Annotated[dict[str, float | None], PER_TURN]
    """For a table's or the catalog's answer, what its query and result say about it, its
    confidence's inputs (``nodes.shared.confidence.table_signals``, ``catalog_signals``);
    empty for any other."""
    answer: Annotated[str, PER_TURN]
    """The turn's answer, written by the node that ends its route (``respond_small_talk``,
    ``answer_from_history``, ``check_cache`` on a hit, ``query_catalog``, ``read_document``,
    ``query_table`` on a table's answer,
    ``combine_parts`` or ``choose_answer``); "I don't know." when no answer passed its
    checks."""
    sources: Annotated[list[Source], PER_TURN]
    """Documents the answer was generated from."""
    confidence: Annotated[float | None, PER_TURN]
    """How likely the answer is right, 0..1 (``nodes.shared.confidence``: fitted on the calibration
    split from the evaluator's and checks' scores, where the answer was found, retries); None
    when the answer is "I don't know", a small-talk reply or read from a whole document. An
    answer from a table or the catalog carries the share of such answers right on the tools
    benchmark's calibration split (``nodes.shared.confidence.tool_confidence``)."""
    warnings: Annotated[list[str], PER_TURN, add_unique]
    """Anything the caller should know: retries exhausted, web search failed, unparsable judge."""
    web_search_used: Annotated[bool, PER_TURN]
    """Whether web results were fetched during the run."""
    retry_count: Annotated[int, PER_TURN]
    """How many retries ran (0 when the first answer passed both checks)."""
    prompt_versions: Annotated[dict[str, str], PER_TURN, merge]
    """Prompt name -> version of every prompt that ran."""
    cost: Annotated[list[Cost], PER_TURN, operator.add]
    """The turn's ledger: one entry per node run that uses a client (its model calls, tokens
    and seconds), in the order they finished; a part's nodes carry the part's place."""


class OutputState(Answered, total=False):
    """What a caller gets back."""

    messages: Annotated[list[AnyMessage], PER_THREAD, add_messages]
    """The conversation, ending with the AI message of this turn's answer."""

    route: Annotated[Route | None, PER_TURN]
    """How the turn was handled: ``small_talk`` (a short reply, nothing looked up),
    ``history`` (answered by an earlier turn of the thread: its answer and sources again),
    ``single`` (one retrieval pass, with the corrections), ``multi_part`` (independent parts,
    each its own pass, in parallel) or ``multi_step`` (dependent parts, in order, each later
    part searched with the earlier answer)."""

    parts: Annotated[list[Part], PER_TURN, operator.add]
    """For ``multi_part`` and ``multi_step``: every part with its own answer and sources, in
    the order they finished (``index`` is their order in the question)."""

    standalone_question: Annotated[str, PER_TURN]
    """The question that was answered: on a thread's follow-up turn, the question rewritten
    with the earlier turns resolved ("what about its population?" -> "What is the population
    of Lyon?"); otherwise the question as asked."""


class FlowState(OutputState, total=False):
    """The output keys and what the turn's nodes pass each other (every key optional)."""

    history: Annotated[list[Turn], PER_THREAD, recent_turns]
    """The thread's earlier turns, oldest first (the last ``MAX_HISTORY_TURNS``)."""

    subquestions: Annotated[list[str], PER_TURN]
    """The parts ``analyze_query`` found (empty for a question with one part)."""
    nested: Annotated[bool, PER_TURN]
    """Whether the ``multi_step`` parts are the look-ups of one nested question (its answer is
    the last step's), not several questions asked at once (each answered)."""
    earlier_turn: Annotated[Turn | None, PER_TURN]
    """The earlier turn whose answer answers this follow-up (route ``history``)."""
    history_score: Annotated[float | None, PER_TURN]
    """P(yes) that an earlier turn's answer answers this follow-up (1.0 for a repeat;
    ``analyze_query``); None when no earlier turn was weighed this turn."""
    small_talk: Annotated[bool, PER_TURN]
    """Whether the message is small talk: judged once, by ``contextualize_question`` (the rules,
    then the classifier); ``analyze_query`` routes by it, and a thread's small talk costs no
    rewrite."""
    asked_at: Annotated[float, PER_TURN]
    """When the turn began (seconds since the epoch): ``answer_seconds`` counts from it."""
    relevant_documents: Annotated[list[Document] | None, PER_TURN]
    """The evidence the question's pass answered from (its last retrieval pass's accepted
    documents; ``PassState.relevant_documents``): what ``decompose`` reads the answer's
    sentence in."""


class RAGState(InputState, FlowState, total=False):
    """The graph's state: the turn's keys, what every node of the turn can read.

    On a checkpointed thread the state persists between turns. ``contextualize_question``
    starts every turn with ``turn_reset()``, so what one turn accumulates (warnings, retries,
    prompt versions, its parts) never leaks into the next. A question's pass works in a state
    of its own (``PassState``): its documents, scores and failed attempts never reach the turn.
    """


class PassInput(TypedDict, total=False):
    """What a question's pass starts from: the question (``answer_question``'s input)."""

    question: str
    standalone_question: str
    asked_at: float
    nested: bool


class PartInput(TypedDict):
    """What a part's pass starts from (the ``Send`` that fans a question out)."""

    question: str
    """The part as asked."""
    standalone_question: str
    """What the pass answers (see ``Part.query``)."""
    part_index: int
    """The part's place in the question."""
    asked_at: NotRequired[float]
    """When the turn began (``RAGState.asked_at``)."""


class PassState(Answered, total=False):
    """One question's pass (``answer_question``, ``answer_part``): the state of its subgraph.

    It starts from the question (``PassInput``, ``PartInput``) on every run of the subgraph,
    so nothing of another turn's or part's pass is in it; the keys it shares with the turn
    (``Answered``, ``relevant_documents``) are what it gives the turn back. ``PER_TURN`` keys
    live for the whole subgraph run (every retrieval pass of the question), ``PER_PASS`` keys
    for one retrieval pass (``pass_reset``).
    """

    question: Annotated[str, INPUT]
    """The question as asked (a part, in a part's pass): answered and graded as asked."""
    standalone_question: Annotated[str, INPUT]
    """What the pass answers: a follow-up's standalone rewrite, a part made standalone."""
    part_index: Annotated[int, INPUT]
    """In a part's pass (``answer_part``): the part's place in the question."""
    asked_at: Annotated[float, INPUT]
    """When the turn began (seconds since the epoch; absent when a pass is run alone): the
    question's ``answer_seconds`` count from it."""
    nested: Annotated[bool, INPUT]
    """A described question's whole pass (``RAGState.nested``): what no tool answers here is
    asked in its steps next, each choosing its own tool."""
    cache_hit: Annotated[bool, PER_TURN]
    """Whether this turn's answer came from the answer cache (no retrieval, no LLM call)."""
    cache_similarity: Annotated[float, PER_TURN]
    """How close the cached question was to this one (1.0: the same question)."""
    rewritten_query: Annotated[str, PER_TURN]
    """Search query written from the question (and, on a retry, the checks' feedback); kept
    from pass to pass of a turn, never into the next turn."""
    unfilled: Annotated[str, PER_TURN]
    """Why the knowledge base had nothing to search ("Collection 'x' is empty."), if so."""
    queries: Annotated[list[str], PER_TURN, operator.add]
    """The search query of every pass of this turn, in order (the first is the question)."""
    documents: Annotated[list[Document], PER_PASS]
    """Documents retrieved from the knowledge base for this pass, best first; after grading
    each carries ``metadata["relevant"]`` ("yes" or "no")."""
    light_score: Annotated[float | None, PER_PASS]
    """The light retrieval evaluator's score of this pass's knowledge-base documents: P(their
    best chunk states the answer), from the encoder and the question's words (no model call)."""
    retrieval_score: Annotated[float | None, PER_PASS]
    """The retrieval evaluator's score of this pass's knowledge-base documents: the light score
    where it decided alone (at or above ``light_correct``, under ``light_incorrect``), else the
    model's P(yes) that they state the answer (1.0 or 0.0 when it gives no log-probabilities)."""
    retrieval_verdict: Annotated[RetrievalVerdict | None, PER_PASS]
    """correct: score at or above ``correct_threshold``; incorrect: below
    ``incorrect_threshold`` (or nothing retrieved); ambiguous: in between."""
    web_searched: Annotated[bool, PER_PASS]
    """Whether this pass has searched the web yet."""
    web_results: Annotated[list[Document], PER_PASS]
    """This pass's web-search results, refined to the strips that bear on the question."""
    evidence_light_score: Annotated[float | None, PER_PASS]
    """The light evaluator's score of the evidence after web search."""
    evidence_score: Annotated[float | None, PER_PASS]
    """The evaluator's score of the evidence after web search (knowledge-base documents kept
    as ambiguous plus web results): the light score where it decided alone, else the model's."""
    kb_fallback: Annotated[bool, PER_PASS]
    """Whether the answer comes from ambiguous knowledge-base documents alone, because the web
    results lowered their score and the evidence with them fell under ``evidence_threshold``."""
    relevant_documents: Annotated[list[Document] | None, PER_PASS]
    """The evidence the answer is generated from: the graded documents the evaluator
    accepted (empty: nothing states the answer, and the reply is the no-answer reply; None:
    not graded in this pass, as in the naive pipeline)."""
    generation: Annotated[str, PER_PASS]
    """The answer generated in this pass (citation markers removed once validated)."""
    citations: Annotated[list[str], PER_TURN]
    """Chunk ids the answer cites, each validated against this pass's documents."""
    citation_feedback: Annotated[str, PER_TURN]
    """Why the generator is asked to redo its citations (empty when they are fine)."""
    citation_corrections: Annotated[int, PER_PASS]
    """Citation corrections used in this pass (bounded by ``max_citation_corrections``)."""
    grounded: Annotated[Verdict | None, PER_PASS]
    """Hallucination check: is the generation supported by the documents?"""
    grounding_score: Annotated[float | None, PER_PASS]
    """The hallucination check's score (P(yes)) when the judge was asked (not when the answer
    was decided without it: copied word for word, or naming what no document holds)."""
    support_score: Annotated[float | None, PER_PASS]
    """For an answer copied word for word: the judge's P(yes) that the sentence it was copied
    from gives it as the answer to this question (``check_hallucination``); None otherwise."""
    answers_question: Annotated[Verdict | None, PER_PASS]
    """Answer check: do the documents state the generation as the answer to the question?"""
    answer_score: Annotated[float | None, PER_PASS]
    """The answer check's score (P(yes)); compared with ``answer_threshold``."""
    feedback: Annotated[str, PER_TURN]
    """Why the last pass failed its checks; fed to the next rewrite and generation."""
    withheld: Annotated[Withheld | None, PER_TURN]
    """The answer not given because its confidence was under ``min_confidence``, if any."""
    attempts: Annotated[list[Attempt], PER_TURN, operator.add]
    """Every failed pass so far, for choosing the best answer when retries run out."""
    rejected_chunks: Annotated[list[str], PER_TURN, add_unique]
    """Ids of the chunks the grader judged irrelevant in the failed passes of this turn: a
    retry searches past them instead of grading them again."""
    loop_messages: Annotated[list[AnyMessage], PER_TURN, add_messages]
    """The agent loop's steps: the model's tool calls, what each tool returned, corrections."""
    loop_started: Annotated[float, PER_TURN]
    """When the loop's first step began (seconds since the epoch): its deadline counts from it."""


class PartState(PassState, total=False):
    """A part's pass: the pass's state and the ``Part`` it ends with (``collect_part``)."""

    parts: Annotated[list[Part], PER_TURN, operator.add]
    """The part's answer, as one ``Part`` for the whole question's ``parts``."""


class PartOutput(TypedDict, total=False):
    """What a part's pass gives the whole question's run back (merged by the reducers)."""

    parts: Annotated[list[Part], operator.add]
    warnings: Annotated[list[str], add_unique]
    prompt_versions: Annotated[dict[str, str], merge]
    cost: Annotated[list[Cost], operator.add]


class Update(FlowState, total=False):
    """What a node of the turn returns: any keys of the turn's state, none required.

    Nodes are annotated ``-> Update`` (a pass's nodes ``-> PassUpdate``), so mypy refuses a
    misspelt key, a wrong type or a key of the other state.
    """

    question: str


class PassUpdate(PassState, total=False):
    """What a node of a question's pass returns: any keys of its state, none required."""


def _zero(base: Any) -> Any:
    """The zero value of a key's type: ``None`` for an optional key, else the type's own."""
    if get_origin(base) in (Union, types.UnionType) and type(None) in get_args(base):
        return None
    return (get_origin(base) or base)()


def lifetimes(schema: type = RAGState) -> dict[str, list[Lifetime]]:
    """Each key of ``schema`` (the turn's state, or ``PassState``) and its lifetime markers."""
    return {
        key: [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Lifetime)]
        for key, hint in get_type_hints(schema, include_extras=True).items()
    }


def _reset(schema: type, *markers: Lifetime) -> dict[str, Any]:
    """Every key of ``schema`` marked with one of ``markers`` at its zero value.

    Keys with a reducer are overwritten (``Overwrite``), the others simply set.
    """
    reset: dict[str, Any] = {}
    for key, hint in get_type_hints(schema, include_extras=True).items():
        metadata: tuple[Any, ...] = getattr(hint, "__metadata__", ())
        if not any(m in metadata for m in markers):
            continue
        zero = _zero(hint.__origin__)  # the type inside Annotated[...]
        reset[key] = Overwrite(zero) if callable(metadata[-1]) else zero
    return reset


def turn_reset() -> dict[str, Any]:
    """The update that starts a turn: every ``PER_TURN`` key of the turn's state at its zero.

    A question's pass needs none: its subgraph starts from the question on every run.
    """
    return _reset(RAGState, PER_TURN)


def pass_reset() -> dict[str, Any]:
    """The update that starts a retrieval pass: every ``PER_PASS`` key of the pass at its zero."""
    return _reset(PassState, PER_PASS)
