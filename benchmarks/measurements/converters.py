"""Converters for the long tail of formats: which one reads slides, sheets, books and notebooks.

Makes files with known sentences (``benchmarks.fixtures.sample_files``): slide decks (a slide
per part and a table), workbooks (a sheet per part, a header row), CSV tables, EPUB books (a
chapter per part), notebooks (a Markdown cell per part, code and output) and reStructuredText (a
section per part, a definition list, code). Each candidate runs in its own virtual environment
(they pin different versions of the same packages; none is imported here), in a subprocess that
converts every file and prints JSON; the scores are counted here:

- recall: known sentences found word for word (whitespace normalised);
- structure: the sentence sits under a heading naming its part (slide, sheet, chapter, section,
  cell) — for CSV, its line names its column ("note: …"), so a chunk cut from a long table
  still says what it holds;
- ms per file (median, after the converter is loaded) and what the converter adds to crag's
  runtime install (MiB of packages not in requirements.lock, measured in its environment).

    .venv/bin/python -m benchmarks.measurements.converters --venv markitdown=/tmp/conv/markitdown
        --venv unstructured=... --venv docling=... --venv langchain-community=...

(how each environment was made: docs/benchmarks/converters.md)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import write_results
from benchmarks.fixtures.sample_files import (
    make_csv,
    make_epub,
    make_ipynb,
    make_pptx,
    make_rst,
    make_xlsx,
)
from benchmarks.measurements.extraction import one_line
from crag.eval.tables import markdown_table
from crag_core.formats.extract import extract, markdown_sections

MAKERS: dict[str, Callable[[Path], list[list[str]]]] = {
    ".pptx": make_pptx,
    ".xlsx": make_xlsx,
    ".csv": make_csv,
    ".epub": make_epub,
    ".ipynb": make_ipynb,
    ".rst": make_rst,
}

COLUMNS = [
    ("format", "format"),
    ("library", "converter"),
    ("recall", "sentences recovered"),
    ("structure", "under their part's heading (CSV: row names its column)"),
    ("ms", "ms per file (median)"),
    ("failed", "files failed"),
]

RUNNER = r"""
import json, sys, time
name, files = sys.argv[1], sys.argv[2:]

def markitdown():
    from markitdown import MarkItDown
    m = MarkItDown()
    return lambda p: m.convert(p).text_content

def unstructured():
    from unstructured.partition.auto import partition
    def read(p):
        elements = partition(filename=p)
        return "\n\n".join(("# " if e.category == "Title" else "") + e.text for e in elements)
    return read

def docling():
    from docling.document_converter import DocumentConverter
    c = DocumentConverter()
    return lambda p: c.convert(p).document.export_to_markdown()

def langchain_community():
    from langchain_community.document_loaders import CSVLoader, NotebookLoader
    def read(p):
        if p.endswith(".csv"):
            return "\n\n".join(d.page_content for d in CSVLoader(p).load())
        if p.endswith(".ipynb"):
            docs = NotebookLoader(p, include_outputs=True).load()
            return "\n\n".join(d.page_content for d in docs)
        raise ValueError("its loader for this type is unstructured's")
    return read

read = {"markitdown": markitdown, "unstructured": unstructured, "docling": docling,
        "langchain-community": langchain_community}[name]()
out = []
for f in files:
    t = time.perf_counter()
    try:
        text, error = read(f), ""
    except Exception as exc:
        text, error = "", (type(exc).__name__ + ": " + str(exc))[:200]
    out.append({"file": f, "text": text or "", "error": error, "seconds": time.perf_counter() - t})
