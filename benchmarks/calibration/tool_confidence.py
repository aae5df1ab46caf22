"""The tools' answers' confidence: a logistic model of their signals, chosen across sources.

A table answer records what its query and result say about it (``tool_signals``:
``nodes.shared.confidence.table_signals``) and whether it was right; a catalog answer, how its
question was read (``catalog_signals``); a whole document's (a summary), what its reading measured
(``document_signals``). The model's inputs are chosen greedily by their
**leave-one-source-out** AUC: every answer is scored by a model fitted without any answer
from its source (a table answer's collection: ``collection_of``; a catalog answer's
folder), and ranked against the answers of that source (``within``), so an input that only
tells one source's questions apart (or that source's base rate) does not win. The kinds'
shares (``nodes.shared.confidence.tool_confidence`` without a model) are scored the same way,
as the baseline.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from benchmarks.calibration.confidence import auc, fit
from nodes.shared.confidence import features, kind_share, measures

_FROM = re.compile(r'\b(?:from|join)\s+"?([\w.]+)"?', re.I)
SIGNS = {
    "retry": -1,
    "guessed": -1,
    "computes": -1,
    "premise": -1,
    "list": -1,
    "tables": -1,
    "columns_named": 1,
    "values_named": 1,
    "values_left": -1,
    "zero": -1,
    "judged": 1,
}
"""The inputs a model may take, each with the direction it is expected to move P(right): a
retried query, a column the question did not name, a computation, a false premise, a list,
more tables to choose from, a value the question names that the query does not write
(``values_left``), an answer of 0 (``zero``: a filter that matched nothing), lower; more of the
question named, and the judge's P(yes) that the query computes what the question asks
(``judged``), higher. An input whose fitted
weight goes the other way fits its data by chance (on the calibration set's ten tables, more
tables asked of looked safer) and is not taken."""
CATALOG_SIGNS = {
    "unread": -1,
    "none": -1,
    "named": -1,
    "topic": -1,
    "dated": -1,
    "order": -1,
    "typed": 1,
}
"""A catalog answer's inputs and their expected directions (fixed before the catalog
calibration sets were first run): words of the question its reading left unused, no document
matched, a kind told by file names, a topic, a date range or an order to read, lower; a file
type named, higher."""
DOCUMENT_SIGNS = {
    "covered": 1,
    "named": 1,
    "unread": -1,
    "declined": -1,
    "parts": -1,
}
"""A whole document's answer's (a summary's) inputs and their expected directions (fixed
before the summaries were first run): more of the document's most frequent words and of its
name said, higher; parts left unread, parts the model said nothing of, more parts to join,
lower."""
MAX_FEATURES = 5
"""At most this many inputs: a few hundred answers, a few dozen wrong, fit no more."""
MIN_GAIN = 0.005
"""A further input is taken only when it lifts the left-out AUC by this much."""


def verdict_of(record: dict[str, Any]) -> str:
    """The table answer's verdict: the answer given, or the one held back under the gate."""
    if record.get("withheld"):
        return str(record.get("withheld_verdict") or "unknown")
    return str(record["verdict"])


def confidence_kind(record: dict[str, Any]) -> str:
    """What ``nodes.shared.confidence.tool_confidence`` calls a record's answer.

    "" for the text's.
    """
    return record["used"] if record.get("used") in ("table", "catalog", "document") else ""


