"""Where a chunk sits on its page: the region (a box) of the lines it was cut from.

A page's reader gives its lines with their boxes (``Line``: the text and (left, top, right,
bottom) as fractions of the page's width and height, top-left origin): Tesseract's for a scanned
page or an image, pdfium's text runs for a PDF's text layer. ``region`` finds a chunk's first
and last words among the page's lines (in order) and returns the box around the lines from one
to the other; it is stored with the chunk as ``box`` ("l,t,r,b") and drawn on the page's image.

A chunk also keeps where each of its lines starts and sits (``chunk_lines``, stored as
``lines``), so the sentence an answer stands on is marked, not the whole chunk
(``quote_region``).
"""

from __future__ import annotations

import difflib

from crag_core.text.words import words_of

Box = tuple[float, float, float, float]
Line = tuple[str, Box]

EDGE_WORDS = 4
"""How many of a chunk's first (and last) words must follow each other on the page's lines."""


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
    spans = chunk_lines(text, lines)
    return union([box for _, box in spans]) if spans else None


def chunk_lines(text: str, lines: tuple[Line, ...] | list[Line]) -> list[tuple[int, Box]]:
    """Each page line ``text`` spans, as (the chunk's word that line starts at, its box).

    The chunk's words are aligned with the page's from its first words to its last (a text
    layer and its placed runs may differ in a word: the rest still align); [] when the chunk
    is not found on the page.
    """
    words: list[str] = []
    owner: list[int] = []
    for n, (said, _box) in enumerate(lines):
        found = words_of(said, underscores=True)
        words += found
        owner += [n] * len(found)
    wanted = words_of(text, underscores=True)
    found_at = _edges(words, wanted)
    if found_at is None:
        return []
    start, end = found_at
    page = words[start:end]
    matcher = difflib.SequenceMatcher(None, wanted, page, autojunk=False)
    starts: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for i in range(block.size):
            starts.setdefault(owner[start + block.b + i], block.a + i)
    return [(first, lines[n][1]) for n, first in sorted(starts.items())]


def lines_text(spans: list[tuple[int, Box]]) -> str:
    """``chunk_lines`` as stored with a chunk: "word:l,t,r,b" joined by ";"."""
    return ";".join(f"{first}:{box_text(box)}" for first, box in spans)


def quote_region(text: str, stored: object, quote: str) -> Box | None:
    """The box around the lines of chunk ``text`` that ``quote`` (a sentence of it) is on.

    ``stored``: the chunk's ``lines`` (``lines_text``); ``None`` when either is missing.
    """
    spans = []
    for part in str(stored or "").split(";"):
        first, _, box = part.partition(":")
        if first.isdigit() and (parsed := parse_box(box)):
            spans.append((int(first), parsed))
    found_at = _edges(words_of(text, underscores=True), words_of(quote, underscores=True))
    if not spans or found_at is None:
        return None
    start, last = found_at[0], found_at[1] - 1
    on = [
        box
        for n, (first, box) in enumerate(spans)
        if first <= last and (n + 1 == len(spans) or spans[n + 1][0] > start)
    ]
    return union(on) if on else None


def _edges(words: list[str], wanted: list[str]) -> tuple[int, int] | None:
    """Where ``wanted`` runs in ``words``: (start, end), ``None`` when it is not there.

    Found by its first and last ``EDGE_WORDS`` words, in that order.
    """
    if not wanted or not words:
        return None
    k = min(EDGE_WORDS, len(wanted))
    start = _find(words, wanted[:k], 0)
    end = _find(words, wanted[-k:], start) if start is not None else None
    return None if start is None or end is None else (start, end + k)


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
