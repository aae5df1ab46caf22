"""The CRAG LangGraph: state (``graph.state``), configuration (``graph.context``) and wiring
(``graph.graph``, which exports the compiled ``graph``).
"""
