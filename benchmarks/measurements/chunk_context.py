"""Chunks that name their page (no LLM): does a context line help the encoder find the answer?

A documentation page's sections are chunked apart (``crag.ingest.chunk``), and most of them
never name their page: the Format section of R's ``warpbreaks`` page is "A data frame with 54
observations on 3 variables", with no "warpbreaks" in it, while its one-word Usage chunk
("warpbreaks") and its title chunk match the question's name best. This measures, on the
``rdocs`` question set (its pages are in the repository; every question ``calibration``), how
often a chunk holding the gold answer is among the encoder's top 4 when each chunk is
embedded as stored, and when it is embedded after one context line: the page's title and the
chunk's heading path ("warpbreaks | R Documentation > … > Format"). Dense similarity only,
the product's encoder; no keyword index and no model.

    .venv/bin/python -m benchmarks.measurements.chunk_context --out docs/benchmarks
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import write_results
from benchmarks.measurements.rdocs_questions import FILES, QUESTIONS
from crag.eval.records import read_records
from crag.eval.tables import markdown_table
from crag.ingest import chunk
from crag_core.clients.embeddings import default_embeddings
from crag_core.formats.extract import extract
from crag_core.schema.context import Context

TOP_K = Context().top_k
WAYS = ("as stored", "after a context line")


def chunks(files: dict[str, Path]) -> list[tuple[str, str]]:
    """Every page's chunks: (as stored, with the context line before it)."""
    made = []
    for path in files.values():
        extracted = extract(path)
        for text, where in chunk(extracted):
            head = " > ".join(h for h in (extracted.title, str(where.get("heading", ""))) if h)
            made.append((text, f"{head}\n{text}" if head else text))
    return made


def holds(text: str, gold: Any) -> bool:
    """Whether ``text`` states the gold (a number or word as a whole token; any of a list)."""
    golds = gold if isinstance(gold, list) else [gold]
    return any(
        re.search(rf"(?<![\w.]){re.escape(str(g))}(?![\w.])", text, re.IGNORECASE) for g in golds
    )


def run() -> dict[str, Any]:
    """Top-4 hits per way of embedding, by question type."""
    made = chunks(FILES)
    questions = read_records(QUESTIONS)
    encoder = default_embeddings()
    asked = np.array(encoder.embed_documents([q["question"] for q in questions]))
    asked /= np.linalg.norm(asked, axis=1, keepdims=True)
    hits: dict[str, dict[str, list[int]]] = {}
    for i, way in enumerate(WAYS):
        vectors = np.array(encoder.embed_documents([c[i] for c in made]))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for q, row in zip(questions, asked @ vectors.T, strict=True):
            top = np.argsort(-row)[:TOP_K]
            found = int(any(holds(made[j][0], q["gold"]) for j in top))
            hits.setdefault(q["type"], {}).setdefault(way, []).append(found)
            hits.setdefault("all", {}).setdefault(way, []).append(found)
    return {"chunks": len(made), "questions": len(questions), "hits": hits}


def table(result: dict[str, Any]) -> tuple[str, str]:
    """The summary line, and questions whose top 4 holds a chunk stating the gold, each way."""
    rows = [
        {"kind": kind, "n": len(ways[WAYS[0]])}
        | {w: f"{sum(ways[w])} ({sum(ways[w]) / len(ways[w]):.0%})" for w in WAYS}
        for kind, ways in sorted(result["hits"].items(), key=lambda kv: kv[0] == "all")
    ]
    columns = [
        ("kind", "questions"),
        ("n", "n"),
        *((w, f"gold in the top {TOP_K}: {w}") for w in WAYS),
    ]
    summary = (
        f"{result['chunks']} chunks of {len(FILES)} pages, {result['questions']} questions "
        f"(rdocs, calibration), the encoder's top {TOP_K}:"
    )
    return summary, markdown_table(rows, columns)


def main(argv: list[str] | None = None) -> int:
    """Measure and write ``chunk-context-table.md`` / ``.json`` under ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args(argv)
    result = run()
    summary, text = table(result)
    print(f"{summary}\n\n{text}")
    write_results(args.out, "chunk-context", summary, text, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
