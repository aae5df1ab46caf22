"""Questions that are not look-ups: tables by SQL, the collection's catalog, and look-ups beside.

    python -m benchmarks.measurements.tools build --squad ../shared/data/squad-v1.1-dev.json.gz
    python -m benchmarks.measurements.tools run --out docs/benchmarks/tools [--split test] \
        [--per-template 3]
    python -m benchmarks.measurements.tools fit --records <a calibration run>/crag.jsonl
    python -m benchmarks.measurements.tools build --set unseen
    python -m benchmarks.measurements.tools run --set unseen --out docs/benchmarks/unseen/<run>
    python -m benchmarks.measurements.tools routes --set rmixed --split calibration
    python -m benchmarks.measurements.tools recheck --set rtables --records <run>/crag.jsonl
    python -m benchmarks.measurements.tools refusals --set unseen --records <run>/crag.jsonl

Two question sets (``--set``): ``tools``, the collection and questions the tools were built
with (``benchmarks.measurements.tools_questions``), and ``unseen``, the never-tuned set
(``benchmarks.measurements.unseen_questions``: files and questions no part of crag was chosen
on, all of them ``test``).

Pipelines, each in its own process (``crag.eval.interleave``: question by question,
alternating which goes first): ``naive`` (one retrieval, one generation), ``crag-text`` (the
graph with ``tools=False``: every question searches the text, as before the tools) and
``crag`` (as shipped). An answer is right, "I don't know" or wrong (``judge``): a number is
right within 1% (0.01 at least) of the gold; a name when the gold is in it; a set when every
member is in it and no other value of its column is; a SQuAD answer by ``crag.eval.metrics``.

``fit`` counts the shipped graph's table and catalog answers on calibration runs by kind
and fits the table answers' model of their signals
(``benchmarks.calibration.tool_confidence``) into ``nodes/shared/tool_confidence.json``, the
confidence those answers carry. A third set, ``rtables`` (``benchmarks.measurements.
rtables_questions``: ten more tables, every question ``calibration``), gives it wrong answers
to learn from. A fourth, ``rdocs`` (``benchmarks.measurements.rdocs_questions``: documentation
pages with incidental tables, every question ``calibration``), is for choosing how the tools
treat a page's tables: run it with ``crag-text`` and ``crag``; ``rmixed`` asks its questions
with the R tables beside the pages (a page's question whose words name a spreadsheet's column
or value by accident).

``routes`` shows where the planner's rules send each template's questions (no model);
``recheck`` runs recorded table answers' SQL again through today's checks and counts what
they would refuse among right and wrong answers (no model); ``refusals`` does so for every
recorded query, check by check, counting the refused answers that equal the gold.

"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import os
import re
import shutil
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from statistics import mean
from typing import Any

from benchmarks import ROOT
from benchmarks.measurements import (
    heldout_questions,
    loop_questions,
    pdf_tables,
    rbaseball_questions,
    rcatalog_questions,
    rdocs_questions,
    rflights_questions,
    rjoins_questions,
    rnotes_questions,
    rquantities_questions,
    rtables_questions,
    tools_questions,
    unseen_questions,
)
from benchmarks.measurements.multi_part import ask, compare, cost
from benchmarks.measurements.tools_questions import plain
from crag.eval.metrics import percentile, verdict
from crag.eval.records import append_record, done_ids, read_records, write_records
from crag.eval.tables import markdown_table
from crag_core.schema.context import Context
from crag_core.schema.state import scope_of
from crag_core.text.answer_text import STEPS_HEADING, is_no_answer
from crag_core.text.sql import ABBREVIATED

PIPELINES = ("naive", "crag-text", "crag", "crag-loop", "crag-auto")
"""``crag-loop`` and ``crag-auto``: the shipped graph with ``planner`` ``loop`` or ``auto``."""


@dataclass(frozen=True)
class QuestionSet:
    """A collection of files and the questions asked of it."""

    collection: str
    questions: Path
    files: dict[str, Path]
    modified: dict[str, str]


def _as_pdf(name: str) -> str:
    """A table file's name as its PDF copy's (``x.csv`` -> ``x.pdf``); a text keeps its name."""
    path = Path(name)
    return f"{path.stem}.pdf" if path.suffix in (".csv", ".xlsx") else name


SETS = {
    "tools": QuestionSet(
        "tools-bench",
        tools_questions.QUESTIONS,
        tools_questions.FILES,
        tools_questions.MODIFIED,
    ),
    "unseen": QuestionSet(
        "unseen-bench",
        unseen_questions.QUESTIONS,
        unseen_questions.FILES,
        unseen_questions.MODIFIED,
    ),
    "heldout": QuestionSet(  # never-tuned, built 2026-12-05 on files nobody here had used
        "heldout-bench",
        heldout_questions.QUESTIONS,
        heldout_questions.FILES,
        heldout_questions.MODIFIED,
    ),
    "loop": QuestionSet(  # the agent loop's never-tuned set: tables that join, notes beside
        "loop-bench",
        loop_questions.QUESTIONS,
        loop_questions.FILES,
        loop_questions.MODIFIED,
    ),
    "rtables": QuestionSet(
        "rtables-bench",
        rtables_questions.QUESTIONS,
        rtables_questions.FILES,
        rtables_questions.MODIFIED,
    ),
    "rjoins": QuestionSet(  # calibration: a sample shop's tables that join on keys
        "rjoins-bench",
        rjoins_questions.QUESTIONS,
        rjoins_questions.FILES,
        rjoins_questions.MODIFIED,
    ),
    "rflights": QuestionSet(  # calibration: a week of flights, keys that drop rows
        "rflights-bench",
        rflights_questions.QUESTIONS,
        rflights_questions.FILES,
        rflights_questions.MODIFIED,
    ),
    "rbaseball": QuestionSet(  # calibration: six baseball seasons' tables beside prose notes
        "rbaseball-bench",
        rbaseball_questions.QUESTIONS,
        rbaseball_questions.FILES,
        rbaseball_questions.MODIFIED,
    ),
    "rquantities": QuestionSet(
        "rquantities-bench",
        rquantities_questions.QUESTIONS,
        rquantities_questions.FILES,
        rquantities_questions.MODIFIED,
    ),
    "rtables-pdf": QuestionSet(  # the same tables, each typeset in a PDF as a ruled table
        "rtables-pdf-bench",
        rtables_questions.QUESTIONS,
        {_as_pdf(n): p for n, p in rtables_questions.FILES.items()},
        {_as_pdf(n): m for n, m in rtables_questions.MODIFIED.items()},
    ),
    "tools-pdf": QuestionSet(  # the tools set's tables, each typeset in a PDF as a ruled table
        "tools-pdf-bench",
        tools_questions.QUESTIONS,
        {_as_pdf(n): p for n, p in tools_questions.FILES.items()},
        {_as_pdf(n): m for n, m in tools_questions.MODIFIED.items()},
    ),
    "rnotes": QuestionSet(  # calibration: the shop's tables beside a note per country
        "rnotes-bench",
        rnotes_questions.QUESTIONS,
        rnotes_questions.FILES,
        rnotes_questions.MODIFIED,
    ),
    "rdocs": QuestionSet(
        "rdocs-bench",
        rdocs_questions.QUESTIONS,
        rdocs_questions.FILES,
        rdocs_questions.MODIFIED,
    ),
    "rmixed": QuestionSet(  # the documentation pages' questions, the R tables beside them
        "rmixed-bench",
        rdocs_questions.QUESTIONS,
        rdocs_questions.FILES | rtables_questions.FILES,
        rdocs_questions.MODIFIED | rtables_questions.MODIFIED,
    ),
    **{  # catalog questions, a set per folder of real files (rcatalog_questions.SPLIT)
        f"rcatalog-{source}": QuestionSet(
            f"rcatalog-{source}-bench",
            rcatalog_questions.QUESTIONS[source],
            rcatalog_questions.FILES[source],
            rcatalog_questions.MODIFIED[source],
        )
        for source in rcatalog_questions.MANIFEST
    },
}


NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
DENIES = re.compile(
    r"\b(?:has no|have no|there is no|there are no|no such|not (?:in|found|listed|present|"
    r"available|included|mentioned)|does not (?:have|include|contain|list|exist|mention)|"
    r"doesn't (?:have|include|contain|list|exist|mention)|no (?:data|record|row|value|"
    r"column|information))\b",
    re.I,
)
"""An answer that says what the question presumes is not there."""


def judge(prediction: str, row: dict[str, Any]) -> str:
    """``right``, ``unknown`` ("I don't know") or ``wrong``, as a user would count it.

    A day or month is named by its full name or a short form a table holds it by ("Thur",
    "Fri" for Thursday and Friday: ``crag_core.text.sql.ABBREVIATED``); a name with or
    without its accents ("Brasilia" names Brasília).
    """
    if is_no_answer(prediction):
        return "unknown"
    gold, kind = row["gold"], row["gold_kind"]
    if kind == "squad":
        return verdict(prediction, gold)
    if kind == "no-document":  # the documents the question names are not there: said so
        return "right" if re.search(r"\bno document\b", prediction, re.I) else "wrong"
    if kind == "premise":  # what the question presumes is not in the collection: said so
        return "right" if DENIES.search(prediction) else "wrong"
    if kind == "premise-or-none":  # "how many missing…" where none are: none, or not there
        none = re.search(r"\b(?:none|no|zero|0)\b", prediction, re.I)
        return "right" if none or DENIES.search(prediction) else "wrong"
    if kind == "summary":  # a summary that names what the document is about
        said = prediction.lower()
        return "right" if all(w in said for w in gold) else "wrong"
    if kind == "summary-any":  # a summary that names one of the document's topics
        said = prediction.lower()
        return "right" if any(all(w in said for w in t.split()) for t in gold) else "wrong"
    text = plain(prediction)
    if kind == "number":
        g = float(gold)
        if g == 0 and re.search(r"\b(?:none|no|zero)\b", text):
            return "right"
        numbers = [float(n.replace(",", "")) for n in NUMBER.findall(prediction)]
        ok = any(abs(n - g) <= max(0.01 * abs(g), 0.01) for n in numbers)
        return "right" if ok else "wrong"
    members = [gold] if kind == "text" else list(gold)
    others = [u for u in row["universe"] if u not in members]

    def named(value: str) -> bool:
        stem = re.sub(r"\.\w+$", "", plain(value))
        forms = {stem} | ({stem[:3], ABBREVIATED[stem]} if stem in ABBREVIATED else set())
        return any(re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text) for f in forms)

    ok = all(named(m) for m in members) and not any(named(o) for o in others)
    return "right" if ok else "wrong"


def filter_match(row: dict[str, Any], where: str, today: dt.date) -> dict[str, Any]:
    """The filter the run used beside the one the question means (``{today}`` resolved)."""
    if "where" not in row:
        return {}
    tomorrow = today + dt.timedelta(days=1)
    gold = row["where"].format(today=today.isoformat(), tomorrow=tomorrow.isoformat())
    return {"where": where, "where_gold": gold, "where_right": where == gold}


def tool_of(record: dict[str, Any]) -> str:
    """The tool a record's run answered with (a table question that fell back: ``search``)."""
    path = record.get("path") or []
    if "agent" in path:
        return "loop"
    if "query_catalog" in path:
        return "catalog"
    if "read_document" in path:
        return "document"
    if "query_table" in path and "retrieve" not in path:
        return "table"
    return "search"


