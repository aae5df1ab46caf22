"""The model runtime: the embedded models and the processes that serve them, below the clients.

``local_model`` (the embedded model's file assembled from its parts and checked, its
llama.cpp server), ``resident`` (model servers registered for every process: the one
``crag ask`` starts and shares, found, replaced when killed, gone when idle), ``model_pool``
(several OpenAI-compatible servers as one chat model: calls spread by prompt prefix, a dead
server skipped) and ``onnx_encoder`` (MiniLM sentence embeddings on onnxruntime). Clients
(``crag_core.clients.llm``, ``embeddings``) build on them; nothing here knows a client, a
file format, the graph's state or a node (an import contract holds it).
"""
