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

Tesseract's page layout analysis sometimes takes a run of lines for no text (on grainy,
turned scans: the title and first line of one page in four, ``benchmarks/measurements/ocr.py``).
So the ink left unread by a reading that found text gets a second look: the words read are
whitened, the ink left that looks like lines of text is cut into bands, and each band is read
as one block of text (``--psm 6``); what it reads goes in its place in the reading order. At
most ``MAX_SECOND_LOOKS`` a page, within the page's time.

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
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
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
MAX_SECOND_LOOKS = 4
"""Bands of unread ink read again on one page at most (the largest first)."""
MIN_BAND_SHARE = 0.004
"""A band of unread ink thinner than this share of the page's height is not read (a rule, a
speck; a line of 9 pt text at 300 dpi is about 0.01)."""
TEXT_INK = (0.02, 0.35)
"""The share of a band's pixels that is ink when it is text (a photo, a drawing or noise has
more; a band outside it is not read again)."""
MAX_BAND_SHARE = 0.25
"""A band larger than this share of the page is not read again (not lines a layout missed)."""
MIN_LOOK_CONFIDENCE = 60.0
"""A second look's words are kept only when Tesseract is this sure of them on average (a
figure read as text is not)."""
LANGUAGE = "eng"
"""Tesseract's language model (Debian's ``tesseract-ocr-eng``)."""
QUICK_PAGES = 4
"""A file's first pages read by OCR at the ordinary priority; the rest are a long scan's."""
LONG_LANE_NICE = 10
"""How much lower a long scan's pages run (Linux's nice): a short scan read at the same time
gets about ten times its share of the cores, so it is not held up behind the long one."""


@dataclass(frozen=True)
class OcrEngine:
    """The Tesseract program to run, or why there is none (``why_not``)."""

    program: str = ""
    libraries: str = ""
    """An unpacked Tesseract's libraries (``LD_LIBRARY_PATH``); "" for an installed one."""
    tessdata: str = ""
    """Where its language models are (``TESSDATA_PREFIX``); "" for its own default."""
    why_not: str = ""
    pages: int | None = None
    """The most pages this read may give OCR (None: the reader's own cap); a user's allowance."""
    allowance: str = ""
    """What ``pages`` is, said to the user when a file needs more ("12 of your 240 OCR pages
    an hour are left")."""

    def to_json(self) -> dict[str, Any]:
        """The engine as the reader's request carries it."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> OcrEngine:
        """The engine a reader's request carries (none: OCR unavailable, with the reason)."""
        data = data or {"why_not": "OCR was not set up for this read"}
        texts = ("program", "libraries", "tessdata", "why_not", "allowance")
        pages = data.get("pages")
        return cls(
            **{k: str(data.get(k) or "") for k in texts},
            pages=int(pages) if isinstance(pages, int) else None,
        )

    def allowing(self, pages: int, allowance: str) -> OcrEngine:
        """This engine for a read that may give OCR at most ``pages`` pages."""
        return replace(self, pages=max(0, pages), allowance=allowance)


OFF = OcrEngine(why_not="OCR is off (CRAG_OCR=false)")


def ocr_engine(enabled: bool = True, program: Path | None = None) -> OcrEngine:
    """The engine for ``CRAG_OCR`` / ``CRAG_TESSERACT`` (``crag_core.settings``).

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


def read_image(
    image: Image, engine: OcrEngine, seconds: float = PAGE_SECONDS, long: bool = False
) -> list[Block]:
    """The paragraphs Tesseract reads on ``image``, in reading order (``OcrFailed``).

    ``long``: the page is part of a long scan (past ``QUICK_PAGES`` of its file); it is read
    in the long lane (``LONG_LANE_NICE``), so a short scan read meanwhile gets the cores first.
    """
    seconds = min(seconds, PAGE_SECONDS)
    deadline = time.monotonic() + seconds
    page = _prepared(image)
    tsv = _tesseract(_ppm(page), engine, seconds=seconds, long=long)
    blocks = paragraphs(tsv, *page.size)
    missed = unread_bands(page, _word_boxes(tsv, *page.size)) if blocks else []
    for band in missed[:MAX_SECOND_LOOKS]:
        left = deadline - time.monotonic()
        if left < 1:
            break
        crop = band.crop()
        tsv = _tesseract(_ppm(crop), engine, seconds=left, layout="6", long=long)
        found = [b for b in paragraphs(tsv, *crop.size, MIN_LOOK_CONFIDENCE) if _has_words(b)]
        blocks = _in_place(blocks, [band.placed(b) for b in found])
    return blocks


def _ppm(image: Image) -> bytes:
    pixels = BytesIO()
    image.save(pixels, format="PPM")  # uncompressed: nothing spent encoding what is read once
    return pixels.getvalue()


@dataclass(frozen=True)
class Band:
    """A rectangle of a page's unread ink (pixels), and the page with what was read whitened."""

    left: int
    top: int
    right: int
    bottom: int
    masked: Image

    def crop(self) -> Image:
        """The band cut from the masked page (read text is not read twice)."""
        return self.masked.crop((self.left, self.top, self.right, self.bottom))

    def placed(self, block: Block) -> Block:
        """``block`` read on the band, its boxes as fractions of the whole page."""
        page_w, page_h = self.masked.size
        x, y = self.left / page_w, self.top / page_h
        sx, sy = (self.right - self.left) / page_w, (self.bottom - self.top) / page_h

        def moved(box: Box) -> Box:
            return (x + box[0] * sx, y + box[1] * sy, x + box[2] * sx, y + box[3] * sy)

        return Block(tuple((text, moved(box)) for text, box in block.lines))


