"""Ingest throughput (no LLM): chunks per second, file by file against batched, and the bound.

Writes SQuAD dev paragraphs as plain-text files (one per paragraph, like a folder of notes),
then ingests the folder into a fresh collection with the product's ``crag.ingest`` path and
the real MiniLM model, once per batch size (1 chunk: every file written on its own, as
ingestion used to; 256: the default). The bound is MiniLM alone encoding the same chunks.

    .venv/bin/python -m benchmarks.measurements.ingest --dataset \
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
from crag import ingest as ingestion  # noqa: E402
from crag.eval.squad import load_squad  # noqa: E402
from crag.eval.tables import markdown_table  # noqa: E402

COLUMNS = [
    ("run", "run"),
    ("files", "files"),
    ("chunks", "chunks"),
    ("seconds", "seconds"),
    ("chunks_per_s", "chunks / s"),
]


def write_files(dataset: Path, folder: Path, limit: int) -> int:
    """Up to ``limit`` paragraphs of ``dataset`` as ``.txt`` files in ``folder``."""
    paragraphs = load_squad(dataset).paragraphs[:limit]
    for para in paragraphs:
        (folder / f"{para.id}.txt").write_text(para.text, encoding="utf-8")
    return len(paragraphs)


def timed_ingest(folder: Path, store: Path, batch_chunks: int) -> dict[str, Any]:
    """Ingest ``folder`` into a new collection with batches of ``batch_chunks`` chunks."""
    from crag_core.clients.embeddings import default_embeddings
    from crag_core.clients.knowledge_base import KnowledgeBase

    kb = KnowledgeBase(store, f"ingest-{batch_chunks}", default_embeddings())
    ingestion.BATCH_CHUNKS = batch_chunks
    started = time.perf_counter()
    report = ingestion.ingest(kb, [str(folder)])
    seconds = time.perf_counter() - started
    files = len(report.added)
    return {"files": files, "chunks": report.chunks, "seconds": seconds}


def encode_only(folder: Path) -> dict[str, Any]:
    """MiniLM alone on the same chunks, in batches of 32: the bound for ingestion."""
    from crag_core.clients.embeddings import default_embeddings
    from crag_core.formats.extract import extract

    texts = [t for f in sorted(folder.iterdir()) for t, _ in ingestion.chunk(extract(f))]
    model = default_embeddings()
    started = time.perf_counter()
    model.embed_documents(texts)
    return {
        "files": len(list(folder.iterdir())),
        "chunks": len(texts),
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    """Write the files, ingest them per file and batched, encode them alone; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=600, help="paragraphs (files)")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args()
    from crag_core.clients.embeddings import default_embeddings

    default_embeddings().embed_query("warm up")  # the model load is not ingestion
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder, store = Path(tmp) / "files", Path(tmp) / "store"
        folder.mkdir()
        write_files(args.dataset, folder, args.limit)
        for label, batch in [("file by file (batch of 1 chunk)", 1), ("batched (256 chunks)", 256)]:
            rows.append({"run": label} | timed_ingest(folder, store, batch))
            print(rows[-1])
        rows.append({"run": "MiniLM encode only (bound)"} | encode_only(folder))
    for r in rows:
        r["chunks_per_s"] = f"{r['chunks'] / r['seconds']:.1f}"
        r["seconds"] = f"{r['seconds']:.1f}"
    table = markdown_table(rows, COLUMNS)
    summary = (
        f"{args.limit} SQuAD v1.1 dev paragraphs written as .txt files, ingested into a fresh "
        "collection each run (MiniLM on CPU, Chroma, SQLite FTS5), in one process; the model "
        "was loaded before timing."
    )
    print(f"\n{table}")
    write_results(args.out, "ingest", summary, table, {"limit": args.limit, "rows": rows})


if __name__ == "__main__":
    main()
