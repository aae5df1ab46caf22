"""The clients the graph talks to, behind small interfaces: everything here does I/O.

The chat model (``llm``, ``model_pool``, the embedded ``local_model``, ``resident``), sentence
embeddings (``embeddings``, ``onnx_encoder``), the knowledge base (``knowledge_base``: Chroma
plus the SQLite ``keyword_index`` and ``table_store``; ``chroma``: opening a store;
``keyword_copy``: a shared store's local copies), the answer cache, web search
(``web_providers``: Tavily or the bundled encyclopedia), the small-talk classifier and process
settings (``settings``). ``services.Services`` bundles one run's clients. Text rules they share
(normalizing, sentences, a chunk's id, a table's shape) are in ``crag_core.text``, below them.
Nothing here imports the graph, its nodes or its state: clients take plain arguments.
"""
