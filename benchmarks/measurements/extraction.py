"""Extraction benchmark (no LLM): which library reads PDF and HTML best, and how fast.

Makes files with known sentences (``benchmarks.fixtures.sample_files``): PDFs of 20 pages, web pages
with navigation, scripts, styles, a sidebar and a footer around the article, and Word files
with headings and a table. For each candidate it measures recall (known sentences found
word for word, whitespace normalised), noise (page-furniture words that came out, HTML only),
page attribution (PDF: sentences found on their own page) and time per file.

    .venv/bin/python -m benchmarks.measurements.extraction --out docs/benchmarks
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import write_results
from benchmarks.fixtures.sample_files import NOISE_WORDS, make_docx, make_html, make_pdf
from crag.eval.tables import markdown_table
from crag_core.formats.extract import extract

COLUMNS = [
    ("format", "format"),
    ("library", "library"),
    ("recall", "sentences recovered"),
    ("on_page", "on their own page / section"),
    ("noise", "furniture words leaked"),
    ("ms", "ms per file (median)"),
]


def one_line(text: str) -> str:
    """``text`` with every run of whitespace as one space (how sentences are compared)."""
    return re.sub(r"\s+", " ", text).strip()


def pypdf_pages(path: Path) -> list[str]:
    """pypdf: the text layer of each page."""
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(str(path)).pages]


def pdfminer_pages(path: Path) -> list[str]:
    """pdfminer.six: the text of each page, laid out."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer

    return [
        "".join(el.get_text() for el in page if isinstance(el, LTTextContainer))
        for page in extract_pages(str(path))
    ]


def crag_sections(path: Path) -> list[str]:
    """Crag's own extraction (``crag_core.formats.extract``): a text per page or section."""
    return [s.text for s in extract(path).sections]


def trafilatura_sections(path: Path) -> list[str]:
    """trafilatura: the page's main text (one block; it keeps no heading structure)."""
    import trafilatura

    return [trafilatura.extract(path.read_text(encoding="utf-8")) or ""]


def score(parts: list[str], truth: list[list[str]]) -> dict[str, float]:
    """Recall of the known sentences, how many sit in their own part, and leaked noise."""
    joined = one_line(" ".join(parts))
    normed = [one_line(p) for p in parts]
    known = [(i, s) for i, part in enumerate(truth) for s in part]
    found = sum(s in joined for _, s in known)
    own = sum(i < len(normed) and s in normed[i] for i, s in known) if len(parts) > 1 else 0
    leaked = sum(w in joined.lower() for w in NOISE_WORDS)
    return {"recall": found / len(known), "on_page": own / len(known), "noise": leaked}


def measure(
    make: Callable[[Path], list[list[str]]],
    read: Callable[[Path], list[str]],
    files: int,
    suffix: str,
) -> dict[str, float]:
    """Mean scores and median milliseconds of ``read`` over ``files`` files from ``make``."""
    scores, times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(files):
            path = Path(tmp) / f"f{i}{suffix}"
            truth = make(path)
            started = time.perf_counter()
            parts = read(path)
            times.append(1000 * (time.perf_counter() - started))
            scores.append(score(parts, truth))
    mean = {k: statistics.mean(s[k] for s in scores) for k in scores[0]}
    return mean | {"ms": statistics.median(times)}


def run(files: int) -> list[dict[str, Any]]:
    """Every candidate on every format."""

    def pdf(path: Path) -> list[list[str]]:
        return make_pdf(path, pages=20)

    candidates = [
        ("pdf", "pypdf (chosen)", pdf, pypdf_pages, ".pdf"),
        ("pdf", "pdfminer.six", pdf, pdfminer_pages, ".pdf"),
        ("html", "BeautifulSoup + lxml (chosen)", make_html, crag_sections, ".html"),
        ("html", "trafilatura", make_html, trafilatura_sections, ".html"),
        ("docx", "python-docx (chosen)", make_docx, crag_sections, ".docx"),
    ]
    rows = []
    for fmt, library, make, read, suffix in candidates:
        result = measure(make, read, files, suffix)
        rows.append({"format": fmt, "library": library} | result)
        print(rows[-1])
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as the Markdown table in docs/benchmarks/extraction.md."""
    shown = [
        r
        | {
            "recall": f"{r['recall']:.3f}",
            "on_page": f"{r['on_page']:.3f}",
            "noise": f"{r['noise']:.1f} of {len(NOISE_WORDS)}" if r["format"] == "html" else "—",
            "ms": f"{r['ms']:.1f}",
        }
        for r in rows
    ]
    return markdown_table(shown, COLUMNS)


def main() -> None:
    """Make the files, run every candidate, write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10, help="files per format")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args()
    rows = run(args.files)
    summary = (
        f"{args.files} files per format made by benchmarks/fixtures/sample_files.py: PDFs of "
        "20 pages (6 known sentences a page), web pages with navigation, scripts, styles, a "
        "sidebar and a footer around a 3-section article, Word files with 3 headed sections "
        "and a table. 'On their own page / section': the sentence is in the part it belongs "
        "to (PDF pages; HTML and Word heading sections), which is what lets a source name its "
        "page or heading."
    )
    print(f"\n{table(rows)}")
    write_results(args.out, "extraction", summary, table(rows), {"files": args.files, "rows": rows})


if __name__ == "__main__":
    main()
