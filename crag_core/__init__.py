"""crag_core: what the graph and its nodes are built on, below the application.

``crag_core.schema`` (the state and the run context), ``crag_core.formats`` (text out of files
and web pages), ``crag_core.clients`` (I/O: LLM, embeddings, Chroma and the keyword index,
tables, web search, the embedded model server), ``crag_core.text`` (text rules, no I/O) and
``crag_core.errors`` (the error types), in that order: each imports only those after it (text
and clients may import ``prompts``, which sits above the errors). Nothing here imports the
graph, the nodes or the application (``crag``); see docs/architecture.md.
"""
