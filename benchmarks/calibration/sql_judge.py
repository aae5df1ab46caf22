"""Does a judged check rank table answers where their signals do not?

A table answer's confidence is fitted on calibration runs whose given answers were nearly all
right (172 of 175), and on the never-tuned sets it ranks right below wrong (AUC 0.26). This
measures one more signal: the embedded model (a code model) asked, after the schema and
question it wrote the query from, whether the query computes what the question asks (P(yes)
from the first token's log-probabilities: the product's ``nodes.tools.table_graph.judge_query``,
which a table answer's confidence reads once its fit takes it).

``pool``: every query the calibration runs of the tools and R tables sets ever wrote (each
record's ``sql``, once per question), run again through today's checks (``run_query``); the
ones that pass are answers crag would give today, judged against the gold. Written by older
prompts and checks too, they hold the mistakes a single run does not. ``given``: the table
answers of a never-tuned run's records (their last query), the same way. ``sample``: a set's
calibration table questions asked again through the table graph with the model sampling,
each distinct answer that passes the checks judged (the wrong answers a greedy run, whose
checks pass few, does not give). ``score``: the
judge's P(yes) for each, beside the shipped confidence. ``report``: AUC of each, right against
wrong, on the pool and on the never-tuned answers. ``refused``: the queries today's checks
refuse on a never-tuned run that still read an answer, judged the same way (could the judge
tell the checks' refusals of right answers apart?). No product code reads this.

    python -m benchmarks.calibration.sql_judge pool --set rtables --data out/rtables-data \
        --out /tmp/judge/rtables-pool.jsonl
    python -m benchmarks.calibration.sql_judge score --set rtables --data out/rtables-data \
        --pairs /tmp/judge/rtables-pool.jsonl --out /tmp/judge/rtables-scored.jsonl
    python -m benchmarks.calibration.sql_judge report --pairs /tmp/judge/*-scored.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "docs" / "benchmarks" / "tools"


SAMPLED_AT = 0.8
"""The temperature ``sample`` asks the model for queries at."""


def calibration_records(set_name: str) -> Iterator[Path]:
    """Every calibration run's records of the set (the tools set's also hold its catalog)."""
    if set_name == "tools":
        yield from sorted(RECORDS.glob("cal-*/tools/crag.jsonl"))
        yield from sorted(p for p in RECORDS.glob("cal-*/crag.jsonl"))
    elif set_name in ("rjoins", "rflights", "rbaseball"):  # auto: the rules' and the loop's
        yield from sorted(RECORDS.glob(f"cal-*/{set_name}/crag*.jsonl"))
    else:
        yield from sorted(RECORDS.glob("cal-*/rtables/crag.jsonl"))
        yield from sorted(RECORDS.glob("rtables-cal-*/crag.jsonl"))


def _store(set_name: str, data: Path) -> Any:
    from benchmarks.measurements.tools import SETS, prepare_collection
    from crag_core.schema.context import Context
    from graph.factory import default_services

    os.environ["CRAG_DATA_DIR"] = str(data.resolve())
    qset = SETS[set_name]
    prepare_collection(data.resolve(), qset)
    store = default_services(Context(collection=qset.collection)).tables
    assert store is not None
    return qset, store


def _queries(record: dict[str, Any]) -> list[str]:
    """The queries a record holds, in order (older records keep one as text)."""
    sqls = record.get("sql") or []
    return [sqls] if isinstance(sqls, str) else list(sqls)


def _run(store: Any, catalog: Any, question: str, sql: str) -> tuple[Any, ...] | None:
    """``run_query`` on the tables the rules ask ``question`` of, and those tables (or None)."""
    from crag_core.errors import CragError
    from nodes.tools.table_keys import tables_asked
    from nodes.tools.table_query import run_query, spans

    tables = tables_asked(question, catalog, store)
    try:
        ranges = {t.name: spans(store, t) for t in tables}
        return (*run_query(store, sql, tables, catalog, question, ranges), tables)
    except CragError:
        return None


def _checked(store: Any, catalog: Any, question: dict[str, Any], sql: str) -> dict[str, Any] | None:
    """``sql`` run through today's checks: the answer crag would give, judged; None if none."""
    from benchmarks.measurements.tools import judge
    from nodes.shared.confidence import table_kind, table_signals, tool_confidence

    ran = _run(store, catalog, question["question"], sql)
    if ran is None:
        return None
    sql, result, answer, premise, reason, tables = ran
    if result is None or not answer or reason:
        return None
    kind = table_kind(result, premise, 1)
    question_text = question["question"]
    signals = table_signals(question_text, sql, result, tables, answer, kind, catalog=catalog)
    read = sorted(result.tables)
    return {
        "id": question["id"],
        "question": question["question"],
        "sql": sql,
        "answer": answer,
        "verdict": judge(answer, question),
        "source": read[0] if read else "?",
        "confidence": tool_confidence(kind, signals),
        "tables": [t.name for t in tables],
        "used": "table",
        "answer_kind": kind,
        "tool_signals": signals,
    }


