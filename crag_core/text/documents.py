"""Documents as the graph sees them, and how they are shown to the model.

Every document (knowledge-base chunk or web result) is a LangChain ``Document`` whose
``metadata`` carries ``id`` (the chunk id or ``web:...``) and ``source`` (file path or URL;
shown as its label).
In prompts, documents are wrapped in ``<document>`` tags and described as data, so text inside
them cannot pass itself off as instructions or close the tag early.
"""

from __future__ import annotations

import re
from collections.abc import Set
from typing import Literal

from langchain_core.documents import Document

from crag_core.text.sources import public_source
from crag_core.text.words import fold_numbers, normalize

RetrievalMode = Literal["dense", "keyword", "hybrid"]
"""How the knowledge base is searched: MiniLM embeddings, BM25 keywords, or both fused."""
MAX_CONTEXT_CHARS = 160
"""The longest context line a chunk is stored with (a long PDF title is cut at a word)."""


def context_line(title: str, heading: str, name: str = "") -> str:
    """What a chunk of a file is about: its file's name, title and heading path.

    "warpbreaks: R: The Number of Breaks in Yarn > … > Format". The file's name (its stem)
    leads unless the rest already says it: people call a file by its name ("the warpbreaks
    data set"), which its title may never say. A first heading that is the title (a Markdown
    file's H1) is said once. "" when there is none of the three.
    """
    heads = [h for h in heading.strip().split(" > ") if h]
    if heads and _plain(heads[0]) == _plain(title):  # a Markdown file's H1 is its title
        heads = heads[1:]
    line = " > ".join(filter(None, (title.strip(), *heads)))
    said = _plain(name)
    if said and said not in _plain(line):
        line = f"{name.strip()}: {line}" if line else name.strip()
    if len(line) > MAX_CONTEXT_CHARS:
        line = line[:MAX_CONTEXT_CHARS].rsplit(" ", 1)[0]
    return line


def _plain(text: str) -> str:
    return re.sub(r"[\s_-]+", " ", text).strip().lower()


def with_context(text: str, context: str) -> str:
    """A chunk as it is stored, embedded and shown: its context line, a blank line, its text.

    Most sections of a page never name their page ("A data frame with 54 observations on 3
    variables"); the line above them does, so search finds them by the page's name and the
    model reads what they belong to (docs/benchmarks/chunk-context.md). The blank line keeps
    it out of the first sentence's quote (``crag_core.text.support.quote`` cuts there).
    """
    return f"{context}\n\n{text}" if context else text


def line_chars(doc: Document) -> int:
    """How many characters of ``doc``'s text its context line and blank line take (0: none)."""
    context = doc.metadata.get("context")
    head = f"{context}\n\n"
    return len(head) if context and doc.page_content.startswith(head) else 0


def body(doc: Document) -> str:
    """A chunk's own text, without the context line it was stored with (``with_context``).

    What reading around a hit and putting a document back together join: the file's text.
    """
    return doc.page_content[line_chars(doc) :]


def with_body(doc: Document, text: str) -> Document:
    """A copy of the chunk ``doc`` whose own text is ``text``, under its context line."""
    made = doc.model_copy(deep=True)
    started = line_chars(doc) > 0
    made.page_content = with_context(text, str(doc.metadata["context"])) if started else text
    return made


def chunk_id(doc_id: str, index: int) -> str:
    """The stable id of chunk ``index`` of document ``doc_id``."""
    return f"{doc_id}__c{index:04d}"


def doc_id(doc: Document) -> str:
    """The document's stable id."""
    return str(doc.metadata.get("id") or doc.id or "")


def doc_source(doc: Document) -> str:
    """Where the document came from, as answers show it: a file's label, a URL, a name.

    Never a path on the server (``crag_core.text.sources.public_source``).
    """
    return public_source(doc.metadata)


def doc_location(doc: Document) -> str:
    """Where in its file the chunk sits: "page 3", a heading path, or "" (no structure)."""
    if doc.metadata.get("page") is not None:
        return f"page {doc.metadata['page']}"
    return str(doc.metadata.get("heading") or "")


