"""The planner and its tools: what a question's pass reads.

``choose_tool`` makes the pass's ``plan`` by rules (``crag_core.schema.state.Plan``);
``query_table`` (SQL over the tables the plan names), ``query_catalog`` (the collection's
documents by the plan's catalog query) and ``read_document`` (the plan's document, whole)
carry it out and never parse the question again; a search goes on to ``correction``.
With the ``loop`` plan, ``agent`` (the model) chooses among the same capabilities as tools
(``toolbox``) one step at a time and ``run_tools`` runs its calls, until it answers.
"""

from nodes.tools.agent import agent
from nodes.tools.choose_tool import choose_tool
from nodes.tools.query_catalog import query_catalog
from nodes.tools.query_table import loop_takes_over, query_table
from nodes.tools.read_document import read_document
from nodes.tools.run_tools import run_tools

__all__ = [
    "agent",
    "choose_tool",
    "loop_takes_over",
    "query_catalog",
    "query_table",
    "read_document",
    "run_tools",
]
