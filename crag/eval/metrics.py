"""Answer scoring as in the official SQuAD v1.1 evaluation script (exact match and token F1)."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from crag_core.text.answer_text import NO_ANSWER, answer_only, clean_answer, is_no_answer, meta_text
from crag_core.text.words import fold_numbers, normalize

_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case; drop punctuation, the articles a/an/the, and extra whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def f1(prediction: str, gold: str) -> float:
    """Token-overlap F1 between normalized prediction and gold."""
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> float:
    """1.0 when the normalized strings are equal."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def best(metric, prediction: str, golds: Sequence[str]) -> float:  # type: ignore[no-untyped-def]
    """The metric against the best-matching gold answer."""
    return max((metric(prediction, g) for g in golds), default=0.0)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


Verdict = Literal["right", "unknown", "wrong"]
"""How a user takes an answer: right, "I don't know", or wrong (as Meta's CRAG benchmark)."""
VERDICT_SCORE: dict[str, int] = {"right": 1, "unknown": 0, "wrong": -1}
"""A right answer earns what a wrong one costs; "I don't know" neither."""
SHORT_ANSWER_WORDS = 25
"""An answer this long or shorter is right when it contains an accepted answer."""
RIGHT_F1 = 0.5
"""Otherwise, token F1 against the best accepted answer at or above this is right."""
_ARTICLES = frozenset({"a", "an", "the"})


def _words(text: str) -> list[str]:
    """Normalized words, articles dropped, numbers as digits ("seven" -> "7")."""
    return [w for w in fold_numbers(normalize(text).split()) if w not in _ARTICLES]


def contains_answer(prediction: str, gold: str) -> bool:
    """Whether ``gold`` is in ``prediction`` at word boundaries, numbers written either way."""
    needle = " ".join(_words(gold))
    return bool(needle) and f" {needle} " in f" {' '.join(_words(prediction))} "


def cut_short(prediction: str, golds: Sequence[str]) -> bool:
    """Whether ``prediction`` is a proper part of an accepted answer and holds none whole.

    "24" for "24–10", "Rhine" for "Rhine–Meuse–Scheldt", "12,000" for "12,000 millimetres".
    """
    if any(contains_answer(prediction, g) for g in golds):
        return False
    return any(
        contains_answer(g, prediction) and len(_words(prediction)) < len(_words(g)) for g in golds
    )


def verdict(prediction: str, golds: Sequence[str], answerable: bool = True) -> Verdict:
    """Right, "I don't know" or wrong, judged as a user would.

    The answer is read as shown (citation markers, talk about documents and bracket debris
    removed). The no-answer reply is "I don't know"; any other reply to an unanswerable
    question is wrong. Otherwise it is right when an answer of at most
    ``SHORT_ANSWER_WORDS`` words contains an accepted answer, or when its token F1 against
    the best accepted answer reaches ``RIGHT_F1``. A nested question's steps, after its
    answer, are not part of it.
    """
    shown = clean_answer(answer_only(prediction), NO_ANSWER)
    if is_no_answer(shown):
        return "unknown"
    if not answerable:
        return "wrong"
    short = len(shown.split()) <= SHORT_ANSWER_WORDS
    if short and any(contains_answer(shown, g) for g in golds):
        return "right"
    return "right" if best(f1, shown, golds) >= RIGHT_F1 else "wrong"


def truthfulness(verdicts: Sequence[str]) -> float:
    """The mean of +1 (right), 0 ("I don't know") and -1 (wrong), in percent."""
    if not verdicts:
        return 0.0
    return 100 * sum(VERDICT_SCORE[v] for v in verdicts) / len(verdicts)


def record_verdict(record: dict[str, Any]) -> str:
    """A record's verdict, judged afresh (so old records are scored by today's rules)."""
    answerable = record.get("category", "in_kb") != "unanswerable"
    return verdict(record["prediction"], record.get("gold_answers") or [], answerable)


def verdicts(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Right / "I don't know" / wrong counts, the truthfulness score, and right among answers.

    Also how the answers read: how many are longer than ``SHORT_ANSWER_WORDS`` words, and how
    many still talk about their documents or citations (``crag_core.text.answer_text.meta_text``).
    """
    judged = [record_verdict(r) for r in records]
    right, wrong = judged.count("right"), judged.count("wrong")
    given = [answer_only(r["prediction"]) for r in records if not is_no_answer(r["prediction"])]
    return {
        "right": right,
        "unknown": judged.count("unknown"),
        "wrong": wrong,
        "truthfulness": round(truthfulness(judged), 1),
        "right_of_answers": round(100 * right / (right + wrong), 1) if right + wrong else None,
        "long_answers": sum(len(a.split()) > SHORT_ANSWER_WORDS for a in given),
        "meta_answers": sum(bool(meta_text(a)) for a in given),
    }
