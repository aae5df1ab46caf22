"""Where a chunk sits on its page: the region (a box) of the lines it was cut from.

A page's reader gives its lines with their boxes (``Line``: the text and (left, top, right,
bottom) as fractions of the page's width and height, top-left origin): Tesseract's for a scanned
page or an image, pdfium's text runs for a PDF's text layer. ``region`` finds a chunk's first
and last words among the page's lines (in order) and returns the box around the lines from one
to the other; it is stored with the chunk as ``box`` ("l,t,r,b") and drawn on the page's image.
"""

from __future__ import annotations

import re

Box = tuple[float, float, float, float]
Line = tuple[str, Box]

EDGE_WORDS = 4
"""How many of a chunk's first (and last) words must follow each other on the page's lines."""

_WORD = re.compile(r"\w+")


def union(boxes: list[Box]) -> Box:
    """The smallest box around ``boxes``."""
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def region(text: str, lines: tuple[Line, ...] | list[Line]) -> Box | None:
    """The box around the page's lines that ``text`` was cut from (``None``: not found)."""
    words: list[str] = []
    owner: list[int] = []
    for n, (said, _box) in enumerate(lines):
        found = _WORD.findall(said.lower())
        words += found
        owner += [n] * len(found)
    wanted = _WORD.findall(text.lower())
    if not wanted or not words:
        return None
    k = min(EDGE_WORDS, len(wanted))
    start = _find(words, wanted[:k], 0)
    if start is None:
        return None
    end = _find(words, wanted[-k:], start)
    if end is None:
        return None
    first, last = owner[start], owner[end + k - 1]
    return union([box for _, box in lines[first : last + 1]])


def _find(words: list[str], run: list[str], start: int) -> int | None:
    """Where ``run`` first follows in ``words`` at or after ``start``."""
    for i in range(start, len(words) - len(run) + 1):
        if words[i : i + len(run)] == run:
            return i
    return None


def box_text(box: Box) -> str:
    """``box`` as stored with a chunk: "left,top,right,bottom", four decimals each."""
    return ",".join(f"{v:.4f}" for v in box)


def parse_box(stored: object) -> Box | None:
    """A stored box read back (``None`` for anything else)."""
    try:
        values = [float(v) for v in str(stored).split(",")]
    except ValueError:
        return None
    if len(values) != 4 or not all(0.0 <= v <= 1.0 for v in values):
        return None
    return (values[0], values[1], values[2], values[3])
