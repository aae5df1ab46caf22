"""What the nodes of every stage share.

The pass's question and documents and ``@reports`` (``common``), prompts at their configured version
on the shared evidence message (``prompting``), an answer's sources and the pass as an attempt
(``answers``), and an answer's fitted confidence (``confidence``, with ``confidence.json`` and
``tool_confidence.json``).

No node lives here, and nothing here imports a stage (an import contract holds it).
"""
