"""The light retrieval evaluator: P(a chunk states the answer), without the language model.

CRAG's evaluator is a light model that scores a (question, document) pair; crag's first one
was the generator itself reading all the evidence, which made grading most of a question's
time (docs/benchmarks/mixed). This one scores each pair from what the encoder and the text
rules read (``crag_core.text.evidence_signals``: the question's similarity to the chunk and
to its closest sentence, the question's words, word pairs and names the chunk holds, and
whether the sentence that holds most of the question holds something of the kind asked for)
with a logistic model fitted on question-paragraph pairs
(``benchmarks/calibration/light_evaluator.py`` writes ``evaluator.json``; SQuAD dev questions
of the calibration split's articles outside every split, never a reported set).

``light_score`` is the best chunk's score: the evidence states the answer when one chunk does.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from crag_core.clients.embeddings import cosine
from crag_core.text.evidence_signals import sentences_of, signals
from nodes.shared.confidence import logistic

FIT = Path(__file__).with_name("evaluator.json")
"""The fitted model: feature names, weights, intercept, and what it was fitted on."""

MAX_SENTENCES = 12
"""Sentences of one chunk the encoder compares with the question (a web page's summary can be
long; the answer of a pair that scores at all is rarely past its twelfth sentence)."""


@cache
def _fit(path: Path = FIT) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def pair_signals(
    embeddings: Embeddings, question: str, docs: list[Document]
) -> list[dict[str, float | None]]:
    """Each chunk's signals (one encoder batch for the chunks and their sentences)."""
    texts = [d.page_content for d in docs]
    sentences = [sentences_of(t)[:MAX_SENTENCES] for t in texts]
    flat = [s for group in sentences for s in group]
    vectors = embeddings.embed_documents(texts + flat) if texts else []
    asked = embeddings.embed_query(question)
    found, start = [], len(texts)
    for text, vector, group in zip(texts, vectors[: len(texts)], sentences, strict=True):
        near = [cosine(asked, v) for v in vectors[start : start + len(group)]]
        start += len(group)
        found.append(signals(question, text, cosine(asked, vector), near))
    return found


def chunk_scores(embeddings: Embeddings, question: str, docs: list[Document]) -> list[float]:
    """P(the chunk states the answer) for each of ``docs``, in order."""
    model = _fit()
    return [logistic(model, s) for s in pair_signals(embeddings, question, docs)]


def light_score(embeddings: Embeddings, question: str, docs: list[Document]) -> float:
    """P(the evidence states the answer): its best chunk's; 0.0 for no documents."""
    return max(chunk_scores(embeddings, question, docs), default=0.0)
