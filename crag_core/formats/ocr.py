"""Text out of page images, offline: Tesseract on the CPU, one page at a time.

A scanned PDF page (one with almost no text layer) and an image file are read by
``read_image``: the image is cut to at most ``OCR_PIXELS``, handed to the ``tesseract``
program on its standard input, and its word boxes (TSV) are put back together as paragraphs in
Tesseract's reading order (columns one after the other), each with its box on the page.

Tesseract, not an ONNX engine, by ``benchmarks/measurements/ocr.py`` (docs/benchmarks/ocr.md):
on this project's rendered scans it read every word of clean 300 dpi pages in about half a
second a page, single-threaded, from about 10 MB of Debian packages; RapidOCR's PP-OCR models
dropped whole lines there and need OpenCV (about 150 MB). ``make setup`` unpacks Debian's
``tesseract-ocr`` into the venv; ``CRAG_TESSERACT`` names another; ``CRAG_OCR=false`` turns
OCR off.

Every call is bounded: the pixels read (``OCR_PIXELS``), the seconds of one page
(``PAGE_SECONDS``, as a wall-clock timeout and as the program's CPU limit, so a page ends even
if its reader is gone), one thread per page (OpenMP's threads cost more than they gave on
two cores).
"""

from __future__ import annotations

import csv
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crag_core.text.regions import Box, Line, union

if TYPE_CHECKING:
    from PIL.Image import Image

OCR_DPI = 300
"""The resolution a scanned PDF page is drawn at for OCR."""
OCR_PIXELS = 12_000_000
"""The most pixels one page is read at: larger images are scaled down to it (a letter page at
300 dpi is 8.4 million)."""
SMALL_IMAGE_SIDE = 1_600
"""An image whose longer side is shorter is read at twice its size (a screenshot's text is too
small for Tesseract at its own size)."""
PAGE_SECONDS = 30
"""The most one page's OCR may take (about 0.7 s for a 300 dpi page here)."""
MIN_WORD_CONFIDENCE = 30.0
"""Words Tesseract is less sure of (0-100) are left out: on a photo or a drawing they are
noise read as letters."""
LANGUAGE = "eng"
"""Tesseract's language model (Debian's ``tesseract-ocr-eng``)."""


@dataclass(frozen=True)
class OcrEngine:
    """The Tesseract program to run, or why there is none (``why_not``)."""

    program: str = ""
    libraries: str = ""
    """An unpacked Tesseract's libraries (``LD_LIBRARY_PATH``); "" for an installed one."""
    tessdata: str = ""
    """Where its language models are (``TESSDATA_PREFIX``); "" for its own default."""
    why_not: str = ""

    def to_json(self) -> dict[str, str]:
        """The engine as the reader's request carries it."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> OcrEngine:
        """The engine a reader's request carries (none: OCR unavailable, with the reason)."""
        data = data or {"why_not": "OCR was not set up for this read"}
        return cls(
            **{k: str(data.get(k) or "") for k in ("program", "libraries", "tessdata", "why_not")}
        )


OFF = OcrEngine(why_not="OCR is off (CRAG_OCR=false)")


def ocr_engine(enabled: bool = True, program: Path | None = None) -> OcrEngine:
    """The engine for ``CRAG_OCR`` / ``CRAG_TESSERACT`` (``crag_core.clients.settings``).

    Looked for in order: ``program`` when given, the copy ``make setup`` unpacks into the venv
    (``<venv>/tesseract``), ``tesseract`` on the PATH.
    """
    if not enabled:
        return OFF
    if program is not None:
        if not (program.is_file() and os.access(program, os.X_OK)):
            return OcrEngine(why_not=f"CRAG_TESSERACT is not a program: {program.name}")
        return OcrEngine(program=str(program))
    unpacked = Path(sys.prefix, "tesseract")
    if (unpacked / "usr/bin/tesseract").is_file():
        return OcrEngine(
            program=str(unpacked / "usr/bin/tesseract"),
            libraries=":".join(str(p.parent) for p in unpacked.glob("usr/lib/*/libtesseract.so*")),
            tessdata=str(next(unpacked.glob("usr/share/tesseract-ocr/*/tessdata"), "")),
        )
    found = shutil.which("tesseract")
    if found:
        return OcrEngine(program=found)
    return OcrEngine(
        why_not="OCR needs Tesseract: `make setup` unpacks it, or install tesseract-ocr "
        "(set CRAG_TESSERACT if it is not on the PATH)"
    )


@dataclass(frozen=True)
class Block:
    """A paragraph read off a page, and its lines with where each is on the page."""

    lines: tuple[Line, ...]

    @property
    def text(self) -> str:
        """The paragraph's lines, one a line."""
        return "\n".join(text for text, _ in self.lines)

    @property
    def box(self) -> Box:
        """The box around the paragraph (fractions of the page's width and height)."""
        return union([box for _, box in self.lines])