def pool(set_name: str, data: Path, records: list[Path]) -> list[dict[str, Any]]:
    """Every recorded query of the set's calibration questions that passes today's checks."""
    from crag.eval.records import read_records

    qset, store = _store(set_name, data)
    catalog = store.catalog()
    questions = {
        r["id"]: r for r in read_records(qset.questions) if r.get("split") == "calibration"
    }
    seen: set[tuple[str, str]] = set()
    found = []
    for path in records:
        for r in read_records(path):
            for sql in _queries(r):
                key = (r["id"], " ".join(sql.split()))
                if r["id"] not in questions or key in seen:
                    continue
                seen.add(key)
                checked = _checked(store, catalog, questions[r["id"]], sql)
                if checked and checked["verdict"] != "unknown":
                    found.append(checked)
    return found


def again(set_name: str, data: Path, pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each scored answer of the set's questions run again through today's checks and signals.

    The judge's verdict is kept (it reads the query, which is the same); an answer today's
    checks refuse is left out, as is a pair of another set's question.
    """
    from crag.eval.records import read_records

    qset, store = _store(set_name, data)
    catalog = store.catalog()
    questions = {r["id"]: r for r in read_records(qset.questions)}
    found = []
    for pair in pairs:
        if pair["id"] not in questions:
            continue
        checked = _checked(store, catalog, questions[pair["id"]], pair["sql"])
        if checked is None or checked["verdict"] == "unknown":
            print(f"{pair['id']}: refused today", file=sys.stderr)
            continue
        found.append(_with_verdict(checked, pair.get("judged")))
    return found


def given(set_name: str, data: Path, records: list[Path]) -> list[dict[str, Any]]:
    """A never-tuned run's given or withheld table answers, their last query checked today."""
    from crag.eval.records import read_records

    qset, store = _store(set_name, data)
    catalog = store.catalog()
    questions = {r["id"]: r for r in read_records(qset.questions)}
    found = []
    for path in records:
        for r in read_records(path):
            kind = str(r.get("answer_kind") or "")
            last = (_queries(r) or [""])[-1]
            if not kind.startswith("table") or not last or r["id"] not in questions:
                continue
            checked = _checked(store, catalog, questions[r["id"]], last)
            if checked and checked["verdict"] != "unknown":
                found.append(checked | {"run": str(path)})
    return found


def refused(set_name: str, data: Path, records: list[Path]) -> list[dict[str, Any]]:
    """The recorded queries today's checks refuse that still read an answer off their rows.

    Each query once; its answer read with no check (``result_answer``), judged against the
    gold, with the finding that refused it (``reason``): does the judge tell the checks'
    refusals of right answers from their refusals of wrong ones?
    """
    from benchmarks.measurements.tools import judge
    from crag.eval.records import read_records
    from crag_core.text.sql import result_answer

    qset, store = _store(set_name, data)
    catalog = store.catalog()
    questions = {r["id"]: r for r in read_records(qset.questions)}
    seen: set[tuple[str, str]] = set()
    found = []
    for r in (r for path in records for r in read_records(path) if r["id"] in questions):
        for sql in _queries(r):
            key = (r["id"], " ".join(sql.split()))
            if key in seen:
                continue
            seen.add(key)
            question = questions[r["id"]]
            ran = _run(store, catalog, question["question"], sql)
            if ran is None:
                continue
            result, _, premise, reason, tables = ran
            answer = result_answer(result, question["question"]) if result else ""
            if premise or not reason or not answer:
                continue
            found.append(
                {
                    "id": r["id"],
                    "question": question["question"],
                    "sql": sql,
                    "answer": answer,
                    "verdict": judge(answer, question),
                    "reason": reason,
                    "confidence": None,
                    "tables": [t.name for t in tables],
                    "run": "refused by today's checks",
                }
            )
    return found


def sample(
    set_name: str,
    data: Path,
    samples: int,
    out: Path,
    questions_asked: int = 0,
    temperature: float = SAMPLED_AT,
) -> list[dict[str, Any]]:
    """Answers crag could give to the set's calibration table questions, sampled and judged.

    Each question asked of its tables ``samples`` times through the product's table graph
    (``ask_tables``: write, run, check, retry told why) with the model sampling at
    ``temperature`` (seeded: 0, 1, …); each distinct query that passes today's checks is an
    answer (``_checked``), right or wrong, judged at once by the product's ``judge_query``
    (the question's opening still cached) and written to ``out`` as it is found, so a run
    stopped early keeps what it found. The questions go in a seeded shuffle, so a part of a
    run covers the set's tables; ``questions_asked``: only the first that many of it (0: all).
    A greedy run gives each question one answer, and where the
    checks pass nearly every answer given is right; sampled, the same questions give the
    plausible wrong answers a calibration needs.
    """
    from dataclasses import replace

    from crag.eval.records import read_records
    from crag_core.schema.context import Context
    from graph.factory import default_services
    from nodes.tools.table_graph import Asked, ask_tables, judge_query, judgeable, measured
    from nodes.tools.table_keys import tables_asked

    qset, store = _store(set_name, data)
    catalog = store.catalog()
    ctx = Context(collection=qset.collection)
    services = default_services(ctx)
    questions = [
        r
        for r in read_records(qset.questions)
        if r.get("split") == "calibration" and r.get("tool") == "table"
    ]
    random.Random(0).shuffle(questions)
    questions = questions[:questions_asked] if questions_asked else questions
    found = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as written:
        for question in questions:
            asks = question["question"]
            tables = tables_asked(asks, catalog, store)
            if not tables:
                continue
            ranges, schema = measured(store, tables, asks)
            seen: set[str] = set()
            for seed in range(samples):
                hot = services.llm.bind(temperature=temperature, seed=seed)
                sampling = replace(services, llm=hot, grader=services.judge)  # type: ignore[arg-type]
                last = ask_tables(sampling, ctx, {}, asks, tables, catalog, ranges, schema)[-1]
                key = " ".join(last.sql.split())
                if not last.passed or key in seen:
                    continue
                seen.add(key)
                checked = _checked(store, catalog, question, last.sql)
                if not checked or checked["verdict"] == "unknown":
                    continue
                verdict = None
                if judgeable(last):
                    asked = Asked(services, ctx, {}, asks, tables, catalog, ranges, schema, "")
                    verdict = judge_query(asked, last)[0]
                row = _with_verdict(checked | {"run": f"sampled at {temperature}"}, verdict)
                found.append(row)
                written.write(json.dumps(row) + "\n")
                written.flush()
                print(f"{question['id']}: {row['verdict']} {verdict}", file=sys.stderr, flush=True)
    return found


def score(set_name: str, data: Path, pairs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each pair with the judge's P(yes) (``judged``): the product's ``judge_query``."""
    from crag_core.schema.context import Context
    from graph.factory import default_services
    from nodes.tools.table_graph import SHOWN_ROWS, Asked, judge_query, judgeable, measured
    from nodes.tools.table_query import Attempted

    qset, store = _store(set_name, data)
    catalog = store.catalog()
    by_name = {t.name: t for t in catalog}
    ctx = Context(collection=qset.collection)
    services = default_services(ctx)
    for pair in pairs:
        premise = ":premise:" in pair.get("answer_kind", "")
        result = store.query(pair["sql"], max_rows=SHOWN_ROWS)
        tried = Attempted(1, pair["sql"], result, pair["answer"], premise, "", {})
        if not judgeable(tried):  # never judged (``route_after_run``)
            yield pair | {"judged": None}
            continue
        tables = [by_name[name] for name in pair["tables"] if name in by_name]
        ranges, schema = measured(store, tables, pair["question"])
        asked = Asked(services, ctx, {}, pair["question"], tables, catalog, ranges, schema, "")
        verdict = judge_query(asked, tried)[0]
        print(f"{pair['id']}: {verdict}", file=sys.stderr, flush=True)
        yield _with_verdict(pair, verdict)


RESTATE = (
    "SQLite tables:\n{schema}\n\nQuery:\n{sql}\n\n"
    "Write the one question, in plain English, that this query answers. "
    "Reply with the question only."
)
"""``restate``'s prompt: the tables the query reads, by their columns, and the query."""


def restate(set_name: str, data: Path, pairs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each answer with the question the model says its query answers, and how near it is.

    The model (greedy, at most 48 tokens) reads only the query and the columns of the tables it
    reads, not the question; ``restated`` is the encoder's cosine similarity of its question
    to the one asked (a signal no product code reads yet).
    """
    import numpy as np
    from langchain_core.messages import HumanMessage

    from crag_core.clients.embeddings import default_embeddings
    from crag_core.schema.context import Context
    from crag_core.text import sql_tree
    from graph.factory import default_services

    qset, store = _store(set_name, data)
    by_name = {t.name: t for t in store.catalog()}
    services = default_services(Context(collection=qset.collection))
    llm = services.llm.bind(max_tokens=48, stream=False, temperature=0)
    encoder = default_embeddings()
    for pair in sorted(pairs, key=lambda r: (r.get("tables") or [], r["question"])):
        names = sql_tree.read(pair["sql"]).tables or pair.get("tables") or []
        read = [by_name[n] for n in names if n in by_name]
        schema = "\n".join(f"{t.name}({', '.join(c.original for c in t.columns)})" for t in read)
        text = RESTATE.format(schema=schema, sql=pair["sql"].strip())
        lines = str(llm.invoke([HumanMessage(text)]).content).strip().splitlines()
        said = lines[0] if lines else ""
        asked, back = (np.array(v) for v in encoder.embed_documents([pair["question"], said]))
        near = float(asked @ back / (np.linalg.norm(asked) * np.linalg.norm(back) or 1.0))
        print(f"{pair['id']}: {near:.3f}", file=sys.stderr, flush=True)
        signals = (pair.get("tool_signals") or {}) | {"restated": near}
        yield pair | {"restated": said, "tool_signals": signals}


def _with_verdict(row: dict[str, Any], verdict: float | None) -> dict[str, Any]:
    """An answer with the judge's verdict, beside its signals too (as ``table_signals`` has it)."""
    signals = row.get("tool_signals") or {}
    return row | {"judged": verdict, "tool_signals": signals | {"judged": verdict}}


def report(pairs: list[dict[str, Any]]) -> str:
    """AUC right against wrong, by where from: the confidence when pooled, the judge, and now.

    "Now": the confidence the graph gives today (``tool_confidence`` on the answer's signals
    with the judge's among them, by the shipped fit); then its risk–coverage over every
    answer, each query once (``coverage``).
    """
    import numpy as np

    from benchmarks.calibration.confidence import auc
    from nodes.shared.confidence import tool_confidence

    lines = [
        "| answers | n | wrong | confidence when pooled AUC | judge AUC | confidence now AUC |",
        "|---|---|---|---|---|---|",
    ]
    groups: dict[str, list[dict[str, Any]]] = {}
    for p in pairs:
        groups.setdefault(p.get("run", "calibration pool").split("/docs/")[-1], []).append(p)
    once = list({(p["id"], p["sql"]): p for p in pairs}.values())  # an answer in several runs
    for name, ps in [*groups.items(), ("all, each query once", once)]:
        y = np.array([p["verdict"] == "right" for p in ps], dtype=float)
        pooled = auc(np.array([p["confidence"] or 0.0 for p in ps]), y)  # none: 0.5
        judged = auc(np.array([p["judged"] if p["judged"] is not None else 0.5 for p in ps]), y)
        now = [
            tool_confidence(p.get("answer_kind") or "table", p.get("tool_signals")) or 0.0
            for p in ps
        ]
        lines.append(
            f"| {name} | {len(ps)} | {int(len(y) - y.sum())} | {pooled:.2f} | {judged:.2f} "
            f"| {auc(np.array(now), y):.2f} |"
        )
    return "\n".join(lines) + "\n\nConfidence now, each query once:\n\n" + coverage(once, now)


def coverage(answers: list[dict[str, Any]], scores: list[float]) -> str:
    """The risk–coverage table of ``answers`` at their ``scores`` (``risk_coverage``)."""
    from benchmarks.calibration.tool_confidence import risk_coverage
    from crag.eval.tables import markdown_table

    rows = risk_coverage(answers, scores)
    columns = [("threshold", "min_confidence"), ("given", "given"), ("right", "right")]
    return markdown_table(rows, [*columns, ("wrong", "wrong"), ("wrong_share", "wrong of given")])


def main(argv: list[str] | None = None) -> int:
    """Build the pool, score it, or report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "command",
        choices=["pool", "sample", "given", "refused", "score", "again", "restate", "report"],
    )
    parser.add_argument("--set", default="rtables")
    parser.add_argument("--data", type=Path, default=Path("out/rtables-data"))
    parser.add_argument("--records", default="", help="given: runs' crag.jsonl, comma-separated")
    parser.add_argument("--pairs", nargs="*", type=Path, default=[])
    parser.add_argument("--sample", type=int, default=0, help="score: at most this many right")
    parser.add_argument("--samples", type=int, default=3, help="sample: queries per question")
    parser.add_argument("--questions", type=int, default=0, help="sample: the first N (0: all)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "report":
        pairs = [json.loads(line) for p in args.pairs for line in p.read_text().splitlines()]
        print(report(pairs))
        return 0
    if args.command == "pool":
        rows = pool(args.set, args.data, list(calibration_records(args.set)))
    elif args.command == "sample":
        assert args.out is not None, "--out is needed"
        rows = sample(args.set, args.data, args.samples, args.out, args.questions)
        print(f"{len(rows)} answers -> {args.out}", file=sys.stderr)
        return 0
    elif args.command in ("again", "restate"):
        pairs = [json.loads(line) for p in args.pairs for line in p.read_text().splitlines()]
        rows = list((again if args.command == "again" else restate)(args.set, args.data, pairs))
    elif args.command in ("given", "refused"):
        read = given if args.command == "given" else refused
        rows = read(args.set, args.data, [Path(p) for p in args.records.split(",") if p])
    else:
        rows = [json.loads(line) for p in args.pairs for line in p.read_text().splitlines()]
        if args.sample:  # every wrong answer, and a fixed sample of the right ones
            right = [r for r in rows if r["verdict"] == "right"]
            keep = random.Random(0).sample(right, min(args.sample, len(right)))
            rows = [r for r in rows if r["verdict"] != "right" or r in keep]
        # a question's answers in a row: the model server reuses their shared opening
        rows.sort(key=lambda r: (r["tables"], r["question"]))
        rows = list(score(args.set, args.data, rows))
    assert args.out is not None, "--out is needed"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    wrong = sum(r["verdict"] != "right" for r in rows)
    print(f"{len(rows)} answers, {wrong} wrong -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