def unread_bands(page: Image, read: list[Box]) -> list[Band]:
    """The bands of ``page``'s ink no box of ``read`` covers, the largest first.

    Ink is what Otsu's threshold calls dark; the read words' boxes (a little larger: a word's,
    not its line's, which on a turned page covers a neighbour's ends) are whitened; rows left
    with ink are grouped into bands (a gap under a line's height joins them) and each band cut
    at wide gaps between its columns. A band is kept when it looks like lines of text: its
    share of ink within ``TEXT_INK``, its size within ``MAX_BAND_SHARE`` of the page.
    """
    from PIL import Image as PILImage
    from PIL import ImageDraw

    grey = page.convert("L")
    width, height = grey.size
    level = _otsu(grey.histogram())
    masked = grey.point(lambda v: v if v < level else 255)  # paper white, ink as it is
    pad = max(2, height // 300)
    pen = ImageDraw.Draw(masked)
    for left, top, right, bottom in read:
        pen.rectangle(
            (left * width - pad, top * height - pad, right * width + pad, bottom * height + pad),
            fill=255,
        )
    ink = masked.point(lambda v: 255 if v < level else 0)  # what is left unread, white
    min_band = max(4, int(MIN_BAND_SHARE * height))
    rows = _counts(ink)
    bands = []
    for top, bottom in _runs([n >= max(4, width // 400) for n in rows], gap=2 * min_band):
        if bottom - top < min_band:
            continue
        columns = _counts(ink.crop((0, top, width, bottom)).transpose(PILImage.Transpose.ROTATE_90))
        for left, right in _runs([n > 0 for n in reversed(columns)], gap=width // 30):
            area = (bottom - top) * (right - left)
            share = ink.crop((left, top, right, bottom)).histogram()[255] / area
            if not TEXT_INK[0] <= share <= TEXT_INK[1] or area > MAX_BAND_SHARE * width * height:
                continue
            box = (max(0, left - pad * 4), max(0, top - pad * 4))
            far = (min(width, right + pad * 4), min(height, bottom + pad * 4))
            bands.append(Band(*box, *far, masked=masked))
    return sorted(bands, key=lambda b: -(b.right - b.left) * (b.bottom - b.top))


def _counts(ink: Image) -> list[int]:
    """The white pixels of each row of a black-and-white image."""
    width, height = ink.size
    return [ink.crop((0, y, width, y + 1)).histogram()[255] for y in range(height)]


def _otsu(histogram: list[int]) -> int:
    """Otsu's threshold of a grey image's histogram (the level that best splits ink from paper)."""
    total = sum(histogram)
    total_mean = sum(level * n for level, n in enumerate(histogram))
    best, threshold = -1.0, 128
    weight = mean = 0.0
    for level, n in enumerate(histogram[:-1]):
        weight += n
        mean += level * n
        behind = total - weight
        if weight and behind:
            between = (total_mean * weight - mean * total) ** 2 / (weight * behind)
            if between > best:
                best, threshold = between, level + 1
    return threshold


def _runs(flags: list[bool], gap: int) -> list[tuple[int, int]]:
    """The runs of true ``flags`` as (start, end), runs less than ``gap`` apart joined."""
    runs: list[tuple[int, int]] = []
    start = None
    for i, flag in enumerate([*flags, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            if runs and start - runs[-1][1] < gap:
                runs[-1] = (runs[-1][0], i)
            else:
                runs.append((start, i))
            start = None
    return runs


def _has_words(block: Block) -> bool:
    return any(
        sum(ch.isalnum() for ch in word) >= 2 for text, _ in block.lines for word in text.split()
    )


def _in_place(blocks: list[Block], found: list[Block]) -> list[Block]:
    """``blocks`` with each of ``found`` before the first block below it in its column."""
    for new in found:
        left, top, right, _ = new.box
        at = next(
            (
                i
                for i, old in enumerate(blocks)
                if old.box[1] > top and old.box[0] < right and old.box[2] > left
            ),
            len(blocks),
        )
        blocks = [*blocks[:at], new, *blocks[at:]]
    return blocks


def _tesseract(
    pixels: bytes, engine: OcrEngine, seconds: float, layout: str = "3", long: bool = False
) -> str:
    """Tesseract's TSV of the page ``pixels`` (PPM), within ``seconds`` of CPU and of time.

    ``layout`` is Tesseract's page segmentation mode: 3 finds the page's blocks and columns,
    6 reads the image as one block of text. ``long``: run in the long lane (lower priority).
    """
    limit = max(1, int(seconds))

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
        if long:
            os.nice(LONG_LANE_NICE)

    try:
        done = subprocess.run(
            [engine.program, "stdin", "stdout", "-l", LANGUAGE, "--psm", layout, "tsv"],
            input=pixels,
            capture_output=True,
            timeout=limit + 1,
            env=_environment(engine),
            preexec_fn=bounded,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise OcrFailed(f"OCR of a page took longer than {limit} s") from exc
    except OSError as exc:
        raise OcrFailed(f"cannot run tesseract ({exc.strerror or exc})") from exc
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise OcrFailed(f"OCR of a page used its {limit} s of CPU (the page is too dense or large)")
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


def paragraphs(
    tsv: str, width: int, height: int, min_confidence: float = MIN_WORD_CONFIDENCE
) -> list[Block]:
    """Tesseract's TSV (a row per word, numbered by block, paragraph and line) as paragraphs.

    A line's words are joined by spaces; words under ``MIN_WORD_CONFIDENCE`` are left out, and
    a line (a paragraph) left with no word is dropped. Tesseract writes them in reading order.
    ``min_confidence`` above that keeps a paragraph only when its words are that sure on average.
    """
    words: dict[tuple[int, int], dict[int, list[tuple[str, Box]]]] = {}
    sure: dict[tuple[int, int], list[float]] = {}
    for row in _rows(tsv):
        word = row["text"].strip()
        if row["level"] != "5" or not word or float(row["conf"]) < MIN_WORD_CONFIDENCE:
            continue
        box = _word_box(row, width, height)
        key = (int(row["block_num"]), int(row["par_num"]))
        paragraph = words.setdefault(key, {})
        paragraph.setdefault(int(row["line_num"]), []).append((word, box))
        sure.setdefault(key, []).append(float(row["conf"]))
    return [
        Block(
            tuple(
                (" ".join(w for w, _ in line), union([b for _, b in line]))
                for _, line in sorted(paragraph.items())
            )
        )
        for key, paragraph in words.items()
        if sum(sure[key]) >= min_confidence * len(sure[key])
    ]


def _word_boxes(tsv: str, width: int, height: int) -> list[Box]:
    """The box of every word Tesseract read (however unsure), as fractions of the page."""
    return [
        _word_box(row, width, height)
        for row in _rows(tsv)
        if row["level"] == "5" and row["text"].strip()
    ]


def _word_box(row: dict[str, str], width: int, height: int) -> Box:
    """A TSV row's box as fractions of the page's ``width`` and ``height``."""
    left, top = int(row["left"]) / width, int(row["top"]) / height
    return (left, top, left + int(row["width"]) / width, top + int(row["height"]) / height)


def _rows(tsv: str) -> Iterable[dict[str, str]]:
    return csv.DictReader(tsv.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)


if __name__ == "__main__":  # `make ocr`: is OCR there and does it run? (CRAG_OCR aside)
    given = os.environ.get("CRAG_TESSERACT")
    try:
        print(f"OCR: {version(ocr_engine(True, Path(given) if given else None))}")
    except OcrFailed as exc:
        sys.exit(str(exc))
