"""The embedding model: query vectors are encoded once and handed out as fresh lists."""

from __future__ import annotations

from typing import Any

from crag_core.clients.embeddings import QUERIES_REMEMBERED, default_embeddings


def test_a_repeated_query_is_encoded_once_and_callers_get_their_own_copy(monkeypatch):
    model = default_embeddings()
    encoded: list[list[str]] = []
    encode = model._model.encode

    def counting(texts: list[str], **kw: Any) -> Any:
        encoded.append(list(texts))
        return encode(texts, **kw)

    monkeypatch.setattr(model._model, "encode", counting)
    question = "Which team won Super Bowl 50? (embedding test)"
    first = model.embed_query(question)
    first[0] = 99.0  # a caller changing its vector changes nobody else's
    second = model.embed_query(question)
    assert encoded == [[question]]
    assert second[0] != 99.0 and len(second) == 384
    assert second == model.embed_documents([question])[0]  # the same vector as encoded anew
    for n in range(QUERIES_REMEMBERED):  # the memory is bounded: old queries are encoded again
        model.embed_query(f"filler {n}")
    model.embed_query(question)
    assert encoded[-1] == [question]


def test_the_onnx_encoder_masks_padding_and_truncates_like_the_model():
    import numpy as np

    encoder = default_embeddings()._model
    short = "Who won Super Bowl 50?"
    long = "The Denver Broncos defeated the Carolina Panthers. " * 80  # over 256 tokens
    alone = encoder.encode([short])[0]
    batched = encoder.encode([long, short, "hello"])
    assert np.allclose(batched[1], alone, atol=1e-5)  # padding to the longest changes nothing
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    longer = encoder.encode([long + " Extra words far past the limit."])[0]
    assert np.allclose(longer, batched[0], atol=1e-5)  # only the first 256 tokens count
    assert encoder.encode([]).shape == (0, 384)
