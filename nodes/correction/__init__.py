"""The corrective pass: one question searched, graded, answered and checked.

``check_cache`` (a stored answer), ``retrieve``, ``grade_documents`` (CRAG's evaluator),
``web_search`` and ``refine_knowledge`` (the correction), ``generate`` with citations,
``validate_citations``, ``check_hallucination``, ``check_relevance``, ``increment_retry`` and
``rewrite_query`` (a retry), ``choose_answer`` (the pass's answer, if sure enough). ``cached``
(where a stored answer is valid, and storing one) is theirs.
"""

from nodes.correction.check_cache import check_cache
from nodes.correction.check_hallucination import check_hallucination
from nodes.correction.check_relevance import check_relevance
from nodes.correction.choose_answer import choose_answer
from nodes.correction.generate import generate
from nodes.correction.grade_documents import grade_documents
from nodes.correction.increment_retry import increment_retry
from nodes.correction.refine_knowledge import refine_knowledge
from nodes.correction.retrieve import retrieve
from nodes.correction.rewrite_query import rewrite_query
from nodes.correction.validate_citations import validate_citations
from nodes.correction.web_search import web_search

__all__ = [
    "check_cache",
    "check_hallucination",
    "check_relevance",
    "choose_answer",
    "generate",
    "grade_documents",
    "increment_retry",
    "refine_knowledge",
    "retrieve",
    "rewrite_query",
    "validate_citations",
    "web_search",
]
