"""Where sentences end: one rule for splitting text and for reading across a chunk's cut.

A sentence ends at ``.``, ``!`` or ``?`` and any closing quotes or brackets after it, followed
by a space or the end of the text; a new one starts with a capital letter or a digit, maybe
after an opening quote or bracket. A period after a title or an initial ("Dr.", "U.S.",
"J.") ends no sentence. Chunks may also start at a heading or a list item (``#``, ``*``, ``-``).
"""

from __future__ import annotations

import re

_CLOSER = r"[\"'\u201d\u2019)\]]"
_END = rf"[.!?]{_CLOSER}*"
_START = r"[\"'\u201c\u2018(\[]*[A-Z0-9]"
_SENTENCE_END = re.compile(rf"{_END}(?=\s|$)")
_ENDS = re.compile(rf"{_END}\s*$")
# A look-behind has a fixed width: a split sees up to two closers after the mark ('.")').
_BOUNDARY = re.compile(
    rf"(?:(?<=[.!?])|(?<=[.!?]{_CLOSER})|(?<=[.!?]{_CLOSER}{_CLOSER}))\s+(?={_START})"
)
_CHUNK_START = re.compile(r"^[\s\"'\u201c\u2018(\[]*[A-Z0-9#*-]")
_ABBREVIATION = re.compile(
    r"(?:\b(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Mt|Ft|No|Nos|vs|etc|approx|ca|e\.g|i\.e|U\.S|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)|\b[A-Z])\.$"
)


def split_sentences(text: str) -> list[str]:
    """``text``'s sentences (not split after "Dr.", "U.S.", initials...)."""
    found: list[str] = []
    for piece in _BOUNDARY.split(text.strip()):
        # Only the end can hold the abbreviation (at most 8 characters and a word boundary):
        # searching the whole sentence each time was quadratic in a run of "A. B. C. …".
        if found and _ABBREVIATION.search(found[-1][-16:]):
            found[-1] += " " + piece
        elif piece.strip():
            found.append(piece.strip())
    return found


def sentence_ends(text: str) -> list[int]:
    """The offsets in ``text`` just past each sentence end."""
    return [m.end() for m in _SENTENCE_END.finditer(text)]


def ends_sentence(text: str) -> bool:
    """Whether ``text`` stops at the end of a sentence."""
    return bool(_ENDS.search(text))


def starts_sentence(text: str) -> bool:
    """Whether ``text`` starts a sentence, a heading or a list item."""
    return bool(_CHUNK_START.match(text))