print(json.dumps(out))
"""

SIZE = r"""
import importlib.metadata as md, json, os, re, sys
lock = {re.split(r"[=<>\[ ;]", l.strip())[0].lower().replace("_", "-")
        for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")}
added = 0
for d in md.distributions():
    name = d.metadata["Name"].lower().replace("_", "-")
    if name in lock or name in ("pip", "setuptools"):
        continue
    for f in d.files or []:
        try:
            added += os.path.getsize(d.locate_file(f))
        except OSError:
            pass
print(json.dumps(added / 2**20))
"""

CRAG_ADDS = (
    "markitdown magika markdownify defusedxml six python-pptx pillow xlsxwriter openpyxl "
    "et-xmlfile docutils"
).split()
"""What crag's own readers of these formats added to its runtime lock."""


def score(parts: list[tuple[str, str]], truth: list[list[str]], suffix: str) -> dict[str, float]:
    """Recall and structure of ``parts`` ((heading path, text) pairs) against the sentences."""
    joined = one_line(" ".join(t for _, t in parts))
    known = [(s, sentence) for s, part in enumerate(truth, start=1) for sentence in part]
    found = sum(sentence in joined for _, sentence in known)
    if suffix == ".csv":
        lines = [one_line(line) for _, t in parts for line in t.splitlines()]
        placed = sum(any(s in x and "note" in x for x in lines) for _, s in known)
    else:
        placed = sum(
            any(sentence in one_line(t) and f"Part {s}" in heading for heading, t in parts)
            for s, sentence in known
        )
    return {"recall": found / len(known), "structure": placed / len(known)}


def crag_parts(path: Path) -> list[tuple[str, str]]:
    """The reading of ``path`` by crag_core.formats.extract: (heading path, text) per section."""
    return [(s.heading, s.text) for s in extract(path).sections]


def converted_parts(markdown: str) -> list[tuple[str, str]]:
    """A candidate's Markdown cut at its headings, as crag cuts Markdown."""
    return [(s.heading, s.text) for s in markdown_sections(markdown)]


def run_candidate(python: Path, name: str, files: list[Path]) -> list[dict[str, Any]]:
    """Convert ``files`` with candidate ``name`` in the environment of ``python``."""
    started = subprocess.run(
        [str(python), "-c", RUNNER, name, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
    )
    result: list[dict[str, Any]] = json.loads(started.stdout.strip().splitlines()[-1])
    return result


def added_mib(python: Path, lock: Path) -> float:
    """MiB the environment of ``python`` holds beyond the packages of ``lock``."""
    reply = subprocess.run(
        [str(python), "-c", SIZE, str(lock)], capture_output=True, text=True, timeout=120
    )
    return float(json.loads(reply.stdout))


def crag_added_mib() -> float:
    """MiB of the packages crag added to read these formats (``CRAG_ADDS``)."""
    import importlib.metadata as md
    import os

    total = 0
    for name in CRAG_ADDS:
        for f in md.distribution(name).files or []:
            try:
                total += os.path.getsize(f.locate())
            except OSError:
                pass
    return total / 2**20


def run(
    files: int, venvs: dict[str, Path], lock: Path
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Every candidate on every format; also each candidate's added install size."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        made: dict[str, list[tuple[Path, list[list[str]]]]] = {}
        for suffix, make in MAKERS.items():
            made[suffix] = [
                (Path(tmp) / f"f{i}{suffix}", make(Path(tmp) / f"f{i}{suffix}"))
                for i in range(files)
            ]
        results: dict[str, dict[str, dict[str, Any]]] = {}
        for name, venv in venvs.items():
            everything = [p for pairs in made.values() for p, _ in pairs]
            results[name] = {
                r["file"]: r for r in run_candidate(venv / "bin/python", name, everything)
            }
        for suffix, pairs in made.items():
            crag_scores, crag_ms = [], []
            for path, truth in pairs:
                started = time.perf_counter()
                crag_scores.append(score(crag_parts(path), truth, suffix))
                crag_ms.append(1000 * (time.perf_counter() - started))
            rows.append(_row(suffix, "crag (chosen)", crag_scores, crag_ms, 0))
            for name in venvs:
                scores, ms, failed = [], [], 0
                for path, truth in pairs:
                    got = results[name][str(path)]
                    failed += bool(got["error"])
                    scores.append(score(converted_parts(got["text"]), truth, suffix))
                    ms.append(1000 * got["seconds"])
                rows.append(_row(suffix, name, scores, ms, failed))
                if failed:
                    first = next(
                        results[name][str(p)]["error"]
                        for p, _ in pairs
                        if results[name][str(p)]["error"]
                    )
                    rows[-1]["error"] = first
            print(rows[-len(venvs) - 1 :])
    sizes = {name: added_mib(venv / "bin/python", lock) for name, venv in venvs.items()}
    sizes["crag (chosen)"] = crag_added_mib()
    return rows, sizes


def _row(
    suffix: str, name: str, scores: list[dict[str, float]], ms: list[float], failed: int
) -> dict[str, Any]:
    return {
        "format": suffix,
        "library": name,
        "recall": statistics.mean(s["recall"] for s in scores),
        "structure": statistics.mean(s["structure"] for s in scores),
        "ms": statistics.median(ms),
        "failed": failed,
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as the Markdown table in docs/benchmarks/converters-table.md."""
    shown = [
        r
        | {
            "recall": f"{r['recall']:.3f}",
            "structure": f"{r['structure']:.3f}",
            "ms": f"{r['ms']:.1f}",
        }
        for r in rows
    ]
    return markdown_table(shown, COLUMNS)


def main() -> None:
    """Make the files, run every candidate, write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10, help="files per format")
    parser.add_argument("--venv", action="append", default=[], help="NAME=PATH of a candidate")
    parser.add_argument("--lock", type=Path, default=Path("requirements.lock"))
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args()
    venvs = {k: Path(v) for k, v in (item.split("=", 1) for item in args.venv)}
    rows, sizes = run(args.files, venvs, args.lock)
    size_lines = "\n".join(f"- {name}: {mib:.0f} MiB" for name, mib in sizes.items())
    summary = (
        f"{args.files} files per format made by benchmarks/fixtures/sample_files.py, 3 parts "
        "each with 6 known sentences. Each candidate ran in its own environment; "
        "'crag (chosen)' is `crag_core.formats.extract` after the choice. Install size added "
        f"to crag's runtime (packages not in requirements.lock at the time):\n\n{size_lines}"
    )
    print(f"\n{summary}\n\n{table(rows)}")
    write_results(
        args.out,
        "converters",
        summary,
        table(rows),
        {"files": args.files, "rows": rows, "sizes": sizes},
    )


if __name__ == "__main__":
    main()
