"""Similarity-floor benchmark (no LLM): what the floor keeps from the grader, on SQuAD.

Indexes half of a SQuAD v1.1 file's articles (every other title) with the product's ingest
path, then asks a sample of questions from all articles in hybrid mode for the top 4 chunks,
as the graph's ``retrieve`` node does (question only: no rewrite, no LLM), and applies each
floor policy with the node's own ``above_floor``:

- in-corpus questions (their article is indexed): how often the gold paragraph survives the
  floor, and how many chunks go on to the grader (one LLM call each);
- out-of-corpus questions (their article is not indexed, so every chunk is off-topic): how
  many chunks still reach the grader, and how often none does (the run goes straight to web
  search, which is the right outcome).

    .venv/bin/python -m benchmarks.measurements.floor --dataset \
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

from langchain_core.documents import Document  # noqa: E402

from benchmarks import write_results  # noqa: E402
from crag.eval.corpus import index_paragraphs, paragraph_of  # noqa: E402
from crag.eval.squad import Dataset, Question, load_squad  # noqa: E402
from crag.eval.tables import markdown_table  # noqa: E402
from crag_core.schema.context import Context  # noqa: E402
from crag_core.text.documents import above_floor  # noqa: E402

TOP_K = Context().top_k
# (label, min_similarity, keyword_min_similarity); -1 means no floor.
POLICIES = [
    ("no floor", -1.0, -1.0),
    ("0.20 for all", 0.2, 0.2),
    ("0.25 for all", 0.25, 0.25),
    ("0.30 for all", 0.3, 0.3),
    ("0.35 for all", 0.35, 0.35),
    ("0.30; top BM25 hit: no floor", 0.3, -1.0),
    ("0.30; top BM25 hit: 0.15", 0.3, 0.15),
    ("0.30; top BM25 hit: 0.20 (default)", 0.3, 0.2),
    ("0.30; top BM25 hit: 0.25", 0.3, 0.25),
]


COLUMNS = [
    ("policy", "floor"),
    ("in_gold_kept", "in corpus: gold kept"),
    ("in_chunks_graded", "in corpus: chunks graded / q"),
    ("out_chunks_graded", "out of corpus: chunks graded / q"),
    ("out_none_graded", "out of corpus: straight to web"),
]


def parse_args() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=3000, help="questions sampled")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None, help="index dir (kept, reused)")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    return parser.parse_args()


def evaluate(
    inside: list[tuple[Question, list[Document]]], outside: list[list[Document]]
) -> list[dict[str, Any]]:
    """Each floor policy's effect on the in-corpus and out-of-corpus retrievals."""
    results = []
    for label, floor, keyword_floor in POLICIES:
        kept_in = [(q, above_floor([docs], floor, keyword_floor)) for q, docs in inside]
        kept_out = [above_floor([docs], floor, keyword_floor) for docs in outside]
        gold = sum(
            any(paragraph_of(d.metadata["id"]) == q.paragraph_id for d in kept)
            for q, kept in kept_in
        )
        results.append(
            {
                "policy": label,
                "min_similarity": floor,
                "keyword_min_similarity": keyword_floor,
                "in_gold_kept": gold / len(kept_in),
                "in_chunks_graded": sum(len(k) for _, k in kept_in) / len(kept_in),
                "out_chunks_graded": sum(len(k) for k in kept_out) / len(kept_out),
                "out_none_graded": sum(not k for k in kept_out) / len(kept_out),
            }
        )
    return results


def table(results: list[dict[str, Any]]) -> str:
    """The results as the Markdown table in docs/benchmarks/floor.md."""
    digits = {"in_gold_kept": 3, "in_chunks_graded": 2, "out_chunks_graded": 2}
    rows = [
        {k: f"{v:.{digits.get(k, 3)}f}" if isinstance(v, float) else v for k, v in r.items()}
        for r in results
    ]
    return markdown_table(rows, COLUMNS)


def main() -> None:
    """Index half the articles, retrieve for every sampled question, compare the policies."""
    from crag_core.clients.embeddings import default_embeddings
    from crag_core.clients.knowledge_base import KnowledgeBase

    args = parse_args()
    dataset = load_squad(args.dataset)
    titles = list(dict.fromkeys(p.title for p in dataset.paragraphs))
    indexed = set(titles[0::2])
    half = Dataset([p for p in dataset.paragraphs if p.title in indexed], [])
    title_of = {p.id: p.title for p in dataset.paragraphs}
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="crag-floor-"))
    kb = KnowledgeBase(workdir / "chroma", "squad-half", default_embeddings())
    started = time.perf_counter()
    written = index_paragraphs(kb, half)
    print(
        f"{len(half.paragraphs)} of {len(dataset.paragraphs)} paragraphs ({len(indexed)} of "
        f"{len(titles)} articles, {kb.count()} chunks; {written} written) indexed in "
        f"{time.perf_counter() - started:.0f}s"
    )
    questions = dataset.sample(args.limit, args.seed)
    searched = [(q, kb.search(q.question, TOP_K, "hybrid")) for q in questions]
    inside = [(q, docs) for q, docs in searched if title_of[q.paragraph_id] in indexed]
    outside = [docs for q, docs in searched if title_of[q.paragraph_id] not in indexed]
    results = evaluate(inside, outside)
    summary = (
        f"SQuAD v1.1 dev, {len(indexed)} of {len(titles)} articles indexed "
        f"({len(half.paragraphs)} paragraphs, {kb.count()} chunks); {len(questions)} questions "
        f"(seed {args.seed}): {len(inside)} in corpus, {len(outside)} out of corpus; hybrid "
        f"top {TOP_K}, question only."
    )
    print(f"\n{summary}\n\n{table(results)}")
    details = {
        "dataset": args.dataset.name,
        "articles_indexed": len(indexed),
        "chunks": kb.count(),
        "questions_in_corpus": len(inside),
        "questions_out_of_corpus": len(outside),
        "top_k": TOP_K,
        "results": results,
    }
    write_results(args.out, "floor", summary, table(results), details)


if __name__ == "__main__":
    main()
