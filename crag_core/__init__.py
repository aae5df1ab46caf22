"""crag_core: what the graph and its nodes are built on, below the application.

``crag_core.schema`` (the state and the run context), ``crag_core.text`` (text rules the
nodes apply), ``crag_core.formats`` (text out of files and web pages) and ``crag_core.clients``
(LLM, embeddings, Chroma and the keyword index, web search, the embedded model server), in
that order: each imports only those after it (and ``prompts``). Nothing here imports the
graph, the nodes or the application (``crag``); see docs/architecture.md.
"""