def context_for(pipeline: str, collection: str = SETS["tools"].collection) -> Context:
    """The graph's settings for ``pipeline`` (no answer cache)."""
    planner = pipeline.removeprefix("crag-") if pipeline in ("crag-loop", "crag-auto") else "rules"
    return Context(
        collection=collection,
        answer_cache=False,
        tools=pipeline != "crag-text",
        planner=planner,  # type: ignore[arg-type]
    )


def prepare_collection(data_dir: Path, qset: QuestionSet = SETS["tools"]) -> None:
    """Ingest the files (modified times fixed) into the set's collection, once."""
    from crag.ingest import ingest
    from graph.factory import knowledge_base

    folder = data_dir / "files" / qset.collection
    if not folder.exists():
        folder.mkdir(parents=True)
        for name, path in qset.files.items():
            if Path(name).suffix == path.suffix:
                shutil.copyfile(path, folder / name)
            else:  # a table typeset in a PDF
                pdf_tables.typeset(pdf_tables.source_rows(path), True, folder / name)
            stamp = dt.datetime.fromisoformat(qset.modified[name] + "T12:00:00").timestamp()
            os.utime(folder / name, (stamp, stamp))
    report = ingest(knowledge_base(qset.collection), [str(folder)])
    if report.failed:
        raise SystemExit(f"ingest failed: {report.failed}")


