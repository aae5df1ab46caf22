"""The CRAG LangGraph.

State lives in ``graph.state``, configuration in ``graph.context``, and the wiring in
``graph.graph``, which exports the compiled ``graph``.
"""
