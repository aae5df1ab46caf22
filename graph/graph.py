"""The Corrective-RAG graph: nodes, edges and routers, wired in one place.

    contextualize_question -> analyze_query
    analyze_query --small talk--> respond_small_talk -> finalize
                  --a follow-up an earlier turn answered--> answer_from_history -> finalize
                  --several independent parts--> answer_part for each part at once (Send)
                  --dependent parts--> answer_part for the first part (Send)
                  --else (a described question too: asked whole first)--> answer_question
    answer_part --next dependent part--> answer_part (Send, with the earlier answer)
                --else--> combine_parts -> finalize
    answer_question --a described question asked whole, from evidence or unanswered--> decompose
                    --else--> finalize -> END
    decompose --its answer's sentence states the description--> finalize
              --else--> answer_part for its first step (Send), the next as above

``answer_question`` and ``answer_part`` are one question's pass, a subgraph with a state of its
own (``PassState``), started from the question on every run; it ends in the node that writes
its answer:

    START -> check_cache
    check_cache --stored answer--> END
                --else--> choose_tool
    choose_tool --asks a summary of a document it names, or what it says--> read_document
                --asks how many or which documents (type, date, topic)--> query_catalog
                --names a table's column, asks a computation or a row--> query_table
                --planner loop--> agent
                --else--> retrieve
    read_document, query_catalog -> END
    query_table --the SQL's result answers--> END
                --else, planner auto--> agent
                --else (no query worked, or nothing found)--> retrieve
    agent --calls a tool--> run_tools -> agent (the loop, until an answer or the budget)
          --answers before anything was read (once)--> agent
          --answers--> validate_citations (its bad citation goes back to agent)
    retrieve -> grade_documents
    grade_documents --correct--> generate
                    --ambiguous / incorrect, web not searched in this pass--> web_search
                    --after web search--> generate (from the accepted evidence, from ambiguous
                                          knowledge-base documents the web lowered, or none)
    web_search -> refine_knowledge -> grade_documents
    generate -> validate_citations
    validate_citations --no answer--> choose_answer
                       --unknown or missing citation, corrections left--> generate
                       --else--> check_hallucination
    check_hallucination --grounded--> check_relevance
                        --not grounded--> increment_retry (or choose_answer when out of retries)
    check_relevance --answers--> choose_answer
                    --does not--> increment_retry (or choose_answer when out of retries)
    increment_retry -> rewrite_query -> retrieve
    choose_answer -> END (a part's pass: collect_part -> END)

``analyze_query`` alone decides the route (a follow-up's earlier answer included); the routers
only read it. Each route ends in the node that writes its answer (respond_small_talk,
answer_from_history, answer_question's check_cache on a hit, query_catalog, read_document,
query_table on a table's answer or choose_answer; combine_parts), and ``finalize`` only
formats the turn.

The first pass searches with the question itself; the query is rewritten only on a retry.
Every call of a pass that reads documents starts with the same evidence message, so the model
server processes the documents once per pass. "I don't know" ends the run: it is said when
neither the knowledge base nor the web states the answer, and a retry would search the same
places. Every loop passes through ``increment_retry``, which bumps ``retry_count``; both
checks' routers send the run to ``choose_answer`` once ``retry_count`` reaches ``max_retries``, so
every run ends after at most ``max_retries + 1`` passes (and, for a described question whose
whole pass found nothing, its two steps), and ``step_limit`` (LangGraph's recursion limit for
the run) is sized to the longest such run. ``graph`` is compiled without
a checkpointer (as ``langgraph dev`` requires); ``build_graph(checkpointer=...)`` gives
callers threads, whose turns ``contextualize_question`` starts by resetting the per-turn keys
and resolving follow-ups against the thread's history.

The turn's state (``RAGState``) holds the conversation, the route, the parts and the answer;
the pass's (``PassState``) its plan, documents, scores and failed attempts, which no node of
the turn can read. ``answer_question`` (``build_pass_graph``) gives the turn back the keys the
two share (``Answered``: the answer, its sources and confidence, the plan, warnings, cost…, and
the evidence ``decompose`` reads); ``answer_part`` (``build_part_graph``: the same pass, then
collect_part) is run once per part with the part as its question and hands back only the
part's ``Part`` (and warnings, prompt versions, cost), which the ``parts`` reducer gathers, so
parallel parts never write the same key.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer, Send

from crag_core.schema.context import (
    MAX_CITATION_CORRECTIONS_LIMIT,
    MAX_RETRIES_LIMIT,
    MAX_TOOL_CALLS_LIMIT,
    Context,
    context_of,
)
from crag_core.schema.state import (
    InputState,
    OutputState,
    PartInput,
    PartOutput,
    PartState,
    PassInput,
    PassState,
    RAGState,
    scope_of,
    tool_of,
)
from crag_core.text.answer_text import is_no_answer
from graph.factory import ServiceFactory, ledgered
from nodes import correction, parts, tools, turn
from nodes.shared.common import no_time_to_retry


def steps_per_pass(citation_corrections: int) -> int:
    """Nodes in the longest pass.

    rewrite_query, retrieve, grade_documents, web_search, refine_knowledge, grade_documents
    again, generate and validate_citations (again per citation correction),
    check_hallucination, check_relevance and increment_retry (or choose_answer).
    """
    return 11 + 2 * citation_corrections


def loop_steps(max_tool_calls: int, citation_corrections: int) -> int:
    """Nodes in the longest loop pass, from choose_tool to choose_answer.

    choose_tool, query_table (``auto`` tries the rules' table first), agent and run_tools per
    tool call, an answer before anything was read sent back once (agent again), the agent's
    answer, validate_citations (agent and validate_citations again per citation correction),
    check_hallucination, check_relevance and choose_answer.
    """
    return 2 + 2 * max_tool_calls + 1 + 2 + 2 * citation_corrections + 3


def step_limit(
    max_retries: int,
    citation_corrections: int = MAX_CITATION_CORRECTIONS_LIMIT,
    max_tool_calls: int = MAX_TOOL_CALLS_LIMIT,
) -> int:
    """The recursion limit a run needs for all its passes.

    The longest run is ``max_retries + 1`` of the longest passes, the first starting with
    contextualize_question, analyze_query, check_cache and choose_tool instead of
    rewrite_query (a table question's text fallback is one pass: ``_can_retry``) and the
    last ending in choose_answer and finalize instead of increment_retry; LangGraph also
    counts the step that takes the input; or one loop pass (``loop_steps``), never retried.

    The pass runs in its own subgraph, which counts its steps against the same limit (the
    turn's graph takes a handful); the count above is the run's as one graph, an upper bound
    for either. The loops are bounded by ``max_retries``, ``max_citation_corrections`` and
    ``max_tool_calls``; this limit is the backstop, and it must be set explicitly: a graph run
    inside another runnable inherits LangChain's default limit of 25, which a run with two
    retries can exceed.
    """
    passes = steps_per_pass(citation_corrections) * (max_retries + 1)
    return 5 + max(passes, loop_steps(max_tool_calls, citation_corrections)) + DECOMPOSITION_STEPS


DECOMPOSITION_STEPS = 4
"""A described question whose whole pass found nothing: decompose, its two steps, and
combine_parts before finalize."""


def route_after_analysis(state: RAGState) -> str | list[Send]:
    """Follow the route ``analyze_query`` chose.

    Small talk gets a direct reply, a follow-up an earlier turn answered gets that answer, a
    single question is looked up. Independent parts are all sent at once (they run in
    parallel); of dependent parts only the first, the next one following when it is answered
    (``route_after_part``).
    """
    route = state.get("route")
    if route == "small_talk":
        return "respond_small_talk"
    if route == "history":
        return "answer_from_history"
    if route == "multi_part":
        return [
            Send("answer_part", parts.part_input(state, i))
            for i in range(len(state["subquestions"]))
        ]
    if route == "multi_step":
        return [Send("answer_part", parts.part_input(state, 0))]
    return "answer_question"


def route_after_part(state: RAGState, runtime: Runtime[Context]) -> str | list[Send]:
    """The next dependent part, asked with the earlier answer; else every part is in.

    Also when the next would end past ``answer_seconds`` (``parts.no_time_for_step``).
    """
    index = parts.next_step(state) if state.get("route") == "multi_step" else None
    if index is None or parts.no_time_for_step(state, context_of(runtime)):
        return "combine_parts"
    return [Send("answer_part", parts.part_input(state, index))]


def route_after_question(state: RAGState) -> Literal["decompose", "finalize"]:
    """A described question asked whole goes to ``decompose``, which keeps or splits it.

    An answer generated from evidence (``relevant_documents``, given back by the pass's text
    search) is weighed, and no answer at whatever tool is asked in its steps, nor is a table's
    "no such value" (a note may hold the description: "How many customers are in the country
    whose capital is Oslo?", which a table answers "customers.csv has no city 'Oslo'"); a
    stored answer, a table's other answers, the catalog's or a whole document's stand.
    """
    steps = state.get("route") == "single" and state.get("nested") and state.get("subquestions")
    from_evidence = state.get("relevant_documents") is not None
    premise = (state.get("answer_kind") or "").startswith("table:premise")
    unanswered = premise or is_no_answer(state.get("answer") or "")
    return "decompose" if steps and (from_evidence or unanswered) else "finalize"


def route_after_decomposition(state: RAGState) -> str | list[Send]:
    """The chain's first step (the next follows when it is answered), or the answer kept."""
    if state.get("route") == "multi_step":
        return [Send("answer_part", parts.part_input(state, 0))]
    return "finalize"


def route_after_cache(state: PassState) -> Literal["answered", "choose_tool"]:
    """A stored answer ends the pass; otherwise the first pass is planned."""
    return "answered" if state.get("cache_hit") else "choose_tool"


def route_after_tool(
    state: PassState,
) -> Literal["read_document", "query_catalog", "query_table", "agent", "retrieve"]:
    """Follow the plan ``choose_tool`` made."""
    tool = tool_of(state)
    if tool == "document":
        return "read_document"
    if tool == "catalog":
        return "query_catalog"
    if tool == "loop":
        return "agent"
    return "query_table" if tool == "table" else "retrieve"


def route_after_table(
    state: PassState, runtime: Runtime[Context]
) -> Literal["answered", "agent", "retrieve"]:
    """A table's answer ends the pass; otherwise the text is searched (the CRAG fallback).

    With ``planner`` ``auto`` a question no table answered goes to the loop instead, which
    may read the text, list a column's values, join other tables or do both; not a described
    question asked whole, which is asked in its steps next (``tools.loop_takes_over``).
    """
    if not state.get("answer") and tools.loop_takes_over(state, context_of(runtime)):
        return "agent"
    return "answered" if state.get("answer") else "retrieve"


def route_after_answer(state: PassState, runtime: Runtime[Context]) -> Literal["answered", "agent"]:
    """The pass's answer ends it, or the loop takes on what the text did not answer.

    With ``planner`` ``auto``: a question the rules searched the text for though it names a
    table's listed values (the plan's ``rows``), when the text gave no answer (none found, or
    one under ``min_confidence``). "Who won more games in 2014, the Atlanta Braves or the
    Washington Nationals?" asks no computation the rules know, and its rows are in ``teams``.
    Not a described question asked whole, nor a part's look-up (``tools.loop_takes_over``).
    """
    plan = state.get("plan")
    text = plan is not None and plan["tool"] == "search" and bool(plan.get("rows"))
    unanswered = is_no_answer(state.get("answer") or "") and not state.get("unfilled")
    if text and unanswered and tools.loop_takes_over(state, context_of(runtime)):
        return "agent"
    return "answered"


def route_after_agent(
    state: PassState,
) -> Literal["answered", "run_tools", "agent", "validate_citations"]:
    """A step that calls tools has them run; an answer goes to the citation check.

    A table's answer to the whole question (``agent.settled``) is given as the rules give it;
    an answer before anything was read is sent back once (``agent.unread_answer``).
    """
    if state.get("answer"):
        return "answered"
    steps = state.get("loop_messages") or []
    if steps and isinstance(steps[-1], HumanMessage):
        return "agent"
    calls = getattr(steps[-1], "tool_calls", None) if steps else None
    return "run_tools" if calls else "validate_citations"


def route_after_grading(state: PassState) -> Literal["generate", "web_search"]:
    """Answer from the knowledge base when retrieval was correct, else search the web first.

    A question that names the documents to search ("according to the PDFs": ``where``) is
    answered from them alone, never the web.

    After this pass's web search the evidence is settled either way. A retry that has not
    used the web yet searches it too: a retry must bring new knowledge, not re-send the
    prompt that just failed.
    """
    if state.get("web_searched") or scope_of(state):  # a question scoped to its documents
        return "generate"
    retry_without_web = state.get("retry_count", 0) > 0 and not state.get("web_search_used")
    if state.get("retrieval_verdict") == "correct" and not retry_without_web:
        return "generate"
    return "web_search"


def route_after_citations(
    state: PassState,
) -> Literal["generate", "agent", "check_hallucination", "choose_answer"]:
    """End on "I don't know"; send citations that need a correction back; else go on.

    The loop's answer goes back to the loop (``agent``), which may read more before answering
    again; a text pass's to ``generate``.
    """
    if state.get("citation_feedback"):
        return "agent" if tool_of(state) == "loop" else "generate"
    if is_no_answer(state.get("generation", "")):
        return "choose_answer"
    return "check_hallucination"


def _can_retry(state: PassState, runtime: Runtime[Context]) -> bool:
    """Whether a pass may retry: retries left, time left, not a table question's text fallback.

    Time left: the retry would end within the question's ``answer_seconds`` at the pace of the
    passes so far (``nodes.shared.common.no_time_to_retry``).

    A table question that no query answered has spent its retry on the SQL (written twice);
    its search of the text is one pass, so the whole question stays within about three
    passes' time (a retried text pass after two queries took 175 s on 2 cores). The loop's
    answer is not retried either: the loop has already tried what it chose, within its budget.
    """
    if tool_of(state) in ("table", "loop"):
        return False
    ctx = context_of(runtime)
    return state.get("retry_count", 0) < ctx.max_retries and not no_time_to_retry(state, ctx)


def route_after_hallucination(
    state: PassState, runtime: Runtime[Context]
) -> Literal["check_relevance", "increment_retry", "choose_answer"]:
    """Grounded (or unknown) answers go on to the relevance check; others retry or end."""
    if state.get("grounded") != "no":
        return "check_relevance"
    return "increment_retry" if _can_retry(state, runtime) else "choose_answer"


def route_after_relevance(
    state: PassState, runtime: Runtime[Context]
) -> Literal["choose_answer", "increment_retry"]:
    """Relevant (or unknown) answers end the pass; others retry while retries remain."""
    if state.get("answers_question") != "no":
        return "choose_answer"
    return "increment_retry" if _can_retry(state, runtime) else "choose_answer"


def add_pass(
    builder: StateGraph[Any, Any, Any, Any], services: ServiceFactory | None, then: str
) -> None:
    """Add one question's pass, ``check_cache`` through ``choose_answer``, with its edges.

    Every node that writes the pass's answer (``check_cache`` on a hit, ``query_catalog``,
    ``read_document``, ``query_table`` on a table's answer, ``choose_answer``) goes to ``then``.
    """
    builder.add_node(ledgered(correction.check_cache, services))
    builder.add_node(ledgered(tools.choose_tool, services))
    builder.add_node(ledgered(tools.query_table, services))
    builder.add_node(ledgered(tools.query_catalog, services))
    builder.add_node(ledgered(tools.read_document, services))
    builder.add_node(ledgered(tools.agent, services))
    builder.add_node(ledgered(tools.run_tools, services))
    builder.add_node(ledgered(correction.rewrite_query, services))
    builder.add_node(ledgered(correction.retrieve, services))
    builder.add_node(ledgered(correction.grade_documents, services))
    builder.add_node(ledgered(correction.web_search, services))
    builder.add_node(ledgered(correction.refine_knowledge, services))
    builder.add_node(ledgered(correction.generate, services))
    builder.add_node(correction.validate_citations)
    builder.add_node(ledgered(correction.check_hallucination, services))
    builder.add_node(ledgered(correction.check_relevance, services))
    builder.add_node(correction.increment_retry)
    builder.add_node(ledgered(correction.choose_answer, services))
    builder.add_edge(START, "check_cache")
    builder.add_conditional_edges(
        "check_cache", route_after_cache, {"answered": then, "choose_tool": "choose_tool"}
    )
    builder.add_conditional_edges("choose_tool", route_after_tool)
    builder.add_conditional_edges(
        "query_table",
        route_after_table,
        {"answered": then, "agent": "agent", "retrieve": "retrieve"},
    )
    builder.add_conditional_edges(
        "agent",
        route_after_agent,
        {
            "answered": then,
            "run_tools": "run_tools",
            "agent": "agent",
            "validate_citations": "validate_citations",
        },
    )
    builder.add_edge("run_tools", "agent")
    builder.add_edge("query_catalog", then)
    builder.add_edge("read_document", then)
    builder.add_edge("retrieve", "grade_documents")
    builder.add_conditional_edges("grade_documents", route_after_grading)
    builder.add_edge("web_search", "refine_knowledge")
    builder.add_edge("refine_knowledge", "grade_documents")
    builder.add_edge("generate", "validate_citations")
    builder.add_conditional_edges("validate_citations", route_after_citations)
    builder.add_conditional_edges("check_hallucination", route_after_hallucination)
    builder.add_conditional_edges("check_relevance", route_after_relevance)
    builder.add_edge("increment_retry", "rewrite_query")
    builder.add_edge("rewrite_query", "retrieve")
    builder.add_conditional_edges(
        "choose_answer", route_after_answer, {"answered": then, "agent": "agent"}
    )


def build_pass_graph(
    services: ServiceFactory | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A question answered by the whole pass: ``answer_question``'s subgraph.

    Its output is its whole state, so a caller streaming subgraphs sees every node's update
    (LangGraph streams a subgraph's updates filtered to its output keys); the turn keeps only
    the keys it shares (``Answered``, ``relevant_documents``) and drops the rest.
    """
    builder = StateGraph(
        PassState, context_schema=Context, input_schema=PassInput, output_schema=PassState
    )
    add_pass(builder, services, then=END)
    return builder.compile(name="answer_question")


def build_part_graph(
    services: ServiceFactory | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """One part of a question answered by the whole pass: ``answer_part``'s subgraph."""
    builder = StateGraph(
        PartState, context_schema=Context, input_schema=PartInput, output_schema=PartOutput
    )
    add_pass(builder, services, then="collect_part")
    builder.add_node(parts.collect_part)
    builder.add_edge("collect_part", END)
    return builder.compile(name="answer_part")


def build_graph(
    services: ServiceFactory | None = None, checkpointer: Checkpointer = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Wire and compile the CRAG graph; its nodes get their clients from ``services``."""
    builder = StateGraph(
        RAGState, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node(ledgered(turn.contextualize_question, services))
    builder.add_node(ledgered(turn.analyze_query, services))
    builder.add_node(ledgered(turn.respond_small_talk, services))
    builder.add_node(turn.answer_from_history)
    builder.add_node("answer_question", build_pass_graph(services))
    builder.add_node("answer_part", build_part_graph(services))
    builder.add_node(parts.combine_parts)
    builder.add_node(parts.decompose)
    builder.add_node(turn.finalize)

    builder.add_edge(START, "contextualize_question")
    builder.add_edge("contextualize_question", "analyze_query")
    builder.add_conditional_edges(
        "analyze_query",
        route_after_analysis,
        ["respond_small_talk", "answer_from_history", "answer_part", "answer_question"],
    )
    builder.add_edge("respond_small_talk", "finalize")
    builder.add_edge("answer_from_history", "finalize")
    builder.add_conditional_edges("answer_question", route_after_question)
    builder.add_conditional_edges(
        "decompose", route_after_decomposition, ["answer_part", "finalize"]
    )
    builder.add_conditional_edges("answer_part", route_after_part, ["answer_part", "combine_parts"])
    builder.add_edge("combine_parts", "finalize")
    builder.add_edge("finalize", END)
    compiled = builder.compile(checkpointer=checkpointer, name="crag")
    return compiled.with_config(recursion_limit=step_limit(MAX_RETRIES_LIMIT))


graph = build_graph()