def answerer(job: dict[str, Any]) -> Callable[[str], None]:
    """A worker's answering function: the job's pipeline on one question id; its record."""
    pipeline, records = job["pipeline"], Path(job["records"])
    qset = SETS[job.get("set", "tools")]
    ctx = context_for(pipeline, qset.collection)
    by_id = {r["id"]: r for r in read_records(qset.questions)}
    done = done_ids(records)

    def answer(question_id: str) -> None:
        if question_id in done:
            return
        row = by_id[question_id]
        result, spent = ask("naive" if pipeline == "naive" else "crag", row["question"], ctx)
        record = {
            "id": row["id"],
            "source": row.get("source") or job.get("set", "tools"),
            "question": row["question"],
            "tool": row["tool"],
            "type": row["type"],
            "prediction": result["prediction"],
            "gold": row["gold"],
            "verdict": judge(result["prediction"], row),
            "used": tool_of(result),
            "confidence": result.get("confidence"),
            "answer_kind": result.get("answer_kind", ""),
            "tool_signals": result.get("tool_signals", {}),
            "withheld": result.get("withheld"),
            "withheld_verdict": judge(result["withheld"], row) if result.get("withheld") else "",
            "withheld_confidence": result.get("withheld_confidence"),
            "signals": result.get("signals", {}),  # a text answer's confidence inputs
            "warnings": result.get("warnings", []),
            "path": result["path"],
            "sql": [s.get("sql") for s in result["sources"] if s.get("sql")],
            "tool_calls": result["path"].count("run_tools"),
            "tried": result.get("tried", ""),
            "cost": result.get("cost", []),
            **filter_match(row, result.get("where", ""), dt.date.today()),
            **spent,
        }
        append_record(records, record)
        print(f"{pipeline}: {record['verdict']} {row['question']!r}", file=sys.stderr)

    return answer


def counts(records: list[dict[str, Any]]) -> str:
    """Right / "I don't know" / wrong, and the truthfulness score."""
    c = Counter(r["verdict"] for r in records)
    n = len(records) or 1
    score = 100 * (c["right"] - c["wrong"]) / n
    return f"{c['right']} / {c['unknown']} / {c['wrong']} ({score:+.0f}%)"


def report(out: Path, pipelines: tuple[str, ...] = PIPELINES) -> str:
    """Per type and pipeline: right / IDK / wrong; routing; cost per route."""
    files = {p: out / f"{p}.jsonl" for p in pipelines}
    records = {p: read_records(f) if f.exists() else [] for p, f in files.items()}
    common = set.intersection(*({r["id"] for r in rs} for rs in records.values()))
    records = {p: [r for r in rs if r["id"] in common] for p, rs in records.items()}
    shipped = "crag" if "crag" in pipelines else pipelines[-1]  # whose routing is shown
    types = sorted({r["type"] for r in records[shipped]})
    rows_ = []
    for kind in [*types, "all"]:
        row: dict[str, Any] = {"type": kind}
        for p in pipelines:
            mine = [r for r in records[p] if kind in ("all", r["type"])]
            row["n"] = len(mine)
            row[p] = counts(mine)
        rows_.append(row)
    by_type = markdown_table(
        rows_, [("type", "type"), ("n", "questions"), *[(p, p) for p in pipelines]]
    )
    tools = ("table", "catalog", "search")
    routing = []
    for label in tools:
        mine = [r for r in records[shipped] if r["tool"] == label]
        used = Counter(r["used"] for r in mine)
        routing.append({"label": label, "n": len(mine), **{t: used[t] for t in tools}})
    crag = records[shipped]
    right_route = sum(r["tool"] == r["used"] for r in crag)
    confusion = markdown_table(
        routing,
        [("label", "labelled \\ answered by"), ("n", "questions"), *[(t, t) for t in tools]],
    )
    spend = []
    for p in pipelines:
        for label in tools:
            mine = [r for r in records[p] if r["tool"] == label]
            if mine:
                spend.append({"pipeline": p, "route": label, "n": len(mine), **cost(mine)})
    cost_table = markdown_table(
        spend,
        [
            ("pipeline", "pipeline"),
            ("route", "questions labelled"),
            ("n", "n"),
            ("p50", "seconds p50"),
            ("mean", "seconds mean"),
            ("calls", "LLM calls / q"),
            ("tokens", "prompt tokens / q"),
        ],
    )
    return (
        f'{len(common)} questions, right / "I don\'t know" / wrong (truthfulness):\n\n{by_type}\n\n'
        f"Routing of the shipped graph: {right_route} of {len(crag)} answered by the tool "
        f"labelled ({100 * right_route / max(len(crag), 1):.0f}%; a table question whose SQL "
        f"failed and fell back to the text counts as search):\n\n{confusion}\n\n"
        f"{filters(crag)}"
        f"Cost per question:\n\n{cost_table}\n\n"
        f"Every question, per pipeline:\n\n{spread(records)}"
    )


