"""OCR benchmark (no LLM): how much of a scanned page each engine reads, and how fast.

Pages: Wikipedia summaries (a seeded sample of ``wikipedia-vital-articles-en``, CC BY-SA 4.0)
typeset as text PDFs (fpdf2, Helvetica 11 pt, one column or two); the text layer pypdf reads
from them is the reference. Each page is drawn as a scanner would (pypdfium2): clean at 300 and
150 dpi, and "scanned" at both (turned 1.5 degrees, grain of sigma 12, saved as JPEG at quality
60). Engines: crag's (``crag_core.formats.ocr.read_image``: Tesseract), and RapidOCR (PP-OCR
models on onnxruntime) when it can be imported — it is not a dependency: install
``rapidocr-onnxruntime`` beside to compare. Per render and engine: word accuracy (the
reference's words found in order), character error rate (edit distance over the reference's
length, whitespace as one space) and seconds per page; then a scanned PDF read end to end as
ingestion reads it (``read_bounded``), and each engine's install size.

    .venv/bin/python -m benchmarks.measurements.ocr --out docs/benchmarks
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

from benchmarks import write_results
from benchmarks.fixtures.sample_files import drawn_pages
from crag.eval.tables import markdown_table
from crag_core.formats import ocr

ARTICLES = Path(__file__).resolve().parents[3] / "shared/data/wikipedia-vital-articles-en.jsonl.gz"
SEED = 57

COLUMNS = [
    ("render", "render"),
    ("engine", "engine"),
    ("pages", "pages"),
    ("words", "word accuracy"),
    ("cer", "character error rate"),
    ("s_page", "s per page (median)"),
    ("s_p90", "s per page (p90)"),
]


def articles(count: int, source: Path = ARTICLES) -> list[tuple[str, str]]:
    """``count`` (title, text) pairs drawn with ``SEED`` from the articles of ``source``."""
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        every = [json.loads(line) for line in lines]
    chosen = random.Random(SEED).sample(every, count)
    return [(a["title"], a["text"][:2_400]) for a in chosen]


def typeset(title: str, text: str, columns: int, path: Path) -> str:
    """``text`` under ``title`` as a one-page text PDF at ``path``; its text layer (pypdf)."""
    from fpdf import FPDF
    from pypdf import PdfReader

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=14)
    pdf.cell(0, 10, _latin(title), new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    with pdf.text_columns(ncols=columns, gutter=8) as body:
        body.write(_latin(text))
    pdf.output(str(path))
    return PdfReader(path).pages[0].extract_text() or ""


def _latin(text: str) -> str:
    return text.encode("latin-1", "replace").decode("latin-1")


def draw(path: Path, dpi: int, scanned: bool) -> Any:
    """The PDF's page as a grey image at ``dpi``; ``scanned``: turned, grainy, as JPEG."""
    import numpy as np
    from PIL import Image

    image = drawn_pages(path, dpi)[0]
    if not scanned:
        return image
    image = image.rotate(1.5, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    grain = np.random.default_rng(SEED).normal(0, 12, (image.height, image.width))
    image = Image.fromarray(np.clip(np.asarray(image, dtype=float) + grain, 0, 255).astype("uint8"))
    out = BytesIO()
    image.save(out, format="JPEG", quality=60)
    return Image.open(BytesIO(out.getvalue())).convert("L")


def tesseract() -> Callable[[Any], str]:
    """Crag's OCR: the text of an image, as ``crag_core.formats.ocr`` reads it."""
    engine = ocr.ocr_engine()
    if not engine.program:
        sys.exit(engine.why_not)
    return lambda image: "\n\n".join(b.text for b in ocr.read_image(image, engine))


def rapidocr() -> Callable[[Any], str] | None:
    """RapidOCR's reading of an image (its lines in its order), or ``None`` if not installed."""
    try:
        import numpy as np
        from rapidocr_onnxruntime import RapidOCR
    except ImportError:
        return None
    engine = RapidOCR()

    def read(image: Any) -> str:
        found, _ = engine(np.asarray(image.convert("RGB")))
        return "\n".join(line[1] for line in found or [])

    return read


def words(text: str) -> list[str]:
    """``text``'s words, lower-cased."""
    return re.findall(r"\w+", text.lower())


def word_accuracy(reference: str, read: str) -> float:
    """The share of the reference's words found in ``read``, in order."""
    import difflib

    said, got = words(reference), words(read)
    matcher = difflib.SequenceMatcher(None, said, got, autojunk=False)
    return sum(b.size for b in matcher.get_matching_blocks()) / max(1, len(said))


def character_error_rate(reference: str, read: str) -> float:
    """Edit distance over the reference's length, every run of whitespace as one space."""
    from rapidfuzz.distance import Levenshtein

    ref, got = " ".join(reference.split()), " ".join(read.split())
    return Levenshtein.distance(ref, got) / max(1, len(ref))


def installed_mib(*distributions: str) -> float:
    """The size of the installed files of ``distributions`` (their bundled libraries too)."""
    from importlib.metadata import PackageNotFoundError, distribution

    total = 0
    for name in distributions:
        try:
            files = distribution(name).files or []
        except PackageNotFoundError:
            continue
        total += sum(f.size or 0 for f in files)
    return total / 2**20


def run(pages: int) -> dict[str, Any]:
    """Every render of ``pages`` articles read by every engine, a scanned PDF end to end, sizes."""
    engines = {"tesseract (crag)": tesseract()}
    if (other := rapidocr()) is not None:
        engines["rapidocr"] = other
    renders = {
        "300 dpi clean": (300, False, 1),
        "150 dpi clean": (150, False, 1),
        "300 dpi scanned": (300, True, 1),
        "150 dpi scanned": (150, True, 1),
        "300 dpi two columns": (300, False, 2),
    }
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        texts = articles(pages)
        for render, (dpi, scanned, columns) in renders.items():
            made = []
            for i, (title, text) in enumerate(texts):
                path = Path(folder, f"{columns}-{i}.pdf")
                reference = typeset(title, text, columns, path)
                made.append((reference, draw(path, dpi, scanned)))
            for name, read in engines.items():
                scores = []
                for reference, image in made:
                    started = time.perf_counter()
                    text = read(image)
                    took = time.perf_counter() - started
                    scores.append(
                        (
                            word_accuracy(reference, text),
                            character_error_rate(reference, text),
                            took,
                        )
                    )
                    print(f"{render:22} {name:18} {scores[-1]}", file=sys.stderr)
                rows.append(_row(render, name, scores))
        end_to_end = _scanned_pdf(texts, folder)
    sizes = {"tesseract (crag)": _unpacked_mib()}
    if "rapidocr" in engines:
        sizes["rapidocr"] = installed_mib(
            "rapidocr-onnxruntime",
            "opencv-python-headless",
            "opencv-python",
            "shapely",
            "pyclipper",
        )
    return {"pages": pages, "rows": rows, "end_to_end": end_to_end, "install_mib": sizes}


def _row(render: str, engine: str, scores: list[tuple[float, float, float]]) -> dict[str, Any]:
    seconds = sorted(s for _, _, s in scores)
    return {
        "render": render,
        "engine": engine,
        "pages": len(scores),
        "words": round(statistics.mean(w for w, _, _ in scores), 4),
        "cer": round(statistics.mean(c for _, c, _ in scores), 4),
        "s_page": round(statistics.median(seconds), 2),
        "s_p90": round(seconds[min(len(seconds) - 1, int(0.9 * len(seconds)))], 2),
    }


def _scanned_pdf(texts: list[tuple[str, str]], folder: str) -> dict[str, Any]:
    """The pages drawn at 300 dpi, scanned, as one image-only PDF read as ingestion reads it."""
    from crag_core.formats.isolated import read_bounded

    references, images = [], []
    for i, (title, text) in enumerate(texts):
        path = Path(folder, f"e2e-{i}.pdf")
        references.append(typeset(title, text, 1, path))
        images.append(draw(path, 300, scanned=True).convert("L"))
    scan = BytesIO()
    images[0].save(scan, format="PDF", save_all=True, append_images=images[1:], resolution=300.0)
    started = time.perf_counter()
    extracted = read_bounded(scan.getvalue(), "pdf", "scan")
    took = time.perf_counter() - started
    read = {s.page: s.text for s in extracted.sections}
    accuracy = [word_accuracy(r, read.get(i, "")) for i, r in enumerate(references, start=1)]
    return {
        "pages": len(images),
        "file_mib": round(len(scan.getvalue()) / 2**20, 1),
        "seconds": round(took, 1),
        "s_page": round(took / len(images), 2),
        "words": round(statistics.mean(accuracy), 4),
    }


def _unpacked_mib() -> float:
    engine = ocr.ocr_engine()
    root = Path(engine.program).parents[2] if engine.libraries else Path(engine.program)
    files = [root] if root.is_file() else [f for f in root.rglob("*") if not f.is_symlink()]
    files = [f for f in files if f.is_file()]
    return sum(f.stat().st_size for f in files) / 2**20


def main() -> None:
    """Read the pages with each engine and write ``ocr-table.md`` and ``ocr.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=12, help="articles, one page each")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args()
    result = run(args.pages)
    e2e = result["end_to_end"]
    sizes = ", ".join(f"{k} {v:.0f} MiB" for k, v in result["install_mib"].items())
    summary = (
        f"{args.pages} pages of Wikipedia summaries, typeset, drawn and read back. A scanned PDF "
        f"of them ({e2e['file_mib']} MiB, 300 dpi, turned and grainy) read as ingestion reads "
        f"it: {e2e['seconds']} s ({e2e['s_page']} s a page), word accuracy {e2e['words']:.1%}. "
        f"Installed: {sizes}."
    )
    write_results(args.out, "ocr", summary, markdown_table(result["rows"], COLUMNS), result)
    print(summary)


if __name__ == "__main__":
    main()
