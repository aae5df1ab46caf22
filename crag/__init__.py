"""crag: adapters, ingestion and command line for the Corrective-RAG graph.

The graph itself lives in the top-level ``graph`` package and its nodes in ``nodes``;
this package holds what they talk to: the LLM, embeddings, the knowledge base (Chroma),
web search, and the embedded model server.
"""