def spread(records: dict[str, list[dict[str, Any]]]) -> str:
    """Per pipeline over all its questions: the loop's budget targets.

    Wrong share, seconds and LLM calls at p50 and p95, the slowest question, tool calls.
    """
    rows = []
    for pipeline, rs in records.items():
        seconds = [r["seconds"] for r in rs] or [0.0]
        calls = [r["llm_calls"] for r in rs] or [0]
        rows.append(
            {
                "pipeline": pipeline,
                "n": len(rs),
                "wrong": f"{100 * sum(r['verdict'] == 'wrong' for r in rs) / max(len(rs), 1):.0f}%",
                "s50": f"{percentile(seconds, 50):.1f}",
                "s95": f"{percentile(seconds, 95):.1f}",
                "smax": f"{max(seconds):.1f}",
                "c50": f"{percentile(calls, 50):.0f}",
                "c95": f"{percentile(calls, 95):.0f}",
                "tools": f"{mean([r.get('tool_calls', 0) for r in rs] or [0]):.2f}",
                "tokens": f"{mean([r['prompt_tokens'] for r in rs] or [0]):.0f}",
            }
        )
    return markdown_table(
        rows,
        [
            ("pipeline", "pipeline"),
            ("n", "questions"),
            ("wrong", "wrong"),
            ("s50", "seconds p50"),
            ("s95", "seconds p95"),
            ("smax", "seconds max"),
            ("c50", "LLM calls p50"),
            ("c95", "LLM calls p95"),
            ("tools", "tool calls / q"),
            ("tokens", "prompt tokens / q"),
        ],
    )


def filters(records: list[dict[str, Any]]) -> str:
    """Filter exact match of the shipped graph: per kind of question, and the misses."""
    labelled = [r for r in records if "where_right" in r]
    if not labelled:
        return ""
    rows = []
    for label, mine in [
        ("catalog", [r for r in labelled if r["tool"] == "catalog"]),
        ("search naming its documents", [r for r in labelled if r["tool"] == "search"]),
        ("all", labelled),
    ]:
        right = sum(r["where_right"] for r in mine)
        rows.append(
            {
                "q": label,
                "n": len(mine),
                "exact": f"{right} ({100 * right / max(len(mine), 1):.0f}%)",
            }
        )
    table = markdown_table(rows, [("q", "questions"), ("n", "n"), ("exact", "filter exact")])
    misses = [
        f"`{r['where']}` for `{r['where_gold']}`: {r['question']}"
        for r in labelled
        if not r["where_right"]
    ]
    missed = "".join(f"\n- {m}" for m in misses)
    said = "Filters (crag's where language) against the one each question means"
    return f"{said}:\n\n{table}\n{missed}\n\n"


MODEL_GAIN = 0.02
"""The left-out AUC by which the signals' model must beat the kinds' counts to be used."""


def fit(
    records_paths: list[Path], target: Path, table_paths: list[Path] | None = None
) -> dict[str, Any]:
    """Fit the tools' confidence on calibration runs; write ``target``.

    The table and catalog answers counted by kind, and the table answers' model of their
    signals (``benchmarks.calibration.tool_confidence``), chosen and scored leaving one
    collection (question set; ``collection_of``) out, beside the kinds' counts scored the same
    way; the model is used only when it ranks by ``MODEL_GAIN`` better (else it is written as
    ``table_model_not_used``). The catalog answers' and the whole documents' (summaries')
    models likewise, leaving one folder out, against one share for all (AUC 0.5; else
    ``<tool>_model_not_used``). Only calibration records count (a test question's record is
    refused: the test split reports, it does not fit).
    An answer is right or not as ``judge`` said; "I don't know" is no answer.

    ``table_paths``: the table answers to fit on instead of the runs' (the judged pool of
    ``benchmarks.calibration.sql_judge``: every calibration query that passes today's checks,
    with the judge's P(yes) among its signals).
    """
    from benchmarks.calibration.tool_confidence import (
        CATALOG,
        DOCUMENT,
        count_kinds,
        table_answers,
        table_model,
    )

    split: dict[str, str] = {}
    collection: dict[str, str] = {}  # the first set that asks the question (not its PDF twin)
    for name, qset in SETS.items():
        for q in read_records(qset.questions):
            split[q["id"]] = q["split"]
            collection.setdefault(q["id"], name)
    records = [r for path in records_paths for r in read_records(path)]
    if table_paths:
        runs = {id(r) for r in table_answers(records)}
        pooled = [r for path in table_paths for r in read_records(path)]
        # an answer in two files (judged in the pool and sampled again) counts once
        pooled = list({(r["id"], r["sql"].strip()): r for r in pooled}.values())
        records = [r for r in records if id(r) not in runs] + pooled
    records = [r | {"collection": collection.get(r["id"], "")} for r in records]
    tested = [r["id"] for r in records if split.get(r["id"]) != "calibration"]
    if tested:
        raise SystemExit(f"{len(tested)} records are not of the calibration split: {tested[:3]}")
    model = table_model(records)
    kinds_auc = _rounded(kinds_left_out_auc(table_answers(records)))
    model_auc = model["auc_left_out_by_source"]
    better = model_auc is not None and (kinds_auc is None or model_auc >= kinds_auc + MODEL_GAIN)
    catalog = table_model(records, CATALOG)
    catalog_auc = catalog["auc_left_out_by_source"]  # against one share for every answer: 0.5
    catalog_better = catalog_auc is not None and catalog_auc >= 0.5 + MODEL_GAIN
    document = table_model(records, DOCUMENT)
    document_auc = document["auc_left_out_by_source"]
    document_better = document_auc is not None and document_auc >= 0.5 + MODEL_GAIN
    made = {
        "kinds": dict(sorted(count_kinds(records).items())),
        "table_model" if better else "table_model_not_used": model,
        "catalog_model" if catalog_better else "catalog_model_not_used": catalog,
        "document_model" if document_better else "document_model_not_used": document,
        "fitted_on": {
            "records": [str(p) for p in records_paths],
            "table_answers": [str(p) for p in table_paths or []],
            "questions": len(records),
        },
        "kinds_auc_left_out_by_source": kinds_auc,
    }
    target.write_text(json.dumps(made, indent=2) + "\n", encoding="utf-8")
    return made


def _rounded(value: float) -> float | None:
    """``value`` to three places; None for no value (an AUC with no wrong answer)."""
    return None if value != value else round(value, 3)