def count_kinds(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Answers and right answers by tool and by finer kind (``answer_kind``)."""
    kinds: dict[str, dict[str, int]] = {}
    for r in records:
        kind = confidence_kind(r)
        if not kind or r["verdict"] == "unknown":
            continue
        for counted_as in dict.fromkeys([kind, r.get("answer_kind") or kind]):
            counted = kinds.setdefault(counted_as, {"answers": 0, "right": 0})
            counted["answers"] += 1
            counted["right"] += r["verdict"] == "right"
    return kinds


def tool_answers(records: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    """The records ``tool`` answered or held back, with their signals, right or wrong.

    Held back: the gate withheld the answer and the pass went on (``used`` is then another
    tool); its ``answer_kind`` (``table:value:1``, ``catalog``) still says whose it was.
    """
    return [
        r
        for r in records
        if r.get("used") == tool
        or (r.get("withheld") and str(r.get("answer_kind") or "").split(":")[0] == tool)
        if r.get("tool_signals") and verdict_of(r) != "unknown"
    ]


def table_answers(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records answered (or held back) by a table (``tool_answers``)."""
    return tool_answers(records, "table")


def catalog_answers(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records the catalog answered (or held back) (``tool_answers``)."""
    return tool_answers(records, "catalog")


def folder_of(record: dict[str, Any]) -> str:
    """The folder (question set) a catalog answer's question was asked of."""
    return str(record.get("source") or "?")


def source_of(record: dict[str, Any]) -> str:
    """The table a record's answer read (its query's first table).

    A record keeps its queries as a list; a pooled answer (``benchmarks.calibration.
    sql_judge``) and an older record keep one as text.
    """
    sqls = record.get("sql") or []
    for sql in [sqls] if isinstance(sqls, str) else sqls:
        found = _FROM.search(sql)
        if found:
            return found.group(1).lower()
    return "?"


def collection_of(record: dict[str, Any]) -> str:
    """The collection (question set) a table answer's question was asked of, else its table.

    A table answer is left out with its whole collection: the tables of one collection share
    what a collection is (how many tables a question could go to, how they name things), and
    an input that only tells collections apart learns their base rates (on the calibration
    sets, "how many tables" ranked answers 0.61 leaving a table out, 0.21 leaving a
    collection out).
    """
    return str(record.get("collection") or source_of(record))


def labels(records: list[dict[str, Any]]) -> np.ndarray:
    """1 for a right table answer, 0 for a wrong one."""
    return np.array([verdict_of(r) == "right" for r in records], dtype=float)


@dataclass(frozen=True)
class Tool:
    """What a tool's confidence model is fitted on: its answers, their sources, the inputs."""

    answers: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    source: Callable[[dict[str, Any]], str]
    signs: dict[str, int]


def left_out(
    records: list[dict[str, Any]],
    score: Callable[[list[dict[str, Any]], list[dict[str, Any]]], np.ndarray],
    source: Callable[[dict[str, Any]], str] = source_of,
) -> np.ndarray:
    """Each record's score from ``score(fitted_on, scored)`` fitted without its source."""
    sources = [source(r) for r in records]
    out = np.zeros(len(records))
    for name in sorted(set(sources)):
        held = [i for i, s in enumerate(sources) if s == name]
        rest = [r for r, s in zip(records, sources, strict=True) if s != name]
        out[held] = score(rest, [records[i] for i in held])
    return out


def model_score(names: list[str]) -> Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]:
    """A scorer: the logistic model of ``names`` fitted on one set of records, on another.

    The log-odds the product would give (``nodes.shared.confidence.tool_confidence``): the
    model is fitted on the answers that measured all its inputs, and an answer missing one is
    scored by its kind's share.
    """

    def score(train: list[dict[str, Any]], scored: list[dict[str, Any]]) -> np.ndarray:
        fitted_on = measuring(train, names)
        y = labels(fitted_on)
        if not len(y) or y.min() == y.max():
            return np.zeros(len(scored))
        weights, intercept = fit(_x(fitted_on, names), y)
        kinds = count_kinds(train)
        return np.array(
            [
                float(_x([r], names)[0] @ weights) + intercept
                if measures(names, r["tool_signals"])
                else _log_odds(kind_share(kinds, _kind(r)) or 0.5)
                for r in scored
            ]
        )

    return score


def within(scores: np.ndarray, y: np.ndarray, sources: list[str]) -> float:
    """AUC of right over wrong answers within each source, weighted by its pairs of the two.

    Left-out scores come from a model per source, each fitted without it: pooled, their
    offsets rank whole sources. One binary input scored 0.40, 0.64 or 0.90 pooled over the
    four table collections depending only on whether a fold's intercept, or its mean, was
    kept; within each collection it scored 0.62 every way. A source with no wrong answer (or
    no right one) ranks nothing. NaN if no source holds both.
    """
    pairs = total = 0.0
    for name in sorted(set(sources)):
        held = [i for i, s in enumerate(sources) if s == name]
        right = float(y[held].sum())
        n = right * (len(held) - right)
        if n:
            total += auc(scores[held], y[held]) * n
            pairs += n
    return total / pairs if pairs else float("nan")


def measuring(records: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """The records whose signals hold every one of ``names`` (the model's to fit and score)."""
    return [r for r in records if measures(names, r["tool_signals"])]


def _kind(record: dict[str, Any]) -> str:
    return str(record.get("answer_kind") or confidence_kind(record) or "table")


def _x(records: list[dict[str, Any]], names: list[str]) -> np.ndarray:
    return np.array([features(r["tool_signals"], names) for r in records], dtype=float)


def _log_odds(p: float) -> float:
    return math.log(p / (1 - p))


def select(records: list[dict[str, Any]], tool: Tool | None = None) -> tuple[list[str], float]:
    """The inputs, added one at a time while the left-out AUC rises; that AUC.

    Each answer is scored by a model fitted without its source, and ranked against the
    answers of its own source (``within``).
    """
    tool = tool or TABLE
    y = labels(records)
    sources = [tool.source(r) for r in records]
    candidates = sorted({k for r in records for k in r["tool_signals"]} & set(tool.signs))
    chosen: list[str] = []
    best = 0.5
    while len(chosen) < MAX_FEATURES:
        trials = {
            name: within(left_out(records, model_score([*chosen, name]), tool.source), y, sources)
            for name in candidates
            if name not in chosen and _as_expected(records, [*chosen, name], tool.signs)
        }
        if not trials:
            break
        name, value = max(trials.items(), key=lambda kv: kv[1])
        if value < best + MIN_GAIN:
            break
        chosen.append(name)
        best = value
    return chosen, best


def _as_expected(records: list[dict[str, Any]], names: list[str], signs: dict[str, int]) -> bool:
    """Whether every weight of the model of ``names`` fitted on all ``records`` has its sign."""
    fitted_on = measuring(records, names)
    y = labels(fitted_on)
    if not len(y) or y.min() == y.max():
        return False
    weights, _ = fit(_x(fitted_on, names), y)
    return all(w * signs[n] > 0 for w, n in zip(weights, names, strict=True))


def table_model(records: list[dict[str, Any]], tool: Tool | None = None) -> dict[str, Any]:
    """The model written to ``nodes/shared/tool_confidence.json`` (the table's, or ``tool``'s).

    Its inputs, weights, intercept and AUC; its answers, wrong ones, and those it was fitted
    on (``measured``, the answers ``measuring`` its inputs: the others keep their kind's share).
    """
    tool = tool or TABLE
    answers = tool.answers(records)
    names, value = select(answers, tool)
    fitted_on = measuring(answers, names)
    weights, intercept = (
        fit(_x(fitted_on, names), labels(fitted_on)) if names else (np.zeros(0), 0.0)
    )
    return {
        "features": names,
        "weights": [round(float(w), 6) for w in weights],
        "intercept": round(float(intercept), 6),
        "auc_left_out_by_source": round(value, 3) if names else None,
        "answers": len(answers),
        "wrong": int(len(answers) - labels(answers).sum()),
        "measured": len(fitted_on),
        "sources": sorted({tool.source(r) for r in answers}),
    }


THRESHOLDS = [round(0.1 * i, 1) for i in range(10)]
"""The ``min_confidence`` values a risk–coverage table reads."""


def risk_coverage(answers: list[dict[str, Any]], scores: list[float]) -> list[dict[str, Any]]:
    """For each threshold: the answers given (confidence at or above it), right and wrong.

    ``answers`` are judged records (right or wrong, a withheld one as its guess), ``scores``
    their confidences in order; "AUC" is right over wrong ranked by the confidence.
    """
    y = labels(answers)
    rows = []
    for t in THRESHOLDS:
        given = [i for i, sc in enumerate(scores) if sc >= t]
        wrong = sum(1 for i in given if not y[i])
        rows.append(
            {
                "threshold": f"{t:.1f}",
                "given": len(given),
                "right": len(given) - wrong,
                "wrong": wrong,
                "wrong_share": f"{100 * wrong / len(given):.0f}%" if given else "—",
            }
        )
    return rows


TABLE = Tool(table_answers, collection_of, SIGNS)
CATALOG = Tool(catalog_answers, folder_of, CATALOG_SIGNS)
DOCUMENT = Tool(partial(tool_answers, tool="document"), folder_of, DOCUMENT_SIGNS)


__all__ = [
    "CATALOG",
    "DOCUMENT",
    "TABLE",
    "collection_of",
    "catalog_answers",
    "confidence_kind",
    "count_kinds",
    "left_out",
    "measuring",
    "risk_coverage",
    "select",
    "source_of",
    "table_answers",
    "table_model",
    "tool_answers",
    "verdict_of",
    "within",
]
