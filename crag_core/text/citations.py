"""Citations: the generator cites its documents by short keys (``[S1]``, ``[S2]``...).

Documents are shown to the generator with ids ``S1``..``Sn``: short keys a small model copies
reliably, where long chunk ids get mangled (docs/decisions.md, "Citations"). Only bracketed
``S<number>`` keys count as citations, so footnotes such as ``[1]`` or ``[Smith 2023]`` copied
from a document are text, not citations. Keys are mapped back to chunk ids, and a key that
names no document of this run is invalid.
"""

from __future__ import annotations

import re

_CITATION = re.compile(r"\[\s*(S\d{1,3}(?:\s*[,;]\s*S\d{1,3})*)\s*\]", flags=re.IGNORECASE)
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")


def citation_keys(count: int) -> list[str]:
    """The keys of ``count`` documents: S1..Sn."""
    return [f"S{i}" for i in range(1, count + 1)]


def parse_citations(text: str) -> list[str]:
    """Cited keys in order of first appearance (upper-cased, without duplicates)."""
    keys = []
    for match in _CITATION.finditer(text):
        keys += [k.strip().upper() for k in re.split(r"[,;]", match.group(1))]
    return list(dict.fromkeys(keys))


def strip_citations(text: str) -> str:
    """``text`` without its citation markers (other brackets are kept)."""
    stripped = _CITATION.sub("", text)
    stripped = _SPACE_BEFORE_PUNCT.sub(r"\1", stripped)
    return " ".join(stripped.split()) if "\n" not in stripped else stripped.strip()