def kinds_left_out_auc(answers: list[dict[str, Any]]) -> float:
    """The table answers' AUC by their kinds' counts, each without its collection's.

    Each answer is ranked against its own collection's (``within``).
    """
    import numpy as np

    from benchmarks.calibration.tool_confidence import (
        collection_of,
        count_kinds,
        labels,
        left_out,
        within,
    )
    from nodes.shared.confidence import kind_share

    def score(train: list[dict[str, Any]], scored: list[dict[str, Any]]) -> np.ndarray:
        kinds = count_kinds(train)
        return np.array([kind_share(kinds, r.get("answer_kind") or "table") or 0.0 for r in scored])

    scores = left_out(answers, score, collection_of)
    return within(scores, labels(answers), [collection_of(r) for r in answers])


def denials(records: list[dict[str, Any]], questions: dict[str, dict[str, Any]]) -> int:
    """Answers that deny what the collection holds: "has no…" where the premise holds."""
    return sum(
        1
        for r in records
        if questions[r["id"]]["gold_kind"] not in ("premise", "no-document")
        and r["verdict"] == "wrong"
        and DENIES.search(r["prediction"])
    )


def table_auc(records: list[dict[str, Any]]) -> tuple[float, int, int]:
    """How well table answers' confidence ranks right above wrong, and how many of each."""
    import numpy as np

    from benchmarks.calibration.confidence import auc

    judged = [
        r
        for r in records
        if r.get("used") == "table"
        and r["verdict"] != "unknown"
        and r.get("confidence") is not None
    ]
    scores = np.array([float(r["confidence"]) for r in judged])
    labels = np.array([r["verdict"] == "right" for r in judged], dtype=int)
    return auc(scores, labels), int(labels.sum()), int(len(labels) - labels.sum())


def plans(qset: QuestionSet, split: str) -> str:
    """Every question's plan (rules only, no model), a JSON line each.

    Its id, tool, reason, the search's or catalog's filter and the tables the table tool reads:
    a refactor of the planner keeps these lines (docs/benchmarks/plan).

    Run with ``CRAG_DATA_DIR`` at the set's store (``prepare_collection``).
    """
    from graph.factory import default_services
    from nodes.tools.choose_tool import choose

    services = default_services(Context(collection=qset.collection))
    lines = []
    for row in read_records(qset.questions):
        if row["split"] == split:
            plan, _ = choose(row["question"], services)
            where = scope_of({"plan": plan})
            tables = [t["name"] for t in plan["tables"]] if plan["tool"] == "table" else []
            lines.append(json.dumps([row["id"], plan["tool"], plan["reason"], where, tables]))
    return "\n".join(lines)


def planner(qset: QuestionSet) -> Callable[[str], str]:
    """The tool ``choose_tool``'s rules send a question to (no model), on the set's store."""
    from graph.factory import default_services
    from nodes.tools.choose_tool import choose

    services = default_services(Context(collection=qset.collection))
    return lambda question: str(choose(question, services)[0]["tool"])


def routes(qset: QuestionSet, split: str) -> str:
    """Where ``choose_tool`` sends each template's questions (rules only, no model), a table.

    Run with ``CRAG_DATA_DIR`` at the set's store (``prepare_collection``).
    """
    planned = planner(qset)
    sent: Counter[tuple[str, str, str]] = Counter()
    for row in read_records(qset.questions):
        if row["split"] == split:
            sent[(row["template"], row["tool"], planned(row["question"]))] += 1
    rows = [
        {"template": t, "labelled": label, "chosen": chosen, "questions": n}
        for (t, label, chosen), n in sorted(sent.items())
    ]
    columns = [("template", "template"), ("labelled", "labelled"), ("chosen", "sent to")]
    away = sum(n for (_, label, chosen), n in sent.items() if label != chosen)
    table = markdown_table(rows, [*columns, ("questions", "questions")])
    return f"{table}\n\n{away} of {sum(sent.values())} sent elsewhere than labelled."


def recheck(qset: QuestionSet, records: list[Path]) -> str:
    """Recorded table answers' last SQL run again through today's checks: flagged, by verdict.

    What a new check would refuse among answers already judged, with no model call: a check
    that flags right answers costs them; one that flags wrong ones turns them into a query
    written again. Run with ``CRAG_DATA_DIR`` at the set's store.
    """
    from graph.factory import default_services
    from nodes.tools.table_keys import tables_asked
    from nodes.tools.table_query import run_query, spans

    store = default_services(Context(collection=qset.collection)).tables
    assert store is not None
    catalog = store.catalog()
    rows, flagged = [], []
    for path in records:
        count: Counter[tuple[str, bool]] = Counter()
        for r in read_records(path):
            if r.get("used") != "table" or not r.get("sql"):
                continue
            tables = tables_asked(r["question"], catalog, store)
            ranges = {t.name: spans(store, t) for t in tables}
            _, _, answer, _, why = run_query(
                store, r["sql"][-1], tables, catalog, r["question"], ranges
            )
            count[(r["verdict"], bool(why) or not answer)] += 1
            if why or not answer:
                flagged.append(f"- {r['verdict']} {r['id']}: {why or 'no answer'}")
        rows.append(
            {"records": str(path)}
            | {
                f"{v}{'_flagged' if f else ''}": count[(v, f)]
                for v in ("right", "wrong")
                for f in (False, True)
            }
        )
    columns = [("records", "records")] + [
        (f"{v}{s}", f"{v}{' flagged' if s else ''}")
        for v in ("right", "wrong")
        for s in ("", "_flagged")
    ]
    return markdown_table(rows, columns) + "\n\n" + "\n".join(flagged)


