"""crag: the application layer of the Corrective-RAG graph.

The command line (``crag.cli``), running a question or a thread turn (``crag.run``,
``crag.threads``), ingestion (``crag.ingest``) and evaluation (``crag.eval``). It sits on top
of ``graph`` (the wiring), which uses ``nodes``, ``crag.schema`` (state and context),
``crag.text`` (text rules), ``crag.clients`` (LLM, embeddings, Chroma, keyword index, web
search, embedded model server), ``crag.formats`` (file and page extraction) and ``prompts``;
see docs/architecture.md.
"""
