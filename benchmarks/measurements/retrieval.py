"""Retrieval benchmark (no LLM): recall@1/5/10 and MRR@10 of the gold paragraph on SQuAD.

Indexes every paragraph of a SQuAD v1.1 file with the product's own ingest path (MiniLM +
Chroma, and BM25 in SQLite FTS5), then asks every question in each mode (dense, keyword,
hybrid) for the top 10 chunks and ranks paragraphs by their best chunk (recall@10: the gold
paragraph is among the top 10 chunks' paragraphs). Prints a table and writes it (Markdown and
JSON) to --out.

    .venv/bin/python -m benchmarks.measurements.retrieval --dataset \
        ../shared/data/squad-v1.1-dev.json.gz
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks import write_results  # noqa: E402
from crag.eval.corpus import index_paragraphs, paragraph_of  # noqa: E402
from crag.eval.metrics import percentile  # noqa: E402
from crag.eval.squad import Question, load_squad  # noqa: E402
from crag.eval.tables import markdown_table  # noqa: E402

MODES = ("dense", "keyword", "hybrid")
CHUNKS_PER_QUERY = 10  # paragraphs are ranked by their best chunk among these


COLUMNS = [
    ("mode", "mode"),
    ("recall@1", "recall@1"),
    ("recall@5", "recall@5"),
    ("recall@10", "recall@10"),
    ("mrr@10", "MRR@10"),
    ("latency_p50_ms", "latency p50"),
    ("latency_p95_ms", "latency p95"),
]


def parse_args() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None, help="questions (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None, help="index dir (kept, reused)")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset")
    return parser.parse_args()


def measure(kb: Any, questions: list[Question], mode: str) -> dict[str, float]:
    """Recall@1/5/10, MRR@10 and search latency of ``mode`` over ``questions``."""
    hits = {1: 0, 5: 0, 10: 0}
    reciprocal = 0.0
    latencies = []
    for q in questions:
        t0 = time.perf_counter()
        docs = kb.search(q.question, CHUNKS_PER_QUERY, mode)
        latencies.append(time.perf_counter() - t0)
        ranked = list(dict.fromkeys(paragraph_of(d.metadata["id"]) for d in docs))[:10]
        if q.paragraph_id in ranked:
            rank = ranked.index(q.paragraph_id) + 1
            reciprocal += 1.0 / rank
            for k in hits:
                hits[k] += rank <= k
    n = len(questions)
    return {
        "recall@1": hits[1] / n,
        "recall@5": hits[5] / n,
        "recall@10": hits[10] / n,
        "mrr@10": reciprocal / n,
        "latency_p50_ms": 1000 * percentile(latencies, 50),
        "latency_p95_ms": 1000 * percentile(latencies, 95),
    }


def table(results: dict[str, dict[str, float]]) -> str:
    """The results as the Markdown table in docs/benchmarks/retrieval.md."""
    rows = [
        {"mode": mode}
        | {k: f"{v:.1f} ms" if k.startswith("latency") else f"{v:.3f}" for k, v in r.items()}
        for mode, r in results.items()
    ]
    return markdown_table(rows, COLUMNS)


def main() -> None:
    """Index the dataset, measure every mode, write the table."""
    from crag_core.clients.embeddings import default_embeddings
    from crag_core.clients.knowledge_base import KnowledgeBase

    args = parse_args()
    dataset = load_squad(args.dataset)
    questions = dataset.sample(args.limit, args.seed)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="crag-bench-"))
    started = time.perf_counter()
    embeddings = default_embeddings()
    load_s = time.perf_counter() - started
    kb = KnowledgeBase(workdir / "chroma", "squad", embeddings)
    started = time.perf_counter()
    written = index_paragraphs(kb, dataset)
    build_s = time.perf_counter() - started
    print(
        f"{len(dataset.paragraphs)} paragraphs ({kb.count()} chunks; {written} written) indexed "
        f"in {build_s:.1f}s (embedding model load {load_s:.1f}s); {len(questions)} questions"
    )
    results = {}
    for mode in args.modes.split(","):
        results[mode] = measure(kb, questions, mode)
        print(f"{mode}: {results[mode]}")
    build = (
        f"Index build {build_s:.0f} s (MiniLM on CPU; BM25 index included)"
        if written == len(dataset.paragraphs)
        else f"Index reused from {workdir} ({written} paragraphs written, {build_s:.0f} s)"
    )
    summary = (
        f"SQuAD v1.1 dev: {len(dataset.paragraphs)} paragraphs ({kb.count()} chunks), "
        f"{len(questions)} questions. {build}; embedding-model load {load_s:.1f} s. "
        f"Latency is one `search` call (query embedding included), top {CHUNKS_PER_QUERY} chunks."
    )
    print(f"\n{table(results)}")
    details = {
        "dataset": str(args.dataset.name),
        "paragraphs": len(dataset.paragraphs),
        "chunks": kb.count(),
        "questions": len(questions),
        "index_build_s": build_s,
        "paragraphs_written": written,
        "results": results,
    }
    write_results(args.out, "retrieval", summary, table(results), details)


if __name__ == "__main__":
    main()