def refusals(qset: QuestionSet, records: list[Path], show: str = "") -> str:
    """Each check's refusals among recorded queries, by whether their answer equals the gold.

    Every query a pipeline wrote (``written``; once, however many runs wrote it)
    runs again; the answer read off its
    result with no check (``result_answer``) is judged against the gold, and each check that
    would refuse it is counted: a check that refuses answers equal to the gold costs right
    answers, one that refuses wrong ones keeps them from being given. The checks run as
    ``run_query`` runs them (the same tables; a query answered as a false premise is counted
    apart, as ``premise``, and checked no further; one the database refused runs mended, as
    ``run_query`` mends it, counted also as ``rejoined``). No model call. Run with
    ``CRAG_DATA_DIR`` at the set's store. ``show`` ("right", "wrong"): each query of that
    verdict a check refuses is listed after the table, with what the checks found (calibration
    sets only: reading the never-tuned ones is tuning on them).
    """
    from crag_core.errors import CragError, TableQueryError
    from crag_core.text.sql import (
        incidental,
        missing_values,
        misspelled,
        result_answer,
        unasked_values,
    )
    from crag_core.text.table_checks import misread_years
    from graph.factory import default_services
    from nodes.tools.table_keys import tables_asked
    from nodes.tools.table_query import absent_numbers, checked, run_mended, spans

    store = default_services(Context(collection=qset.collection)).tables
    assert store is not None
    catalog = store.catalog()
    questions = {r["id"]: r for r in read_records(qset.questions)}
    counts: Counter[tuple[str, str]] = Counter()
    listed: list[str] = []
    seen: set[tuple[str, str]] = set()  # a query written again in another run counts once
    for r in (r for path in records for r in read_records(path) if r["id"] in questions):
        for sql in written(r):
            if (r["id"], sql) in seen:
                continue
            seen.add((r["id"], sql))
            try:
                result, ran = run_mended(store, sql, catalog)  # as run_query runs it
            except (TableQueryError, CragError):
                continue
            answer = result_answer(result, r["question"])
            asked = asked_as(r, sql, answer)  # the question the checks read when it ran
            tables = tables_asked(asked, catalog, store)
            ranges = {t.name: spans(store, t) for t in tables}
            mended, sql = ran != sql, ran
            read = [t for t in tables if t.name in result.tables]  # as run_query reads them
            premise = missing_values(sql, read, catalog) or absent_numbers(
                store, sql, read, catalog=catalog
            )
            if premise and not any(incidental(t) for t in read):
                counts[("queries", "premise")] += 1  # answered as a false premise, unchecked
                if mended:
                    counts[("rejoined (not a check)", "premise")] += 1
                continue
            verdict_of = judge(answer, questions[r["id"]]) if answer else "no rows"
            named = [("no rows", "")] if not answer else []
            named += [("rejoined (not a check)", "")] if mended else []
            named += [("misspelled", t) for t in misspelled(sql, tables)]
            named += [("unasked value", t) for t in unasked_values(sql, read, asked)]
            named += [("year column", t) for t in misread_years(asked, sql, read, ranges)]
            if answer:
                named += checked(store, asked, sql, result, tables, catalog, read, ranges)
            counts[("queries", verdict_of)] += 1
            for check in dict.fromkeys(name for name, _ in named):
                counts[(check, verdict_of)] += 1
            if answer and any(name not in _NOT_CHECKS for name, _ in named):
                counts[("any check", verdict_of)] += 1
                if show and show == ("wrong" if verdict_of == "unknown" else verdict_of):
                    found = "; ".join(f"{n}: {t}" for n, t in named if n not in _NOT_CHECKS)
                    listed.append(f"- {r['id']} {answer!r} {sql}\n  {found}")
    checks = dict.fromkeys(name for name, _ in counts if name not in ("queries", "any check"))
    rows = [
        {
            "check": name,
            "right": counts[(name, "right")],
            "wrong": counts[(name, "wrong")] + counts[(name, "unknown")],
            "empty": counts[(name, "no rows")],
            "premise": counts[(name, "premise")],
        }
        for name in ["queries", "any check", *checks]
    ]
    columns = [
        ("check", "check (queries: all of them; any check: refused by one at least)"),
        ("right", "refused, answer = gold"),
        ("wrong", "refused, answer wrong"),
        ("empty", "no rows"),
        ("premise", "false premise (not checked)"),
    ]
    return "\n\n".join([markdown_table(rows, columns), *(["\n".join(listed)] if listed else [])])


_NOT_CHECKS = frozenset({"no rows", "rejoined (not a check)"})
"""Rows of ``refusals`` that count queries, not a check's refusals."""
_LAST_QUERY = re.compile(r"its last query: (SELECT.*?)\); the agent loop", re.S | re.I)
_LITERAL = r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
"""A Python string literal as a tool call's arguments are written, one group."""
_CALLED_SQL = re.compile(rf"sql={_LITERAL}")

_CALLED = re.compile(rf"query_table\(question={_LITERAL}(?:, sql={_LITERAL})?")
_STEP = re.compile(r"^(?P<question>.+?\?)\s+(?P<answer>.*?)(?:\s*\[\d+\])*\s*$")


def asked_as(record: dict[str, Any], sql: str, answer: str) -> str:
    """The question ``sql`` was checked against when the pipeline ran it.

    The agent loop's ``query_table(question=…, sql=…)`` call for it; else the step of a nested
    answer whose reply is the query's answer (the part's question, its bridge value said);
    else the user's question.
    """
    for m in _CALLED.finditer(record.get("tried") or ""):
        if m.group(2) and ast.literal_eval(m.group(2)) == sql:
            return str(ast.literal_eval(m.group(1)))
    _, _, steps = str(record.get("prediction") or "").partition(STEPS_HEADING)
    matched = [
        m["question"]
        for m in map(_STEP.match, steps.splitlines())
        if m and answer and m["answer"].strip().rstrip(".") == answer
    ]
    return matched[0] if len(matched) == 1 else str(record["question"])


def written(record: dict[str, Any]) -> list[str]:
    """Every query a record's pipeline wrote, once each.

    Those that read rows (``sql``), the rules' last one named in a warning, and those the
    loop called ``query_table`` with (``tried``).
    """
    found = list(record.get("sql") or [])
    found += [m.group(1) for w in record.get("warnings") or [] for m in _LAST_QUERY.finditer(w)]
    found += [ast.literal_eval(m.group(1)) for m in _CALLED_SQL.finditer(record.get("tried") or "")]
    return list(dict.fromkeys(found))


