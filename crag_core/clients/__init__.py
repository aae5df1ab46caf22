"""The clients the graph talks to, behind small interfaces: everything here does I/O.

The chat model (``llm``; the model servers themselves are ``crag_core.runtime``'s), sentence
embeddings (``embeddings``), the knowledge base (``knowledge_base``: Chroma plus the SQLite
``keyword_index`` and ``table_store``; ``chroma``: opening a store; ``keyword_copy``: a
shared store's local copies), the answer cache, web search (``web_providers``: Tavily or the
bundled encyclopedia), the small-talk classifier, and a run's cost (``usage``).
``services.Services`` bundles one run's clients. Process settings are ``crag_core.settings``.
Text rules they share (normalizing, sentences, a chunk's id, a table's shape) are in
``crag_core.text``, below them. Nothing here imports the graph, its nodes, its state or the
file formats (a sibling layer): clients take plain arguments.
"""
