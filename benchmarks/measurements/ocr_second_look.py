"""OCR's second look (no LLM): the words of scanned pages read with and without it.

Tesseract's layout analysis leaves some lines of a grainy, turned page unread; crag reads the
ink it left again (``crag_core.formats.ocr``, ``MAX_SECOND_LOOKS``). This typesets a seeded
calibration sample of SQuAD dev paragraphs (CC BY-SA 4.0; none of those ``ocr_answers``
reports), draws each page (scanned: 300 dpi, turned, grainy, JPEG; clean; and two columns) and
reads it with ``MAX_SECOND_LOOKS`` 0 and as shipped: word accuracy, pages under 90%, seconds.

    make bench-ocr-second-look    # --pages 40 --out docs/benchmarks
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import write_results
from benchmarks.fixtures.sample_files import drawn_pages
from benchmarks.measurements import ocr_answers
from benchmarks.measurements.ocr import draw, typeset, word_accuracy
from crag.eval.tables import markdown_table
from crag_core.formats import ocr

CALIBRATION_SEED = 1
RENDERS = {"scanned 300 dpi": (1, True), "clean 300 dpi": (1, False), "two columns": (2, False)}
COLUMNS = [
    ("render", "render"),
    ("reading", "reading"),
    ("pages", "pages"),
    ("word_accuracy", "word accuracy"),
    ("under_90", "pages under 90%"),
    ("seconds", "s a page"),
]


def calibration_sample(pages: int) -> list[tuple[str, str]]:
    """``pages`` (title, paragraph) pairs of SQuAD dev, none of ``ocr_answers``' sample."""
    with gzip.open(ocr_answers.SQUAD, "rt", encoding="utf-8") as f:
        articles = json.load(f)["data"]
    reported = {a["paragraphs"][0]["context"] for a in ocr_answers.choose(40)}
    pool = [
        (a["title"].replace("_", " "), p["context"])
        for a in articles
        for p in a["paragraphs"]
        if ocr_answers._prints(p["context"]) and ocr_answers._prints(a["title"])
        if p["context"] not in reported
    ]
    return random.Random(CALIBRATION_SEED).sample(pool, pages)


def _drawn(pdf: Path, scanned: bool) -> Any:
    """The page as crag draws a scanned PDF's page (the image put in a PDF, drawn back)."""
    scan = pdf.with_suffix(".scan.pdf")
    draw(pdf, 300, scanned).save(scan, format="PDF", resolution=300.0)
    return drawn_pages(scan, ocr.OCR_DPI)[0]


def run(pages: int) -> list[dict[str, Any]]:
    """Each render of the sample read without and with the second look."""
    engine = ocr.ocr_engine()
    sample = calibration_sample(pages)
    shipped = ocr.MAX_SECOND_LOOKS
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for render, (columns, scanned) in RENDERS.items():
            scores: dict[int, list[tuple[float, float]]] = {0: [], shipped: []}
            for i, (title, text) in enumerate(sample):
                if columns == 2:  # two paragraphs, so both columns fill
                    text = f"{text}\n{sample[(i + 1) % len(sample)][1]}"
                pdf = Path(folder, f"{i}.pdf")
                typeset(title, text, columns, pdf)
                image = _drawn(pdf, scanned)
                for looks in scores:
                    ocr.MAX_SECOND_LOOKS = looks
                    started = time.perf_counter()
                    blocks = ocr.read_image(image, engine)
                    took = time.perf_counter() - started
                    read = "\n\n".join(b.text for b in blocks)
                    scores[looks].append((word_accuracy(f"{title}\n{text}", read), took))
            ocr.MAX_SECOND_LOOKS = shipped
            for looks, got in scores.items():
                rows.append(
                    {
                        "render": render,
                        "reading": "with the second look" if looks else "layout reading only",
                        "pages": len(got),
                        "word_accuracy": round(sum(a for a, _ in got) / len(got), 4),
                        "under_90": sum(a < 0.9 for a, _ in got),
                        "seconds": round(sum(s for _, s in got) / len(got), 2),
                    }
                )
    return rows


def main() -> None:
    """Measure, print and write ``ocr-second-look-table.md`` and its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args()
    rows = run(args.pages)
    summary = (
        f"{args.pages} SQuAD dev paragraphs (a calibration sample, seed {CALIBRATION_SEED}), "
        "typeset, drawn at 300 dpi and read by crag's OCR without and with its second look."
    )
    table = markdown_table(rows, COLUMNS)
    write_results(args.out, "ocr-second-look", summary, table, {"rows": rows})
    print(f"{summary}\n\n{table}")


if __name__ == "__main__":
    main()
