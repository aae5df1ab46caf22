"""The CRAG graph's nodes, one module each.

Every node is a short function of ``(state, runtime)``, or ``(state, runtime, services)`` when
it talks to a client, that returns only the keys it changes. Nodes never build a client: the
graph hands them theirs (``graph.factory.bind``).
"""

from nodes.analyze_query import analyze_query
from nodes.answer_from_history import answer_from_history
from nodes.check_cache import check_cache
from nodes.check_hallucination import check_hallucination
from nodes.check_relevance import check_relevance
from nodes.choose_answer import choose_answer
from nodes.combine_parts import combine_parts
from nodes.contextualize_question import contextualize_question
from nodes.decompose import decompose
from nodes.finalize import finalize
from nodes.generate import generate
from nodes.grade_documents import grade_documents
from nodes.increment_retry import increment_retry
from nodes.refine_knowledge import refine_knowledge
from nodes.respond_small_talk import respond_small_talk
from nodes.retrieve import retrieve
from nodes.rewrite_query import rewrite_query
from nodes.validate_citations import validate_citations
from nodes.web_search import web_search

__all__ = [
    "analyze_query",
    "answer_from_history",
    "check_cache",
    "check_hallucination",
    "check_relevance",
    "choose_answer",
    "combine_parts",
    "contextualize_question",
    "decompose",
    "finalize",
    "generate",
    "grade_documents",
    "increment_retry",
    "refine_knowledge",
    "respond_small_talk",
    "retrieve",
    "rewrite_query",
    "validate_citations",
    "web_search",
]
