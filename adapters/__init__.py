"""The clients the graph talks to, behind small interfaces, and the plain helpers they share.

The chat model (``llm``), sentence embeddings, the knowledge base (Chroma plus the SQLite
keyword index), web search (Tavily or the bundled encyclopedia), the embedded model server,
the data dir (``settings``) and the error types. Nothing here imports the graph, its nodes or
its state: adapters take plain arguments.
"""
