"""How likely an answer is right, from what the pass already measured.

``signals`` reads the final pass: the evaluator's scores of the knowledge base and of the
evidence with web results (the pass's, the model's where it graded, and the light evaluator's
own), the grounding judge's score, the judge's score of the sentence the
answer was copied from, whether the answer is copied from the documents and from which (the
knowledge base, the web, or both: they agree), how much of the question that sentence shares
(``crag_core.text.support``), the retries it took, whether the answer is of the kind the
question asks for (``crag_core.text.answer_type``), the rank of the first evidence document
that holds it, and whether the evaluator and the sentence's judge agree. ``confidence`` turns
the fitted ones into P(right)
with a logistic model fitted on the mixed benchmark's calibration split
(``benchmarks/calibration/confidence.py`` writes ``confidence.json``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

from langchain_core.documents import Document

from crag_core.schema.state import PassState, Withheld
from crag_core.text import sql_tree
from crag_core.text.answer_text import is_no_answer
from crag_core.text.answer_type import type_fits
from crag_core.text.catalog import CatalogQuery, unread
from crag_core.text.documents import containing
from crag_core.text.sql import match_tables
from crag_core.text.support import subject_overlap
from crag_core.text.table_checks import computes
from crag_core.text.table_shapes import QueryResult, TableInfo
from crag_core.text.words import content_words, stem
from nodes.shared.common import answer_documents, question_of

FIT = Path(__file__).with_name("confidence.json")
"""The fitted model: feature names, weights, intercept, and what it was fitted on."""
TOOL_FIT = Path(__file__).with_name("tool_confidence.json")
"""The tools' answers counted on the tools benchmark's calibration split, by kind
(``benchmarks/measurements/tools.py fit`` writes it)."""


def signals(state: PassState, answer: str) -> dict[str, float | None]:
    """What the final pass measured about ``answer`` (None: not measured in this pass)."""
    docs, question = answer_documents(state), question_of(state)
    holding = containing(answer, docs)  # in evidence order: the first is the answer's rank
    from_web = [_is_web(docs[i]) for i in holding]
    in_kb, in_web = not all(from_web), any(from_web)
    fits = type_fits(question, answer)
    return {
        "retrieval_score": state.get("retrieval_score"),
        "light_score": state.get("light_score"),
        "evidence_score": state.get("evidence_score"),
        "evidence_light_score": state.get("evidence_light_score"),
        "grounding_score": state.get("grounding_score"),
        "answer_score": state.get("answer_score"),
        "support_score": state.get("support_score"),
        "web": float(bool(state.get("web_searched"))),
        "kb_fallback": float(bool(state.get("kb_fallback"))),
        "in_kb": float(in_kb),
        "in_web": float(in_web),
        "copied": float(in_kb or in_web),
        "agree": float(in_kb and in_web),
        "subject_overlap": subject_overlap(question, answer, docs),
        "retries": float(state.get("retry_count", 0)),
        "words": float(len(answer.split())),
        "type_fits": None if fits is None else float(fits),
        "rank": float(holding[0]) if holding else None,
        "judges_agree": _agree(state.get("retrieval_score"), _judge(state)),
    }


def _is_web(doc: Document) -> bool:
    return str(doc.metadata.get("id", doc.id or "")).startswith("web:")


def _judge(state: PassState) -> float | None:
    """The answer's own judge: the sentence's (a copied answer) or else the grounding check's."""
    support = state.get("support_score")
    return support if support is not None else state.get("grounding_score")


def _agree(evaluator: float | None, judge: float | None) -> float | None:
    """1.0 when the evaluator and the judge fall on the same side of 0.5 (None: one not asked)."""
    if evaluator is None or judge is None:
        return None
    return float((evaluator >= 0.5) == (judge >= 0.5))


@cache
def _fit(path: Path = FIT) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def features(measured: Mapping[str, float | None], names: list[str]) -> list[float]:
    """The model's inputs: each named signal, a missing one as its stated default.

    ``name`` reads the signal; ``name:missing`` is 1.0 when it was not measured (and the
    signal itself then counts as 0.0).
    """
    values = []
    for name in names:
        key, _, flag = name.partition(":")
        value = measured.get(key)
        values.append(float(value is None) if flag == "missing" else float(value or 0.0))
    return values


def confidence(state: PassState, answer: str) -> float | None:
    """P(right) of ``answer`` by the fitted model, rounded; None for "I don't know"."""
    if is_no_answer(answer):
        return None
    return logistic(_fit(), signals(state, answer))


def logistic(model: Mapping[str, Any], measured: Mapping[str, float | None]) -> float:
    """P(right) by a fitted logistic model (features, weights, intercept), rounded."""
    x = features(measured, model["features"])
    z = model["intercept"] + sum(w * v for w, v in zip(model["weights"], x, strict=True))
    return round(1 / (1 + math.exp(-z)), 3)


PRIOR_ANSWERS = 4
"""How many answers a tool kind's share weighs as, pulling a fine kind with few answers
toward its tool's share (``tool_confidence``)."""