def _escape(text: str) -> str:
    # A document must not be able to end its own <document> block or open another.
    return re.sub(r"</?\s*document", lambda m: m.group(0).replace("<", "&lt;"), text, flags=re.I)


def format_documents(docs: list[Document], ids: list[str] | None = None) -> str:
    """Render documents as delimited data blocks for a prompt.

    Each block's ``id`` attribute is the document's id, or ``ids[i]`` when given (the short
    citation keys the generator cites).
    """
    if not docs:
        return "<documents>\n(no documents)\n</documents>"
    labels = ids or [doc_id(doc) for doc in docs]
    blocks = [
        f'<document id="{label}">\n{_escape(doc.page_content.strip())}\n</document>'
        for label, doc in zip(labels, docs, strict=True)
    ]
    return "<documents>\n" + "\n".join(blocks) + "\n</documents>"


def containing(span: str, docs: list[Document]) -> list[int]:
    """Indexes of the documents that contain ``span`` word for word, once normalized.

    Matching is on whole words (``4`` is not found in ``145``), with numbers written either
    way ("7" is found in "seven times"); an empty span is in none.
    """
    needle = " ".join(fold_numbers(normalize(span).split()))
    if not needle:
        return []
    return [
        i
        for i, doc in enumerate(docs)
        if f" {needle} " in f" {' '.join(fold_numbers(normalize(doc.page_content).split()))} "
    ]


def dedupe(docs: list[Document]) -> list[Document]:
    """Drop repeated documents (same id), keeping the first occurrence."""
    seen: set[str] = set()
    out = []
    for doc in docs:
        key = doc_id(doc) or doc.page_content
        if key not in seen:
            seen.add(key)
            out.append(doc)
    return out


def reciprocal_rank_fusion(rankings: list[list[Document]], k: int = 60) -> list[Document]:
    """Fuse several ranked lists: score(d) = sum over lists of 1 / (k + rank(d))."""
    scores: dict[str, float] = {}
    first_seen: dict[str, Document] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            key = doc_id(doc) or doc.page_content
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(key, doc)
    order = sorted(scores, key=lambda key: -scores[key])  # stable: ties keep first-seen order
    return [first_seen[key] for key in order]


def _top_keyword_hit(ranking: list[Document], rejected: Set[str]) -> str | None:
    """Id of the ranking's best keyword hit that is not rejected.

    That is keyword rank 1, or the next rank when every better one was rejected (and is
    still in the ranking, so the ranks in between are known).
    """
    hits = sorted(
        (d for d in ranking if d.metadata.get("keyword_rank") is not None),
        key=lambda d: d.metadata["keyword_rank"],
    )
    for expected, doc in enumerate(hits, start=1):
        if doc.metadata["keyword_rank"] != expected:
            return None
        if doc_id(doc) not in rejected:
            return doc_id(doc)
    return None


def above_floor(
    rankings: list[list[Document]],
    min_similarity: float,
    keyword_min_similarity: float,
    rejected: Set[str] = frozenset(),
) -> list[Document]:
    """Fuse ``rankings``, drop ``rejected`` ids and keep the chunks at or above their floor.

    The floor is ``min_similarity``, except for a chunk that is some query's top BM25 hit
    (``keyword_rank`` 1, or the best not yet rejected): it shares that query's rarest words,
    so it is kept down to ``keyword_min_similarity`` (or ``min_similarity`` if that is lower).
    ``score`` is the cosine similarity to the query.
    """
    keyword_min_similarity = min(keyword_min_similarity, min_similarity)
    top_keyword = {_top_keyword_hit(ranking, rejected) for ranking in rankings} - {None}

    def floor(doc: Document) -> float:
        return keyword_min_similarity if doc_id(doc) in top_keyword else min_similarity

    return [
        d
        for d in reciprocal_rank_fusion(rankings)
        if doc_id(d) not in rejected and d.metadata.get("score", 1.0) >= floor(d)
    ]
