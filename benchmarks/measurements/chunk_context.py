"""Chunks that name their page (no LLM): does a context line help the encoder find the answer?

A documentation page's sections are chunked apart, and most of them never name their page:
the Format section of R's ``warpbreaks`` page is "A data frame with 54 observations on 3
variables", with no "warpbreaks" in it, while its one-word Usage chunk ("warpbreaks") and
its title chunk match the question's name best. This measures, on the
``rdocs`` question set (its pages are in the repository; every question ``calibration``), how
often a chunk holding the gold answer is among the encoder's top 4 when each chunk is
stored as its text alone, and when it is stored as ``crag.ingest.chunk`` stores it: after
one context line, the file's name, the page's title and the chunk's heading path
("warpbreaks: R: The Number of Breaks in Yarn during Weaving > … > Format"). Each way is searched by
the product's knowledge base (its encoder, and its keyword index fused with it as the graph
retrieves by default); no model.

    .venv/bin/python -m benchmarks.measurements.chunk_context --out docs/benchmarks
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from benchmarks import write_results
from benchmarks.measurements.rdocs_questions import FILES, QUESTIONS
from crag.eval.records import read_records
from crag.eval.tables import markdown_table
from crag.ingest import chunk
from crag_core.clients.chroma import NewDocument
from crag_core.clients.embeddings import default_embeddings
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.formats.extract import extract
from crag_core.schema.context import Context
from crag_core.text.documents import RetrievalMode, body

TOP_K = Context().top_k
WAYS = ("alone", "under its context line")
"""The chunk's text alone (as stored before ``crag.ingest.CHUNKING`` 2), and under its
context line (as stored since)."""
MODES: tuple[RetrievalMode, ...] = ("dense", "hybrid")
"""The encoder alone, and dense with keyword ranks fused (the graph's default retrieval)."""


def chunks(files: dict[str, Path]) -> list[tuple[str, str, dict[str, str | int]]]:
    """Every page's chunks: (its text alone, under its context line as ``chunk`` stores it)."""
    made = []
    for path in files.values():
        for text, where in chunk(extract(path), path.stem):
            alone = body(Document(page_content=text, metadata=where))
            made.append((alone, text, where))
    return made


def holds(text: str, gold: Any) -> bool:
    """Whether ``text`` states the gold (a number or word as a whole token; any of a list)."""
    golds = gold if isinstance(gold, list) else [gold]
    return any(
        re.search(rf"(?<![\w.]){re.escape(str(g))}(?![\w.])", text, re.IGNORECASE) for g in golds
    )


def run(workdir: Path) -> dict[str, Any]:
    """Top-4 hits per way of embedding and per retrieval mode, by question type.

    Each way is written to a knowledge base of its own under ``workdir`` (the product's
    store, encoder and keyword index) and searched as the graph's ``retrieve`` searches it.
    """
    made = chunks(FILES)
    questions = read_records(QUESTIONS)
    hits: dict[str, dict[str, list[int]]] = {}
    for i, way in enumerate(WAYS):
        kb = KnowledgeBase(workdir / f"way{i}", f"rdocs-way{i}", default_embeddings())
        texts = [stored if i else alone for alone, stored, _ in made]
        about = [where if i else {} for _, _, where in made]
        with kb.write_lock():
            kb.replace_documents([NewDocument("pages", "rdocs", f"way{i}", texts, about)])
        for mode in MODES:
            column = f"{way}, {mode}"
            for q in questions:
                top = kb.search(q["question"], TOP_K, mode)
                said = [body(d) for d in top]
                found = int(any(holds(text, q["gold"]) for text in said))  # not the line
                hits.setdefault(q["type"], {}).setdefault(column, []).append(found)
                hits.setdefault("all", {}).setdefault(column, []).append(found)
    return {"chunks": len(made), "questions": len(questions), "hits": hits}


def table(result: dict[str, Any]) -> tuple[str, str]:
    """The summary line, and questions whose top 4 holds a chunk stating the gold, each way."""
    rows = [
        {"kind": kind, "n": len(next(iter(ways.values())))}
        | {w: f"{sum(found)} ({sum(found) / len(found):.0%})" for w, found in ways.items()}
        for kind, ways in sorted(result["hits"].items(), key=lambda kv: kv[0] == "all")
    ]
    named = [f"{way}, {mode}" for way in WAYS for mode in MODES]
    columns = [("kind", "questions"), ("n", "n"), *((c, c) for c in named)]
    summary = (
        f"{result['chunks']} chunks of {len(FILES)} pages, {result['questions']} questions "
        f"(rdocs, calibration): questions whose top {TOP_K} holds a chunk stating the gold"
    )
    return summary, markdown_table(rows, columns)


def main(argv: list[str] | None = None) -> int:
    """Measure and write ``chunk-context-table.md`` / ``.json`` under ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="crag-chunk-context-") as workdir:
        result = run(Path(workdir))
    summary, text = table(result)
    print(f"{summary}\n\n{text}")
    write_results(args.out, "chunk-context", summary, text, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