class OcrFailed(Exception):
    """Tesseract could not read a page; the message says why."""


def read_image(image: Image, engine: OcrEngine, seconds: float = PAGE_SECONDS) -> list[Block]:
    """The paragraphs Tesseract reads on ``image``, in reading order (``OcrFailed``)."""
    page = _prepared(image)
    pixels = BytesIO()
    page.save(pixels, format="PPM")  # uncompressed: nothing spent encoding what is read once
    tsv = _tesseract(pixels.getvalue(), engine, min(seconds, PAGE_SECONDS))
    return paragraphs(tsv, page.width, page.height)


def _tesseract(pixels: bytes, engine: OcrEngine, seconds: float) -> str:
    """Tesseract's TSV of the page ``pixels`` (PPM), within ``seconds``."""
    limit = max(1, int(seconds))
    try:
        done = subprocess.run(
            [engine.program, "stdin", "stdout", "-l", LANGUAGE, "--psm", "3", "tsv"],
            input=pixels,
            capture_output=True,
            timeout=limit + 1,
            env=_environment(engine),
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1)),
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise OcrFailed(f"OCR of a page took longer than {limit} s") from exc
    except OSError as exc:
        raise OcrFailed(f"cannot run tesseract ({exc.strerror or exc})") from exc
    if done.returncode != 0:
        said = [x for x in done.stderr.decode(errors="replace").splitlines() if x.strip()]
        raise OcrFailed(f"tesseract failed ({said[-1][:120] if said else done.returncode})")
    return done.stdout.decode("utf-8", errors="replace")


def _prepared(image: Image) -> Image:
    """``image`` in grey, scaled up when small, down to ``OCR_PIXELS`` when large."""
    from PIL import Image as PILImage

    grey = image.convert("L")
    width, height = grey.size
    scale = 2.0 if max(width, height) < SMALL_IMAGE_SIDE else 1.0
    scale = min(scale, (OCR_PIXELS / max(1, width * height)) ** 0.5)
    if abs(scale - 1.0) > 0.01:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        grey = grey.resize(size, PILImage.Resampling.BICUBIC, reducing_gap=3.0)
    return grey


def version(engine: OcrEngine) -> str:
    """The first line ``tesseract --version`` prints (``OcrFailed`` when it does not run)."""
    if not engine.program:
        raise OcrFailed(engine.why_not)
    try:
        done = subprocess.run(
            [engine.program, "--version"], capture_output=True, env=_environment(engine), timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OcrFailed(f"cannot run tesseract ({exc})") from exc
    if done.returncode != 0:
        raise OcrFailed(f"tesseract does not run: {done.stderr.decode(errors='replace')[-300:]}")
    return (done.stdout or done.stderr).decode(errors="replace").splitlines()[0]


def _environment(engine: OcrEngine) -> dict[str, str]:
    env = {"OMP_THREAD_LIMIT": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if engine.libraries:
        env["LD_LIBRARY_PATH"] = engine.libraries
    if engine.tessdata:
        env["TESSDATA_PREFIX"] = engine.tessdata
    return env


def paragraphs(tsv: str, width: int, height: int) -> list[Block]:
    """Tesseract's TSV (a row per word, numbered by block, paragraph and line) as paragraphs.

    A line's words are joined by spaces; words under ``MIN_WORD_CONFIDENCE`` are left out, and
    a line (a paragraph) left with no word is dropped. Tesseract writes them in reading order.
    """
    words: dict[tuple[int, int], dict[int, list[tuple[str, Box]]]] = {}
    for row in _rows(tsv):
        word = row["text"].strip()
        if row["level"] != "5" or not word or float(row["conf"]) < MIN_WORD_CONFIDENCE:
            continue
        left, top = int(row["left"]) / width, int(row["top"]) / height
        box = (left, top, left + int(row["width"]) / width, top + int(row["height"]) / height)
        paragraph = words.setdefault((int(row["block_num"]), int(row["par_num"])), {})
        paragraph.setdefault(int(row["line_num"]), []).append((word, box))
    return [
        Block(
            tuple(
                (" ".join(w for w, _ in line), union([b for _, b in line]))
                for _, line in sorted(paragraph.items())
            )
        )
        for paragraph in words.values()
    ]


def _rows(tsv: str) -> Iterable[dict[str, str]]:
    return csv.DictReader(tsv.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)


if __name__ == "__main__":  # `make ocr`: is OCR there and does it run? (CRAG_OCR aside)
    given = os.environ.get("CRAG_TESSERACT")
    try:
        print(f"OCR: {version(ocr_engine(True, Path(given) if given else None))}")
    except OcrFailed as exc:
        sys.exit(str(exc))
