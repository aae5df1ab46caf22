"""Reading around a hit, and one token budget for a prompt's documents.

Chunks are cut at about 800 characters, mostly mid-sentence: "…rookie Devin Funchess (31" ends
one chunk, "receptions for 473 yards…" goes on in the next (the chunks overlap by up to 120
characters). A hit cut that way may hold the start of its answer but not the rest, so the sentence
it cuts is completed from its neighbour by positional id (``<doc_id>__c0003`` ->
``__c0004``): only the cut sentence, not the whole neighbour, so the evidence grows by a few
dozen tokens. The same at a hit's start, from the chunk before.

Every prompt's documents are then held to one budget of tokens (``context_tokens``): documents
are kept best first while they fit, the first one that does not is cut at a sentence, the rest
dropped. Tokens are estimated as characters / 4 (English prose with Qwen's and OpenAI's
tokenizers: about 4-4.5 characters per token), which errs on the side of fitting.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from langchain_core.documents import Document

from crag_core.text.documents import body, chunk_id, line_chars, with_body
from crag_core.text.sentences import ends_sentence, sentence_ends, starts_sentence

CHARS_PER_TOKEN = 4
MAX_READ_CHARS = 400
"""At most this much text is added at either end of a hit (a sentence rarely runs longer)."""
MIN_OVERLAP = 8
"""Shortest text two neighbours must share to be taken as the splitter's overlap."""


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is (characters / 4, rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def ends_cut(text: str) -> bool:
    """Whether ``text`` stops mid-sentence."""
    return bool(text.strip()) and not ends_sentence(text)


def starts_cut(text: str) -> bool:
    """Whether ``text`` starts mid-sentence (lower case, not a heading or list item)."""
    return bool(text.strip()) and not starts_sentence(text)


def _overlap(before: str, after: str) -> int:
    """Length of the longest start of ``after`` that ``before`` ends with (0: none)."""
    for size in range(min(len(before), len(after), MAX_READ_CHARS), MIN_OVERLAP - 1, -1):
        if before.endswith(after[:size]):
            return size
    return 0


def continuation(text: str, following: str) -> str:
    """The rest of ``text``'s last sentence, from the chunk that follows it."""
    rest = following[_overlap(text, following) :]
    ends = sentence_ends(rest)
    tail = rest[: ends[0]] if ends and ends[0] <= MAX_READ_CHARS else rest[:MAX_READ_CHARS]
    return tail.strip()


def beginning(preceding: str, text: str) -> str:
    """The start of ``text``'s first sentence, from the chunk before it."""
    head = preceding[: len(preceding) - _overlap(preceding, text)]
    ends = sentence_ends(head)
    start = head[ends[-1] :] if ends else head
    return start[-MAX_READ_CHARS:].strip()


def neighbour(doc: Document, step: int) -> str | None:
    """The id of the chunk ``step`` positions from ``doc`` in its document, if it has one."""
    meta = doc.metadata
    index, count, doc_id = meta.get("chunk"), meta.get("chunks"), meta.get("doc_id")
    if not isinstance(index, int) or not isinstance(count, int) or not doc_id:
        return None
    if not 0 <= index + step < count:
        return None
    return chunk_id(str(doc_id), index + step)


def read_around(
    docs: list[Document], fetch: Callable[[list[str]], list[Document]]
) -> list[Document]:
    """``docs`` with each cut sentence at a hit's end or start completed from its neighbour.

    ``fetch`` returns the stored chunks with the given ids (one call for all hits). A
    neighbour that is itself among ``docs`` is left alone (its text is already there). The
    completed hit keeps its id (it is what an answer cites) and lists the neighbours it read
    in ``metadata["read_around"]``.
    """
    present = {d.id for d in docs}
    wanted: dict[str, tuple[int, int]] = {}
    for n, doc in enumerate(docs):
        for step, cut in ((1, ends_cut), (-1, starts_cut)):
            beside = neighbour(doc, step)
            if beside and beside not in present and cut(body(doc)):
                wanted[beside] = (n, step)
    if not wanted:
        return docs
    texts = {d.id: body(d) for d in fetch(list(wanted))}
    read = [d.model_copy(deep=True) for d in docs]
    for beside, (n, step) in wanted.items():
        if beside not in texts:
            continue
        doc, text = read[n], body(read[n])
        if step == 1:
            text = text.rstrip()
            text = f"{text} {continuation(text, texts[beside])}"
        else:
            text = f"{beginning(texts[beside], text)} {text}"
        read[n] = with_body(doc, text)
        read[n].metadata["read_around"] = [*doc.metadata.get("read_around", []), beside]
    return read


def within_budget(docs: list[Document], tokens: int) -> list[Document]:
    """The documents, best first, that fit in ``tokens``; the first that does not is cut.

    It is cut at its last sentence end within what is left (at a word when none), and kept
    only if something is left; the documents after it are dropped.
    """
    kept: list[Document] = []
    left = tokens
    for doc in docs:
        need = estimate_tokens(doc.page_content)
        if need <= left:
            kept.append(doc)
            left -= need
            continue
        room = doc.page_content[: left * CHARS_PER_TOKEN]
        ends = sentence_ends(room)
        cut = room[: ends[-1]] if ends else room.rsplit(" ", 1)[0]
        if cut[line_chars(doc) :].strip():  # some of its own text, not its context line alone
            shortened = doc.model_copy(deep=True)
            shortened.page_content = cut
            shortened.metadata["truncated"] = True
            kept.append(shortened)
        break
    return kept
