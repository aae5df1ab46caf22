"""The clients the graph talks to, behind small interfaces.

The chat model (``llm``, ``model_pool``, the embedded ``local_model``), sentence embeddings
(``embeddings``, ``onnx_encoder``), the knowledge base (``knowledge_base``: Chroma plus the
SQLite ``keyword_index``; ``documents`` is how a chunk looks to the graph), the answer cache,
web search (``web_providers``: Tavily or the bundled encyclopedia), the small-talk classifier,
process settings (``settings``) and the error types. ``services.Services`` bundles one run's
clients. Nothing here imports the graph, its nodes or its state: clients take plain arguments.
"""
