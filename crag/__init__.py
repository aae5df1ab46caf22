"""crag: the application layer of the Corrective-RAG graph.

The command line (``crag.cli``), running a question or a thread turn (``crag.run``,
``crag.threads``), ingestion (``crag.ingest``) and evaluation (``crag.eval``). It sits on top
of ``graph`` (the wiring), which uses ``nodes``, which use ``crag_core`` (state and context,
text rules, file formats, clients) and ``prompts``; see docs/architecture.md.
"""
