"""Text rules: pure functions of text, documents and tables, with no I/O and no model call.

Words (``words``: normalizing, numbers, stopwords, plurals), sentences (``sentences``: the one
rule for where a sentence ends), documents as the graph and the prompts see them
(``documents``), where a document came from and how it is named (``sources``), metadata
filters (``filters``), a table's shape (``table_shapes``), routing rules (``query_analysis``,
``catalog``), citation keys (``citations``), reading around a hit and the token budget
(``read_around``), what counts as a question (``questions``), where an answer stands in its
documents (``support``), answer text as a reader sees it (``answer_text``, ``answer_type``,
``whole_answer``), SQL and its grammar (``sql``, ``sql_grammar``), a whole document's request
(``whole_document``). A new text rule goes here: clients, formats and nodes all import it.
"""
