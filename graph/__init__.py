"""The CRAG LangGraph's wiring.

``graph.graph`` wires the nodes and exports the compiled ``graph``; ``graph.naive`` is the
naive baseline built from the same nodes; ``graph.factory`` builds the clients the nodes are
handed. The state and the run context are in ``crag_core.schema``.
"""