def compare_runs(runs: dict[str, Path], qset: QuestionSet) -> str:
    """Right / IDK / wrong by type for each named run's pipelines, side by side.

    ``runs``: a name for each run ("before", "after") and its out directory; every pipeline
    record file there is a column (``<run> <pipeline>``), over the questions all of them
    answered, every answer judged again by today's ``judge``. Below: the table answers'
    confidence AUC, denials, cost.
    """
    questions = {r["id"]: r for r in read_records(qset.questions)}
    columns: dict[str, list[dict[str, Any]]] = {}
    for name, out in runs.items():
        for path in sorted(out.glob("*.jsonl")):
            columns[f"{name} {path.stem}"] = [
                r | {"verdict": judge(r["prediction"], questions[r["id"]])}
                for r in read_records(path)
                if r["id"] in questions
            ]
    common = set.intersection(*({r["id"] for r in rs} for rs in columns.values()))
    columns = {k: [r for r in rs if r["id"] in common] for k, rs in columns.items()}
    types = sorted({questions[i]["type"] for i in common})
    rows = []
    for kind in [*types, "all"]:
        row: dict[str, Any] = {"type": kind}
        for label, rs in columns.items():
            mine = [r for r in rs if kind in ("all", questions[r["id"]]["type"])]
            row["n"] = len(mine)
            row[label] = counts(mine)
        rows.append(row)
    by_type = markdown_table(
        rows, [("type", "type"), ("n", "questions"), *[(c, c) for c in columns]]
    )
    extra = []
    for label, rs in columns.items():
        area, right, wrong = table_auc(rs)
        wrong_share = sum(r["verdict"] == "wrong" for r in rs) / max(len(rs), 1)
        extra.append(
            {
                "run": label,
                "wrong": f"{100 * wrong_share:.0f}%",
                "auc": "-" if area != area else f"{area:.2f}",
                "judged": f"{right} / {wrong}",
                "denials": denials(rs, questions),
                **cost(rs),
            }
        )
    more = markdown_table(
        extra,
        [
            ("run", "run"),
            ("wrong", "questions wrong"),
            ("auc", "table answers' confidence AUC"),
            ("judged", "table answers right / wrong"),
            ("denials", "denies what the collection holds"),
            ("p50", "seconds p50"),
            ("calls", "LLM calls / q"),
            ("tokens", "prompt tokens / q"),
        ],
    )
    said = 'right / "I don\'t know" / wrong (truthfulness)'
    return f"{len(common)} questions, {said}:\n\n{by_type}\n\n{more}\n"


_HELD = re.compile(r"its confidence (\d+(?:\.\d+)?) is under min_confidence")
"""The gate's warning of a withheld answer (``nodes.shared.confidence.held_back``)."""


def text_answers(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], float]]:
    """The text's answers, given or withheld, judged right or wrong, with their confidence.

    The confidence is the one recorded (the text's signals are not in a tools record, so it
    cannot be scored again); a withheld answer's is its ``withheld_confidence``, or in records
    made before that was kept, the one its warning states.
    """
    from benchmarks.calibration.tool_confidence import confidence_kind, verdict_of

    found = []
    for r in records:
        if confidence_kind(r) or verdict_of(r) == "unknown":
            continue
        score = r.get("confidence") if not r.get("withheld") else r.get("withheld_confidence")
        if score is None and r.get("withheld"):
            held = [m for w in r.get("warnings", []) if (m := _HELD.search(w))]
            score = float(held[0].group(1)) if held else None
        if score is not None:
            found.append((r, float(score)))
    return found


def _scored(records: list[dict[str, Any]], kind: str) -> tuple[list[dict[str, Any]], list[float]]:
    """A kind's judged answers and their confidences, as ``risk`` reads them."""
    from benchmarks.calibration.tool_confidence import tool_answers
    from nodes.shared.confidence import tool_confidence

    if kind == "text":
        scored = text_answers(records)
        return [r for r, _ in scored], [sc for _, sc in scored]
    answers = tool_answers(records, kind)
    signals = [tool_confidence(r.get("answer_kind") or kind, r["tool_signals"]) for r in answers]
    return answers, [sc or 0.0 for sc in signals]


def risk(records: list[dict[str, Any]], title: str) -> str:
    """Per answer kind (table, catalog, document, text): how many are given and wrong.

    Each tool's answer scored as the graph scores it now
    (``nodes.shared.confidence.tool_confidence`` on its recorded ``tool_signals``), a text
    answer by its recorded confidence (``text_answers``), a withheld answer as its guess; the
    AUC beside; ``all`` pools the kinds, as a user meets them.
    """
    import numpy as np

    from benchmarks.calibration.confidence import auc
    from benchmarks.calibration.tool_confidence import labels, risk_coverage

    kinds = {kind: _scored(records, kind) for kind in ("table", "catalog", "document", "text")}
    kinds["all"] = (
        [r for a, _ in kinds.values() for r in a],
        [x for _, s in kinds.values() for x in s],
    )
    parts = []
    for kind, (answers, scores) in kinds.items():
        if not answers:
            continue
        y = labels(answers)
        area = auc(np.array(scores), y)
        head = (
            f"### {kind} answers ({title}): {len(answers)}, {int(len(y) - y.sum())} wrong; "
            f"AUC {'—' if area != area else f'{area:.2f}'}"
        )
        table = markdown_table(
            risk_coverage(answers, scores),
            [
                ("threshold", "min_confidence"),
                ("given", "given"),
                ("right", "right"),
                ("wrong", "wrong"),
                ("wrong_share", "wrong of given"),
            ],
        )
        parts.append(f"{head}\n\n{table}")
    return "\n\n".join(parts) or f"No answers with a confidence ({title})."


