"""The CRAG graph's nodes, one module each, in one package per stage of the graph.

``turn`` (where a question starts and its answer ends), ``tools`` (the planner and the tools
it sends a question to), ``correction`` (the corrective pass: retrieve, grade, search the web,
generate, check, retry) and ``parts`` (a question asked in parts); ``shared`` is what they all
use. Each stage exports all its nodes, and the wiring (``graph.graph``) imports stages.

Every node is a short function of ``(state, runtime)``, or ``(state, runtime, services)`` when
it talks to a client, that returns only the keys it changes. Nodes never build a client: the
graph hands them theirs (``graph.factory.bind``).
"""
