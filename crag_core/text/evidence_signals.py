"""What a chunk shows of a question's answer, read without a language model.

The light retrieval evaluator (``nodes.shared.evaluator``) scores a (question, chunk) pair from
these signals and the encoder's similarities, which the caller computes (the text rules hold
no model):

- ``cosine``: the question's similarity to the chunk, and ``sentence_cosine`` to the chunk's
  closest sentence;
- ``coverage``: the share of the question's content words (stemmed) the chunk holds, and
  ``sentence_coverage`` the most one sentence holds;
- ``pairs``: the share of the question's adjacent content-word pairs the chunk holds in order;
- ``names``: the share of the question's names and numbers (words written with a capital
  past its first word, or with digits) the chunk holds; None when it has none;
- ``kind_found``: whether the sentence that holds most of the question also holds something of
  the kind the question asks for (a number, a time, a name) that the question does not say;
  None when its wording asks for no kind (``crag_core.text.answer_type``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from crag_core.text.answer_type import asked_kind, kind_in
from crag_core.text.sentences import split_sentences
from crag_core.text.words import STOPWORDS, content_words, stem, words_of

_NAME = re.compile(r"(?<!^)(?<![.?!]\s)\b(?:[A-Z][\w'-]*|\w*\d\w*)")


def sentences_of(text: str) -> list[str]:
    """The chunk's sentences the encoder compares with the question (at least the chunk)."""
    return split_sentences(text) or [text]


def _stems(text: str) -> list[str]:
    return [stem(w) for w in content_words(text, underscores=False)]


def _share(wanted: Sequence[str], held: set[str]) -> float:
    return sum(w in held for w in wanted) / len(wanted) if wanted else 0.0


def _pairs(words: Sequence[str]) -> set[tuple[str, str]]:
    return set(zip(words, words[1:], strict=False))


def signals(
    question: str, text: str, cosine: float, sentence_cosines: Sequence[float]
) -> dict[str, float | None]:
    """The pair's signals; ``sentence_cosines`` follow ``sentences_of(text)``.

    The encoder may have compared only the first sentences (``nodes.shared.evaluator``
    compares at most 12): every sentence counts for the words it holds, and a sentence with no
    cosine ranks below any with one among those that hold as many.
    """
    asked = list(dict.fromkeys(_stems(question)))
    chunk = set(_stems(text))
    sentences = sentences_of(text)
    per_sentence = [_share(asked, set(_stems(s))) for s in sentences]
    near = [*sentence_cosines, *[-1.0] * (len(sentences) - len(sentence_cosines))]
    best = max(range(len(sentences)), key=lambda i: (per_sentence[i], near[i]))
    pairs = _pairs(_stems(question))
    names = {w for m in _NAME.findall(question) for w in words_of(m) if w not in STOPWORDS}
    held = set(words_of(text))
    kind = asked_kind(question)
    return {
        "cosine": cosine,
        "sentence_cosine": max(sentence_cosines, default=cosine),
        "coverage": _share(asked, chunk),
        "sentence_coverage": per_sentence[best],
        "pairs": len(pairs & _pairs(_stems(text))) / len(pairs) if pairs else 0.0,
        "names": _share(sorted(names), held) if names else None,
        "kind_found": None if kind is None else float(kind_in(kind, sentences[best], question)),
    }
