"""Text rules the nodes apply, with no model call of their own.

Routing rules (``query_analysis``), citation keys (``citations``), reading around a hit and
the documents' token budget (``read_around``), what counts as a question (``questions``),
where an answer stands in its documents (``support``) and answer text as a reader sees it
(``answer_text``).
"""