def table_kind(result: QueryResult, premise: bool, attempt: int) -> str:
    """The kind a table answer's confidence is counted by: its shape and its attempt.

    ``table:<shape>:<attempt>``, shape ``premise`` (the table has no such value), ``value``
    (one value), ``row`` (one row of several values) or ``list`` (several rows).
    """
    columns = [c for c in result.columns if c != "_row"]
    rows = {r for r in result.rows}
    if premise:
        shape = "premise"
    elif len(rows) == 1:
        shape = "value" if len(columns) == 1 else "row"
    else:
        shape = "list"
    return f"table:{shape}:{attempt}"


_NUMBER = re.compile(r"^-?[\d,]*\.?\d+%?$")


def table_signals(
    question: str,
    sql: str,
    result: QueryResult,
    tables: list[TableInfo],
    answer: str,
    kind: str,
    judged: float | None = None,
    *,
    catalog: Sequence[TableInfo],
) -> dict[str, float | None]:
    """What a table answer's query and result say about it, for its fitted confidence.

    Its kind (``table_kind``: a retry, a false premise, one value, a row, a list); what the
    question asks (a computation: a count, an extreme, an average, one of two); what the
    query does (aggregates, orders and cuts, filters); how well the question names what
    the query read: the columns and values it names in the tables read, and the columns read
    that it names neither by their name nor by a value they hold (a column the model had to
    guess: "fuel economy" read as ``mpg``); the values the question names that some table of
    the ``catalog`` holds and the query does not write (``values_left``: a condition left
    out, "Beverages" for a query of every product); whether the answer is the number 0
    (``zero``: what a count or sum gives when a filter matched no row, a value spelt
    otherwise or compared with the wrong column); how many tables it could have been asked
    of; the judge's P(yes) that the query computes what the question asks (``judged``; None
    when not asked: ``judges_tables``).
    """
    query = sql_tree.read(sql)
    read = [t for t in tables if t.name in result.tables] or tables
    matches = match_tables(question, read)
    named = {c.lower() for m in matches for c in m.columns}
    holding = {
        c.name
        for t in read
        for c in t.columns
        if any(v in c.values for m in matches for v in m.values)
    }
    columns = {c.lower() for c in query.columns}
    used = [c for t in read for c in t.columns if c.name.lower() in columns]
    guessed = [c for c in used if c.original.lower() not in named and c.name not in holding]
    _, shape, attempt = (kind.split(":") + ["", ""])[:3]
    return {
        "retry": float(attempt not in ("", "1")),
        "premise": float(shape == "premise"),
        "list": float(shape == "list"),
        "row": float(shape == "row"),
        "computes": float(computes(question)),
        "aggregate": float(query.aggregates),
        "order_limit": float(query.ordered_limit),
        "where": float(query.filters),
        "columns_named": float(len(named)),
        "values_named": float(sum(len(m.values) for m in matches)),
        "guessed": float(len(guessed)),
        "tables": float(len(tables)),
        "number": float(bool(_NUMBER.match(answer.strip()))),
        "values_left": float(len(_values_left(question, query, catalog))),
        "zero": float(_is_zero(answer)),
        "judged": judged,
    }


def _values_left(question: str, query: sql_tree.Query, catalog: Sequence[TableInfo]) -> set[str]:
    """The values ``question`` names, held in some table of ``catalog``, the query does not write.

    Written: a text literal equal to the value or holding it (``LIKE '%Seafood%'``), or a
    number literal equal to it.
    """
    texts = [t.lower() for t in query.texts]
    left = set()
    for value in {v.lower() for m in match_tables(question, catalog) for v in m.values}:
        if any(value in t for t in texts) or _number_of(value) in query.numbers:
            continue
        left.add(value)
    return left


def _number_of(text: str) -> float | None:
    try:
        return float(text.replace(",", "").rstrip("%"))
    except ValueError:
        return None


def _is_zero(answer: str) -> bool:
    """Whether a table answer is the number 0 (``0``, ``0.0``, ``0%``)."""
    return _number_of(answer.strip()) == 0


def judges_tables(path: Path = TOOL_FIT) -> bool:
    """Whether the table answers' fitted confidence reads the judge's P(yes) (``judged``).

    Only then is a table answer's query judged (``nodes.tools.table_graph``): a call whose
    verdict nothing reads is not made.
    """
    model = _fit(path).get("table_model") or {}
    return any(name.partition(":")[0] == "judged" for name in model.get("features", []))


def catalog_signals(question: str, query: CatalogQuery, matched: int) -> dict[str, float | None]:
    """What a catalog answer's reading of its question says about it, for its confidence.

    The question's words the reading left unused (``crag_core.text.catalog.unread``: a
    condition it may have missed), whether no document matched (the question presumes one),
    whether a kind was told by file names (a changelog named otherwise is missed), and whether
    it filtered by topic (by the text search's similarity), by date, by type, or kept only the
    newest or oldest.
    """
    return {
        "unread": float(len(unread(question, query))),
        "none": float(matched == 0),
        "named": float(bool(query.named)),
        "topic": float(bool(query.topic)),
        "dated": float(query.start is not None or query.end is not None),
        "typed": float(bool(query.types)),
        "order": float(bool(query.order)),
    }