def main(argv: list[str] | None = None) -> int:
    """``build`` the questions, or ``run`` the pipelines on them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "command",
        choices=[
            "build",
            "run",
            "fit",
            "risk",
            "compare",
            "routes",
            "plans",
            "recheck",
            "refusals",
        ],
    )
    parser.add_argument(
        "--runs", default="", help="compare: name=out-dir pairs, comma-separated (before=…,after=…)"
    )
    parser.add_argument(
        "--squad", type=Path, default=ROOT.parent / "shared" / "data" / "squad-v1.1-dev.json.gz"
    )
    parser.add_argument("--out", type=Path, default=Path("out/tools"))
    parser.add_argument("--set", default="tools", choices=sorted(SETS), help="the question set")
    parser.add_argument("--split", default="test", choices=["test", "calibration"])
    parser.add_argument("--per-template", type=int, default=0, help="0: every question")
    parser.add_argument("--per-type", type=int, default=0, help="the first N of each type")
    parser.add_argument("--templates", default="", help="only these (comma-separated)")
    parser.add_argument("--ids", default="", help="only these questions (comma-separated ids)")
    parser.add_argument("--tool", default="", help="only questions for these tools (table,…)")
    parser.add_argument(
        "--routed", default="", help="only questions the planner's rules send to these tools"
    )
    parser.add_argument("--data", type=Path, default=Path("out/tools-data"), help="its store")
    parser.add_argument(
        "--pipelines", default=",".join(PIPELINES), help="some of " + ", ".join(PIPELINES)
    )
    parser.add_argument(
        "--records", default="", help="fit, risk, recheck: runs' crag.jsonl, comma-separated"
    )
    parser.add_argument(
        "--show", default="", choices=["", "right", "wrong"], help="refusals: list these"
    )
    parser.add_argument(
        "--table-records",
        default="",
        help="fit: the table answers to fit on instead of the runs' (sql_judge's scored pool)",
    )
    args = parser.parse_args(argv)
    if args.command == "fit":
        if not args.records:
            parser.error("fit needs --records")
        paths = [Path(p) for p in args.records.split(",")]
        tables = [Path(p) for p in args.table_records.split(",") if p]
        target = ROOT / "nodes" / "shared" / "tool_confidence.json"
        print(json.dumps(fit(paths, target, tables), indent=2))
        return 0
    if args.command == "risk":
        paths = [Path(p) for p in args.records.split(",") if p]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing or not paths:
            parser.error(f"risk needs --records files; not found: {', '.join(missing) or 'none'}")
        print(risk([r for p in paths for r in read_records(p)], args.split))
        return 0
    qset = SETS[args.set]
    if args.command == "compare":
        runs = dict(pair.split("=", 1) for pair in args.runs.split(",") if "=" in pair)
        print(compare_runs({k: Path(v) for k, v in runs.items()}, qset))
        return 0
    if args.command in ("routes", "plans", "recheck", "refusals"):
        os.environ["CRAG_DATA_DIR"] = str(args.data.resolve())
        prepare_collection(args.data.resolve(), qset)
        if args.command in ("routes", "plans"):
            print((routes if args.command == "routes" else plans)(qset, args.split))
        else:
            paths = [Path(p) for p in args.records.split(",") if p]
            print(
                recheck(qset, paths)
                if args.command == "recheck"
                else refusals(qset, paths, args.show)
            )
        return 0
    if args.command == "build":
        builders: dict[str, Callable[[], list[dict[str, Any]]]] = {
            "unseen": unseen_questions.build,
            "heldout": heldout_questions.build,
            "loop": loop_questions.build,
            "rtables": rtables_questions.build,
            "rquantities": rquantities_questions.build,
            "rjoins": rjoins_questions.build,
            "rflights": rflights_questions.build,
            "rnotes": partial(
                rnotes_questions.build, args.squad.parent / "wikipedia-vital-articles-en.jsonl.gz"
            ),
            "rbaseball": partial(
                rbaseball_questions.build,
                args.squad.parent / "wikipedia-vital-articles-en.jsonl.gz",
            ),
            "rdocs": rdocs_questions.build,
            "rmixed": rdocs_questions.build,
            **{
                f"rcatalog-{source}": partial(rcatalog_questions.build, source)
                for source in rcatalog_questions.MANIFEST
            },
        }
        made = builders[args.set]() if args.set in builders else tools_questions.build(args.squad)
        write_records(qset.questions, made)
        print(
            f"{len(made)} questions: {dict(Counter(r['tool'] for r in made))}, "
            f"{dict(Counter(r['type'] for r in made))}; wrote {qset.questions}"
        )
        return 0
    chosen = [r for r in read_records(qset.questions) if r["split"] == args.split]
    if args.templates:
        chosen = [r for r in chosen if r["template"] in args.templates.split(",")]
    if args.ids:
        chosen = [r for r in chosen if r["id"] in args.ids.split(",")]
    if args.tool:
        chosen = [r for r in chosen if r["tool"] in args.tool.split(",")]
    if args.per_type:
        of_type: Counter[str] = Counter()
        chosen = [
            r
            for r in chosen
            if (of_type.update([r["type"]]) or of_type[r["type"]]) <= args.per_type
        ]
    if args.per_template:
        taken: Counter[str] = Counter()
        kept = []
        for r in chosen:
            if taken[r["template"]] < args.per_template:
                taken[r["template"]] += 1
                kept.append(r)
        chosen = kept
    args.out.mkdir(parents=True, exist_ok=True)
    data_dir = args.data.resolve()
    os.environ["CRAG_DATA_DIR"] = str(data_dir)
    prepare_collection(data_dir, qset)
    if args.routed:
        planned = planner(qset)
        chosen = [r for r in chosen if planned(r["question"]) in args.routed.split(",")]
    title = f"Tools ({args.set}): {len(chosen)} {args.split} questions"
    ids = [r["id"] for r in chosen]
    chosen_pipelines = tuple(p for p in args.pipelines.split(",") if p in PIPELINES)
    compare(
        "benchmarks.measurements.tools:answerer",
        {"set": args.set},
        ids,
        args.out,
        title,
        __doc__ or "",
        lambda out: report(out, chosen_pipelines),
        chosen_pipelines,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
