"""Naive RAG built from the CRAG graph's own nodes: retrieve once, generate once.

The evaluation's baseline. It reuses ``retrieve``, ``generate``, ``validate_citations``,
``choose_answer`` and ``finalize`` with the same retriever, model and prompts, so a comparison
with the CRAG graph measures only what CRAG adds: no similarity floor, no evaluator, no web
search, no checks, no confidence gate, no retries, no citation corrections (the answer is still
attributed to the documents that contain it, exactly as in CRAG).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from crag_core.schema.context import Context
from crag_core.schema.state import OutputState, PassState, QuestionInput
from graph.factory import ServiceFactory, ledgered
from nodes.correction import choose_answer, generate, retrieve, validate_citations
from nodes.turn import finalize


def naive_context(ctx: Context) -> Context:
    """``ctx`` as the naive pipeline runs it.

    Every top-k chunk kept as retrieved (no floor, no reading around), no citation correction,
    no answer cache, and every answer given (the confidence gate reads CRAG's checks, which
    naive RAG does not run).
    """
    return replace(
        ctx,
        min_similarity=-1.0,
        keyword_min_similarity=-1.0,
        max_citation_corrections=0,
        answer_cache=False,
        read_around=False,
        min_confidence=0.0,
    )


def build_naive_graph(
    services: ServiceFactory | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Wire and compile the naive baseline; its nodes get their clients from ``services``."""
    builder = StateGraph(
        PassState, context_schema=Context, input_schema=QuestionInput, output_schema=OutputState
    )
    builder.add_node(ledgered(retrieve, services))
    builder.add_node(ledgered(generate, services))
    builder.add_node(validate_citations)
    builder.add_node(ledgered(choose_answer, services))
    builder.add_node(finalize)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "generate")
    builder.add_edge("generate", "validate_citations")
    builder.add_edge("validate_citations", "choose_answer")
    builder.add_edge("choose_answer", "finalize")
    builder.add_edge("finalize", END)
    return builder.compile(name="naive-rag")
