"""Questions about one whole document: "summarise X", "what does X say about Y".

``document_request`` finds such a question and the document it names (by its title or file
name); ``joined`` puts the document's chunks back together in order, their overlaps once;
``parts`` cuts a text too long for one prompt into pieces that fit. Nothing here does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from crag_core.text.read_around import CHARS_PER_TOKEN
from crag_core.text.words import content_words

_ASKS = re.compile(
    r"\b(?:summari[sz]e|summary of|overview of|gist of|outline of|tl;?dr of|"
    r"what (?:does|do) (?P<subject>.+?) (?:say|cover|contain|describe)(?: about (?P<topic>.+?))?"
    r"\s*[?.!]*$)",
    re.I,
)
OVERLAP_CHARS = 300
"""The longest overlap looked for between two consecutive chunks."""


@dataclass(frozen=True)
class DocumentRequest:
    """A question about one document: the document (stored metadata) and any topic."""

    document: Mapping[str, Any]
    topic: str


def _words(text: str) -> set[str]:
    return set(content_words(text, underscores=False))


def asks_about_a_document(question: str) -> bool:
    """Whether ``question`` asks for a summary of a document, or what one says.

    No I/O: the documents need only be read when it does.
    """
    return _ASKS.search(question) is not None


def document_request(
    question: str, documents: Sequence[Mapping[str, Any]]
) -> DocumentRequest | None:
    """The document a summary or "what does X say" question names, if it names exactly one.

    A document is named when every word of its title, or of its file name without the
    suffix, is in the question (and there is at least one such word).
    """
    asked = _ASKS.search(question)
    if not asked:
        return None
    words = _words(question)
    named = []
    for doc in documents:
        stem = PurePosixPath(str(doc.get("label") or "")).stem
        for name in (str(doc.get("title") or ""), stem):
            own = _words(name)
            if own and own <= words:
                named.append((len(own), doc))
                break
    if not named:
        return None
    named.sort(key=lambda n: -n[0])
    if len(named) > 1 and named[0][0] == named[1][0]:
        return None  # two documents named alike: not one document
    return DocumentRequest(named[0][1], (asked.group("topic") or "").strip())


def joined(chunks: Sequence[str]) -> str:
    """The chunks in order as one text, each overlap with the chunk before it once."""
    text = ""
    for chunk in chunks:
        overlap = 0
        for k in range(min(OVERLAP_CHARS, len(chunk), len(text)), 0, -1):
            if text.endswith(chunk[:k]):
                overlap = k
                break
        text += ("" if overlap or not text else "\n") + chunk[overlap:]
    return text


def parts(text: str, tokens: int) -> list[str]:
    """``text`` cut into pieces of at most ``tokens`` (estimated), at line ends when it can."""
    size = tokens * CHARS_PER_TOKEN
    pieces = []
    while text:
        if len(text) <= size:
            pieces.append(text)
            break
        cut = text.rfind("\n", size // 2, size)
        cut = cut if cut > 0 else size
        pieces.append(text[:cut])
        text = text[cut:].lstrip("\n")
    return pieces
