"""Answers from scanned copies against answers from the text (naive RAG and crag, one run each).

``make``: a seeded sample of SQuAD dev paragraphs (CC BY-SA 4.0; ones whose text prints in the
PDF core fonts), with every question on them, written three times in SQuAD's format: the
**text** (the paragraphs as they are), the **layer** (each paragraph typeset as a page under its
title, as pypdf reads the text PDF: its lines) and the **scanned copy** (the same page,
drawn at 300 dpi as a scanner would — turned 1.5 degrees, grainy, JPEG — gathered into
image-only PDFs and read back by crag's reader, ``read_bounded``, so by OCR). ``crag eval``
then runs both pipelines on the same sampled questions over each copy; ``report`` reads the
runs and prints right / "I don't know" / wrong per copy and pipeline.

    make bench-ocr-answers        # make, the three evals, report
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

from benchmarks.measurements.ocr import SEED, draw, typeset, word_accuracy
from crag.eval.metrics import verdicts
from crag.eval.records import read_records
from crag.eval.report import VERDICT_COLUMNS
from crag.eval.tables import markdown_table

SQUAD = Path(__file__).resolve().parents[3] / "shared/data/squad-v1.1-dev.json.gz"
COPIES = ("text", "layer", "scan")
"""The paragraphs as SQuAD has them, as a text PDF's layer reads them (pypdf: its lines, the
title above), and as OCR reads the scanned page."""
PAGES_PER_FILE = 20
"""Pages of one scanned PDF (a file's OCR is bounded: ``MAX_OCR_PAGES``, ``OCR_SECONDS``)."""

COLUMNS = [
    ("copy", "copy"),
    ("pipeline", "pipeline"),
    ("questions", "questions"),
    *VERDICT_COLUMNS,
    ("f1", "F1"),
]


def choose(paragraphs: int, source: Path = SQUAD) -> list[dict[str, Any]]:
    """``paragraphs`` SQuAD dev articles of one paragraph each (its questions with it)."""
    with gzip.open(source, "rt", encoding="utf-8") as f:
        articles = json.load(f)["data"]
    pool = [
        {"title": a["title"], "paragraphs": [p]}
        for a in articles
        for p in a["paragraphs"]
        if _prints(p["context"]) and _prints(a["title"])
    ]
    return random.Random(SEED).sample(pool, paragraphs)


def _prints(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def scanned(
    chosen: list[dict[str, Any]], folder: Path
) -> tuple[list[str], list[str], dict[str, Any]]:
    """Each chosen paragraph as its page's text layer reads and as OCR reads its scan.

    Also how well and how fast OCR read.
    """
    import time

    from crag_core.formats.isolated import read_bounded

    pages = [(a["title"].replace("_", " "), a["paragraphs"][0]["context"]) for a in chosen]
    read: list[str] = []
    layers: list[str] = []
    started = time.perf_counter()
    for first in range(0, len(pages), PAGES_PER_FILE):
        images = []
        for i, (title, text) in enumerate(pages[first : first + PAGES_PER_FILE]):
            path = folder / f"page-{first + i}.pdf"
            layers.append(typeset(title, text, 1, path))
            images.append(draw(path, 300, scanned=True))
        scan = BytesIO()
        images[0].save(
            scan, format="PDF", save_all=True, append_images=images[1:], resolution=300.0
        )
        extracted = read_bounded(scan.getvalue(), "pdf", f"scan-{first}")
        by_page = {s.page: s.text for s in extracted.sections}
        read += [by_page.get(n, "") for n in range(1, len(images) + 1)]
    took = time.perf_counter() - started
    accuracy = [word_accuracy(f"{t}\n{x}", r) for (t, x), r in zip(pages, read, strict=True)]
    return (
        layers,
        read,
        {
            "pages": len(pages),
            "seconds": round(took, 1),
            "word_accuracy": round(sum(accuracy) / len(accuracy), 4),
            "pages_without_text": sum(not r.strip() for r in read),
        },
    )


def make(paragraphs: int, out: Path) -> None:
    """Write the text copy, the scanned copy and the OCR's numbers into ``out``."""
    chosen = choose(paragraphs)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        layers, read, stats = scanned(chosen, Path(folder))
    layer, scan = (
        [
            {"title": a["title"], "paragraphs": [{**a["paragraphs"][0], "context": text}]}
            for a, text in zip(chosen, texts, strict=True)
        ]
        for texts in (layers, read)
    )
    for name, data in (("text", chosen), ("layer", layer), ("scan", scan)):
        data = _by_title(data)
        with gzip.open(out / f"{name}.json.gz", "wt", encoding="utf-8") as f:
            json.dump({"version": "1.1", "data": data}, f)
    (out / "scan-stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    questions = sum(len(a["paragraphs"][0]["qas"]) for a in chosen)
    print(f"{paragraphs} paragraphs, {questions} questions; OCR: {stats}")


def _by_title(chosen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chosen paragraphs as SQuAD articles: one per title, its paragraphs in order."""
    articles: dict[str, list[dict[str, Any]]] = {}
    for article in chosen:
        articles.setdefault(article["title"], []).extend(article["paragraphs"])
    return [{"title": title, "paragraphs": paragraphs} for title, paragraphs in articles.items()]


def report(out: Path) -> None:
    """The four runs under ``out`` (copy x pipeline) on their common questions, as a table."""
    runs = {
        (copy, pipeline): read_records(out / copy / pipeline / "predictions.jsonl")
        for copy in COPIES
        for pipeline in ("naive", "crag")
        if (out / copy / pipeline / "predictions.jsonl").exists()
    }
    common = set.intersection(*({r["id"] for r in records} for records in runs.values()))
    rows = []
    for (copy, pipeline), records in runs.items():
        kept = [r for r in records if r["id"] in common]
        scores = [float(r["f1"] or 0.0) for r in kept]
        rows.append(
            {"copy": copy, "pipeline": pipeline, "questions": len(kept)}
            | verdicts(kept)
            | {"f1": round(100 * sum(scores) / max(1, len(scores)), 1)}
        )
    stats = json.loads((out / "scan-stats.json").read_text())
    summary = (
        f"{stats['pages']} SQuAD dev paragraphs as scanned pages (300 dpi, turned, grainy, JPEG), "
        f"read by crag's OCR in {stats['seconds']} s, word accuracy {stats['word_accuracy']:.1%}; "
        f"{len(common)} of their questions asked of each copy."
    )
    table = markdown_table(rows, COLUMNS)
    (out / "comparison.md").write_text(f"{summary}\n\n{table}\n")
    print(f"{summary}\n\n{table}")


def main() -> None:
    """``make`` the two copies, or ``report`` the four runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["make", "report"])
    parser.add_argument("--paragraphs", type=int, default=40)
    parser.add_argument("--out", type=Path, default=Path("out/ocr-answers"))
    args = parser.parse_args()
    if args.command == "make":
        make(args.paragraphs, args.out)
    else:
        report(args.out)


if __name__ == "__main__":
    main()