SALIENT_WORDS = 8
"""How many of a document's most frequent content words stand for what it is mostly about."""


def salient(text: str, top: int = SALIENT_WORDS) -> list[str]:
    """A document's most frequent content words (stems, no numbers), most frequent first."""
    counts = Counter(stem(w) for w in content_words(text, underscores=False) if not w.isdigit())
    return [w for w, _ in counts.most_common(top)]


def document_signals(
    name: str, text: str, answer: str, read: int, parts: int, declined: int
) -> dict[str, float | None]:
    """What a whole document's reading says about its answer (a summary), for its confidence.

    How many of the document's most frequent words (``salient``) the answer says (a summary
    that names none missed what the document is mostly about), how many of its name's words;
    how much of the document went unread (``MAX_PARTS``), how many of the parts read the model
    said nothing of, and into how many parts it was cut (each one more answer to join).
    """
    said = {stem(w) for w in content_words(answer, underscores=False)}
    top = salient(text)
    own = PurePosixPath(name).stem  # a file's name without its type, or a title
    named = [stem(w) for w in content_words(own, underscores=False) if not w.isdigit()]
    return {
        "covered": sum(w in said for w in top) / len(top) if top else None,
        "named": sum(w in said for w in named) / len(named) if named else None,
        "unread": 1 - read / parts if parts else 0.0,
        "declined": declined / read if read else 0.0,
        "parts": float(parts),
    }


def tool_confidence(
    kind: str, signals: Mapping[str, float | None] | None = None, path: Path = TOOL_FIT
) -> float | None:
    """P(right) of a tool's answer of ``kind``, from its tool's answers when calibrated.

    ``kind``: ``table``, ``catalog`` or ``document``, or a finer kind of one (``table:list:2``:
    ``table_kind``). The tool's share is (right + 1) / (answers + 2), which stays off 0 and 1
    on a few answers; a finer kind's is its own right answers plus ``PRIOR_ANSWERS`` answers
    at its tool's share, over its answers plus those. None for a tool never measured.

    A table answer's ``signals`` (``table_signals``), a catalog answer's (``catalog_signals``)
    or a whole document's (``document_signals``), where a model of them is fitted
    (``<tool>_model``: features, weights, intercept) and every input it reads was measured
    (``measures``), give its P(right) by that model instead. An answer the model cannot read
    (a false premise is never judged) keeps its kind's share: a missing input is not a 0.
    """
    fitted = _fit(path)
    model = fitted.get(f"{kind.split(':')[0]}_model")
    if model and signals is not None and measures(model["features"], signals):
        return logistic(model, signals)
    return kind_share(fitted.get("kinds", {}), kind)


def measures(names: list[str], signals: Mapping[str, float | None]) -> bool:
    """Whether ``signals`` hold every input a tool's model reads (and it reads any).

    A tool's model reads its inputs as measured: its fit left out the answers missing one
    (``benchmarks.calibration.tool_confidence``), so such an answer is not its to score.
    """
    return bool(names) and all(signals.get(name.partition(":")[0]) is not None for name in names)


def kind_share(kinds: Mapping[str, Mapping[str, int]], kind: str) -> float | None:
    """P(right) of an answer of ``kind`` from answers counted by kind (``tool_confidence``)."""
    tool = kinds.get(kind.split(":")[0])
    if not tool:
        return None
    share = (int(tool["right"]) + 1) / (int(tool["answers"]) + 2)
    fine = kinds.get(kind) if ":" in kind else None
    if not fine:
        return round(share, 3)
    right = int(fine["right"]) + PRIOR_ANSWERS * share
    return round(right / (int(fine["answers"]) + PRIOR_ANSWERS), 3)


def gate(answer: str, confidence: float | None, min_confidence: float) -> Withheld | None:
    """The one comparison with ``min_confidence``: the answer withheld, or None (it is given).

    Every answer kind passes here (text, table, the loop's, catalog, whole document, cached,
    combined parts): in its pass where a withheld answer changes what the pass does next
    (``choose_answer``, ``query_table.table_answer``), and once more for the turn's answer in
    ``finalize``. An answer with no confidence, and "I don't know", are given as they are.
    """
    if confidence is None or is_no_answer(answer) or confidence >= min_confidence:
        return None
    return Withheld(answer=answer, confidence=confidence)


def held_back(withheld: Withheld, min_confidence: float) -> str:
    """The one warning for an answer under ``min_confidence`` (``gate``)."""
    return (
        f"The answer {withheld['answer']!r} is not given: its confidence "
        f"{withheld['confidence']:.2f} is under min_confidence {min_confidence:.2f}."
    )
