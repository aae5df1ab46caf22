"""Questions that are not look-ups: tables by SQL, the collection's catalog, and look-ups beside.

    python -m benchmarks.measurements.tools build --squad ../shared/data/squad-v1.1-dev.json.gz
    python -m benchmarks.measurements.tools run --out docs/benchmarks/tools [--split test] \
        [--per-template 3]
    python -m benchmarks.measurements.tools fit --records <a calibration run>/crag.jsonl

The collection (``files``): four public tables — ``demo/tables/penguins.csv`` (Palmer
penguins, CC0) and, in ``benchmarks/data/tools``, Seattle's daily weather 2012-2015 (NOAA),
Iowa's net electricity generation by source 2001-2017 (EIA) and US employment by sector
2006-2015 (BLS), all public domain as shipped in ``vega_datasets`` — and the three
Wikipedia paragraphs of ``demo/corpus``. ``run`` ingests them into a collection of its own
with each file's modified time set to a fixed date (``MODIFIED``), so the catalog's questions
have fixed answers.

The questions (``build``, written to ``benchmarks/data/tools/questions.jsonl``): each
template is instantiated over the tables' own values (a fixed seed), its gold computed by
code from the CSV files, labelled by the tool that should answer it (``table``, ``catalog``,
``search``) and by its kind (Meta CRAG's types: ``condition``, ``aggregation``,
``comparison``, ``set``, ``post-processing``, plus ``collection`` and ``simple`` look-ups,
the latter SQuAD v1.1 dev questions on the demo paragraphs with their gold answers). Each
template's instances are split 40/60 into ``calibration`` and ``test`` (a fixed seed);
nothing is tuned on ``test``.

Pipelines, each in its own process (``crag.eval.interleave``: question by question,
alternating which goes first): ``naive`` (one retrieval, one generation), ``crag-text`` (the
graph with ``tools=False``: every question searches the text, as before the tools) and
``crag`` (as shipped). An answer is right, "I don't know" or wrong (``judge``): a number is
right within 1% (0.01 at least) of the gold; a name when the gold is in it; a set when every
member is in it and no other value of its column is; a SQuAD answer by ``crag.eval.metrics``.

``fit`` counts the shipped graph's table and catalog answers on a calibration run by kind
(``confidence_kind``) into ``nodes/tool_confidence.json``, the confidence those answers carry.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import json
import os
import random
import re
import shutil
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchmarks import DATA, ROOT
from benchmarks.measurements.multi_part import ask, compare, cost
from crag.eval.metrics import verdict
from crag.eval.records import append_record, done_ids, read_records
from crag.eval.tables import markdown_table
from crag_core.schema.context import Context
from nodes.answers import is_no_answer

TOOLS_DATA = DATA / "tools"
QUESTIONS = TOOLS_DATA / "questions.jsonl"
FILES = {
    "penguins.csv": ROOT / "demo" / "tables" / "penguins.csv",
    "seattle-weather.csv": TOOLS_DATA / "seattle-weather.csv",
    "iowa-electricity.csv": TOOLS_DATA / "iowa-electricity.csv",
    "us-employment.csv": TOOLS_DATA / "us-employment.csv",
    "super_bowl_50.md": ROOT / "demo" / "corpus" / "super_bowl_50.md",
    "ctenophora.md": ROOT / "demo" / "corpus" / "ctenophora.md",
    "packet_switching.md": ROOT / "demo" / "corpus" / "packet_switching.md",
}
MODIFIED = {
    "penguins.csv": "2025-03-14",
    "seattle-weather.csv": "2025-03-02",
    "iowa-electricity.csv": "2025-04-01",
    "us-employment.csv": "2024-11-20",
    "super_bowl_50.md": "2023-07-09",
    "ctenophora.md": "2025-03-20",
    "packet_switching.md": "2024-02-11",
}
COLLECTION = "tools-bench"
PIPELINES = ("naive", "crag-text", "crag")
SEED = 44
CALIBRATION_SHARE = 0.4


def rows(name: str) -> list[dict[str, str]]:
    """The rows of one of the collection's CSV files."""
    with FILES[name].open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def num(text: str) -> float | None:
    """A cell as a number (None: empty or "NA")."""
    try:
        return float(text)
    except ValueError:
        return None


MEASURES = {
    "body mass in grams": "body_mass_g",
    "flipper length in mm": "flipper_length_mm",
    "bill length in mm": "bill_length_mm",
    "bill depth in mm": "bill_depth_mm",
}


def _penguins(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = rows("penguins.csv")
    species = sorted({r["species"] for r in data})
    islands = sorted({r["island"] for r in data})

    def values(col: str, **where: str) -> list[float]:
        kept = [num(r[col]) for r in data if all(r[k] == v for k, v in where.items())]
        return [v for v in kept if v is not None]

    for s in species:
        for i in islands:
            n = sum(r["species"] == s and r["island"] == i for r in data)
            yield q(
                "p-count",
                f"How many {s} penguins were recorded on the island {i}?",
                "table",
                "aggregation",
                "number",
                n,
            )
    for s in species:
        for words, col in MEASURES.items():
            yield q(
                "p-avg",
                f"What is the average {words} of {s} penguins?",
                "table",
                "aggregation",
                "number",
                round(statistics.mean(values(col, species=s)), 2),
            )
    for y in ("2007", "2008", "2009"):
        yield q(
            "p-year",
            f"How many penguins were recorded in {y}?",
            "table",
            "aggregation",
            "number",
            sum(r["year"] == y for r in data),
        )
    pairs = [(a, b) for a in species for b in species if a < b]
    for a, b in pairs:
        for words, col in MEASURES.items():
            first, second = (a, b) if rng.random() < 0.5 else (b, a)
            larger = max((a, b), key=lambda s: statistics.mean(values(col, species=s)))
            yield q(
                "p-compare",
                f"Which species has the larger average {words}: {first} or {second} penguins?",
                "table",
                "comparison",
                "text",
                larger,
                universe=species,
            )
    for s in species:
        counts = Counter(r["island"] for r in data if r["species"] == s)
        yield q(
            "p-most",
            f"Which island had the most {s} penguins?",
            "table",
            "comparison",
            "text",
            counts.most_common(1)[0][0],
            universe=islands,
        )
    for i in islands:
        found = sorted({r["species"] for r in data if r["island"] == i})
        yield q(
            "p-set",
            f"Which species were recorded on the island {i}?",
            "table",
            "set",
            "set",
            found,
            universe=species,
        )
    for a, b in pairs:
        diff = abs(
            statistics.mean(values("body_mass_g", species=a))
            - statistics.mean(values("body_mass_g", species=b))
        )
        yield q(
            "p-diff",
            f"What is the difference in grams between the average body mass of "
            f"{a} and {b} penguins?",
            "table",
            "post-processing",
            "number",
            round(diff, 2),
        )
    for s in species:
        for sex in ("male", "female"):
            yield q(
                "p-max",
                f"What is the largest flipper length in mm recorded for a {sex} {s} penguin?",
                "table",
                "condition",
                "number",
                max(values("flipper_length_mm", species=s, sex=sex)),
            )


def _weather(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = rows("seattle-weather.csv")
    years = ["2012", "2013", "2014", "2015"]
    kinds = sorted({r["weather"] for r in data})
    for y in years:
        for w in ("rain", "sun", "fog", "snow"):
            n = sum(r["date"].startswith(y) and r["weather"] == w for r in data)
            yield q(
                "w-count",
                f"How many days of {w} were recorded in Seattle in {y}?",
                "table",
                "aggregation",
                "number",
                n,
            )
        total = sum(num(r["precipitation"]) or 0 for r in data if r["date"].startswith(y))
        yield q(
            "w-total",
            f"What was the total precipitation in Seattle in {y}?",
            "table",
            "aggregation",
            "number",
            round(total, 2),
        )
        hottest = max(num(r["temp_max"]) or -99 for r in data if r["date"].startswith(y))
        yield q(
            "w-max",
            f"What was the highest maximum temperature in Seattle in {y}?",
            "table",
            "aggregation",
            "number",
            hottest,
        )
        for threshold in (25, 30):
            n = sum(
                r["date"].startswith(y) and (num(r["temp_max"]) or -99) > threshold for r in data
            )
            yield q(
                "w-above",
                f"How many days in {y} had a maximum temperature above "
                f"{threshold} degrees in Seattle?",
                "table",
                "condition",
                "number",
                n,
            )
    for r in rng.sample(data, 20):
        yield q(
            "w-day",
            f"What was the maximum temperature in Seattle on {_said(r['date'])}?",
            "table",
            "condition",
            "number",
            num(r["temp_max"]),
        )
    for r in rng.sample(data, 6):
        yield q(
            "w-kind",
            f"What was the weather in Seattle on {_said(r['date'])}?",
            "table",
            "condition",
            "text",
            r["weather"],
            universe=kinds,
        )


def _said(day: str) -> str:
    """A day of the weather table (2012/01/01) as a person writes it: "January 1, 2012"."""
    date = dt.date.fromisoformat(day.replace("/", "-"))
    return f"{date:%B} {date.day}, {date.year}"


def _electricity(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = rows("iowa-electricity.csv")
    sources = sorted({r["source"] for r in data})
    years = sorted({r["year"][:4] for r in data})
    value = {(r["source"], r["year"][:4]): int(r["net_generation"]) for r in data}
    for s in sources:
        for y in rng.sample(years, 4):
            yield q(
                "e-value",
                f"What was Iowa's net generation from {s} in {y}?",
                "table",
                "condition",
                "number",
                value[(s, y)],
            )
        best = max(years, key=lambda y: value[(s, y)])
        yield q(
            "e-best",
            f"In which year did {s} have the highest net generation in Iowa?",
            "table",
            "comparison",
            "text",
            best,
            universe=years,
        )
        for _ in range(2):
            y1, y2 = sorted(rng.sample(years, 2))
            yield q(
                "e-change",
                f"By how much did Iowa's net generation from {s} change from {y1} to {y2}?",
                "table",
                "post-processing",
                "number",
                value[(s, y2)] - value[(s, y1)],
            )
    for y in rng.sample(years, 6):
        a, b = rng.sample(sources, 2)
        higher = a if value[(a, y)] > value[(b, y)] else b
        yield q(
            "e-compare",
            f"Which source had the higher net generation in Iowa in {y}: {a} or {b}?",
            "table",
            "comparison",
            "text",
            higher,
            universe=sources,
        )


def _employment(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = rows("us-employment.csv")
    for r in rng.sample(data, 14):
        day = dt.date.fromisoformat(r["month"])
        yield q(
            "u-month",
            f"What was US nonfarm employment in {day:%B %Y}?",
            "table",
            "condition",
            "number",
            num(r["nonfarm"]),
        )
    for y in rng.sample([str(y) for y in range(2006, 2016)], 8):
        kept = [num(r["construction"]) or 0 for r in data if r["month"].startswith(y)]
        yield q(
            "u-avg",
            f"What was the average US construction employment in {y}?",
            "table",
            "aggregation",
            "number",
            round(statistics.mean(kept), 2),
        )


def _collection() -> Iterable[dict[str, Any]]:
    names = sorted(FILES)
    csvs = [n for n in names if n.endswith(".csv")]
    mds = [n for n in names if n.endswith(".md")]

    def modified(test: Callable[[str], bool], among: list[str] = names) -> list[str]:
        return sorted(n for n in among if test(MODIFIED[n]))

    asked: list[tuple[str, str, Any]] = [
        ("c-count", "How many CSV files are there?", len(csvs)),
        ("c-count", "How many documents are in my collection?", len(names)),
        ("c-count", "How many Markdown files do I have?", len(mds)),
        (
            "c-count",
            "How many files were modified since April 2025?",
            len(modified(lambda d: d >= "2025-04")),
        ),
        ("c-count", "How many PDFs are in my collection?", 0),
        ("c-count", "How many files were added today?", len(names)),
        (
            "c-count",
            "How many documents were modified in 2023?",
            len(modified(lambda d: d.startswith("2023"))),
        ),
        (
            "c-list",
            "Which files were modified in March 2025?",
            modified(lambda d: d.startswith("2025-03")),
        ),
        ("c-list", "Which files were modified in 2024?", modified(lambda d: d.startswith("2024"))),
        ("c-list", "Which files were modified before 2024?", modified(lambda d: d < "2024")),
        ("c-list", "List my spreadsheets", csvs),
        (
            "c-list",
            "Which Markdown files were modified in 2025?",
            modified(lambda d: d.startswith("2025"), mds),
        ),
        (
            "c-list",
            "Which CSV files were modified in 2025?",
            modified(lambda d: d.startswith("2025"), csvs),
        ),
        ("c-list", "What PDFs do I have?", []),
        ("c-topic", "Which documents cover packet switching?", ["packet_switching.md"]),
        ("c-topic", "Which documents discuss penguins?", ["penguins.csv"]),
        ("c-topic", "Which files are about the Super Bowl?", ["super_bowl_50.md"]),
        ("c-topic", "Which documents mention Seattle weather?", ["seattle-weather.csv"]),
        ("c-topic", "Which documents cover comb jellies?", ["ctenophora.md"]),
    ]
    for template, question, gold in asked:
        kind = "number" if isinstance(gold, int) else "set"
        row = q(template, question, "catalog", "collection", kind, gold, universe=names)
        yield row | {"where": CATALOG_WHERE.get(question, "")}


CATALOG_WHERE = {
    "How many CSV files are there?": "type=csv",
    "How many Markdown files do I have?": "type=markdown",
    "How many files were modified since April 2025?": "modified>=2025-04-01",
    "How many PDFs are in my collection?": "type=pdf",
    "How many files were added today?": "ingested>={today},ingested<{tomorrow}",
    "How many documents were modified in 2023?": "modified>=2023-01-01,modified<2024-01-01",
    "Which files were modified in March 2025?": "modified>=2025-03-01,modified<2025-04-01",
    "Which files were modified in 2024?": "modified>=2024-01-01,modified<2025-01-01",
    "Which files were modified before 2024?": "modified<2024-01-01",
    "List my spreadsheets": "type=csv|xlsx",
    "Which Markdown files were modified in 2025?": (
        "type=markdown,modified>=2025-01-01,modified<2026-01-01"
    ),
    "Which CSV files were modified in 2025?": "type=csv,modified>=2025-01-01,modified<2026-01-01",
    "What PDFs do I have?": "type=pdf",
}
"""The filter each catalog question means, written by hand in crag's ``where`` language
(``{today}``: the day of the run); the others mean every document ("")."""


def _scoped(squad: Path) -> Iterable[dict[str, Any]]:
    """Look-ups that name the documents to search: by type, by date, and a type none has.

    No random draw (the other templates' splits stay as they were): every fifth SQuAD
    question of each paragraph file, three of each.
    """
    found = _squad_questions(squad)
    chosen = [f for name in sorted({f[0] for f in found}) for f in found if f[0] == name]
    by_file = {name: [f for f in chosen if f[0] == name][::5][:3] for name, _, _ in chosen}
    for name, question, golds in [f for picked in by_file.values() for f in picked]:
        year = MODIFIED[name][:4]
        by_type = f"According to the Markdown files: {question}"
        by_date = f"In the documents modified in {year}: {question}"
        none = f"According to the PDFs: {question}"
        dated = f"modified>={year}-01-01,modified<{int(year) + 1}-01-01"
        yield q("s-scope", by_type, "search", "simple", "squad", golds) | {"where": "type=markdown"}
        yield q("s-scope", by_date, "search", "simple", "squad", golds) | {"where": dated}
        yield q("s-scope-none", none, "search", "false premise", "no-document", []) | {
            "where": "type=pdf"
        }


def _squad_questions(squad: Path) -> list[tuple[str, str, list[str]]]:
    """The SQuAD dev questions on the demo paragraphs: (file, question, gold answers)."""
    texts = {n: FILES[n].read_text(encoding="utf-8") for n in FILES if n.endswith(".md")}
    with gzip.open(squad, "rt", encoding="utf-8") as fh:
        data = json.load(fh)["data"]
    found = []
    for article in data:
        for paragraph in article["paragraphs"]:
            home = [n for n, t in texts.items() if paragraph["context"][:80] in t]
            for qa in paragraph["qas"] if home else []:
                golds = [a["text"] for a in qa["answers"]]
                found.append((home[0], qa["question"].strip(), golds))
    return found


def _lookups(squad: Path, rng: random.Random) -> Iterable[dict[str, Any]]:
    found = _squad_questions(squad)
    texts = {name for name, _, _ in found}
    for name in sorted(texts):
        mine = [f for f in found if f[0] == name]
        for _, question, golds in rng.sample(mine, min(8, len(mine))):
            yield q("s-lookup", question, "search", "simple", "squad", golds)


def q(
    template: str,
    question: str,
    tool: str,
    kind: str,
    gold_kind: str,
    gold: Any,
    universe: list[str] | None = None,
) -> dict[str, Any]:
    """One question: its template, tool, kind, gold (and a set's or name's other values)."""
    return {
        "template": template,
        "question": question,
        "tool": tool,
        "type": kind,
        "gold_kind": gold_kind,
        "gold": gold,
        "universe": universe or [],
    }


def build(squad: Path) -> list[dict[str, Any]]:
    """Every question, with an id and a split (each template 40/60, a fixed seed)."""
    rng = random.Random(SEED)
    made = [
        *_penguins(rng),
        *_weather(rng),
        *_electricity(rng),
        *_employment(rng),
        *_collection(),
        *_lookups(squad, rng),
        *_scoped(squad),
    ]
    by_template: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in made:
        by_template[row["template"]].append(row)
    out = []
    for template, group in by_template.items():
        order = list(range(len(group)))
        rng.shuffle(order)
        cut = round(CALIBRATION_SHARE * len(group))
        for rank, i in enumerate(order):
            row = group[i] | {
                "id": f"{template}-{i:02d}",
                "split": "calibration" if rank < cut else "test",
            }
            out.append(row)
    return sorted(out, key=lambda r: r["id"])


NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def judge(prediction: str, row: dict[str, Any]) -> str:
    """``right``, ``unknown`` ("I don't know") or ``wrong``, as a user would count it."""
    if is_no_answer(prediction):
        return "unknown"
    gold, kind = row["gold"], row["gold_kind"]
    if kind == "squad":
        return verdict(prediction, gold)
    if kind == "no-document":  # the documents the question names are not there: said so
        return "right" if re.search(r"\bno document\b", prediction, re.I) else "wrong"
    text = prediction.lower()
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
        stem = re.sub(r"\.\w+$", "", value.lower())
        return re.search(rf"(?<![\w-]){re.escape(stem)}(?![\w-])", text) is not None

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
    if "query_catalog" in path:
        return "catalog"
    if "query_table" in path and "retrieve" not in path:
        return "table"
    return "search"


def context_for(pipeline: str) -> Context:
    """The graph's settings for ``pipeline`` (no answer cache)."""
    return Context(collection=COLLECTION, answer_cache=False, tools=pipeline != "crag-text")


def prepare_collection(data_dir: Path) -> None:
    """Ingest the files (modified times fixed) into the benchmark's collection, once."""
    from crag.ingest import ingest
    from graph.factory import knowledge_base

    folder = data_dir / "files"
    if not folder.exists():
        folder.mkdir(parents=True)
        for name, path in FILES.items():
            shutil.copyfile(path, folder / name)
            stamp = dt.datetime.fromisoformat(MODIFIED[name] + "T12:00:00").timestamp()
            os.utime(folder / name, (stamp, stamp))
    report = ingest(knowledge_base(COLLECTION), [str(folder)])
    if report.failed:
        raise SystemExit(f"ingest failed: {report.failed}")


def answerer(job: dict[str, Any]) -> Callable[[str], None]:
    """A worker's answering function: the job's pipeline on one question id; its record."""
    pipeline, records = job["pipeline"], Path(job["records"])
    ctx = context_for(pipeline)
    by_id = {r["id"]: r for r in read_records(QUESTIONS)}
    done = done_ids(records)

    def answer(question_id: str) -> None:
        if question_id in done:
            return
        row = by_id[question_id]
        result, spent = ask("naive" if pipeline == "naive" else "crag", row["question"], ctx)
        record = {
            "id": row["id"],
            "question": row["question"],
            "tool": row["tool"],
            "type": row["type"],
            "prediction": result["prediction"],
            "gold": row["gold"],
            "verdict": judge(result["prediction"], row),
            "used": tool_of(result),
            "path": result["path"],
            "sql": [s.get("sql") for s in result["sources"] if s.get("sql")],
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
    types = sorted({r["type"] for r in records["crag"]})
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
        mine = [r for r in records["crag"] if r["tool"] == label]
        used = Counter(r["used"] for r in mine)
        routing.append({"label": label, "n": len(mine), **{t: used[t] for t in tools}})
    crag = records["crag"]
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
        f"Cost per question:\n\n{cost_table}"
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


def confidence_kind(record: dict[str, Any]) -> str:
    """What ``nodes.confidence.tool_confidence`` calls a record's answer ("" for the text's)."""
    return record["used"] if record.get("used") in ("table", "catalog") else ""


def fit(records_path: Path, target: Path) -> dict[str, Any]:
    """Count the graph's tool answers on the calibration split by kind; write ``target``.

    Only calibration records count (a test question's record is refused: the test split
    reports, it does not fit). An answer is right or not as ``judge`` said; "I don't know" is
    no answer.
    """
    split = {r["id"]: r["split"] for r in read_records(QUESTIONS)}
    records = read_records(records_path)
    tested = [r["id"] for r in records if split.get(r["id"]) != "calibration"]
    if tested:
        raise SystemExit(f"{len(tested)} records are not of the calibration split: {tested[:3]}")
    kinds: dict[str, dict[str, int]] = {}
    for r in records:
        kind = confidence_kind(r)
        if kind and r["verdict"] != "unknown":
            counted = kinds.setdefault(kind, {"answers": 0, "right": 0})
            counted["answers"] += 1
            counted["right"] += r["verdict"] == "right"
    made = {
        "kinds": dict(sorted(kinds.items())),
        "fitted_on": {"records": str(records_path), "questions": len(records)},
    }
    target.write_text(json.dumps(made, indent=2) + "\n", encoding="utf-8")
    return made


def main(argv: list[str] | None = None) -> int:
    """``build`` the questions, or ``run`` the pipelines on them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["build", "run", "fit"])
    parser.add_argument(
        "--squad", type=Path, default=ROOT.parent / "shared" / "data" / "squad-v1.1-dev.json.gz"
    )
    parser.add_argument("--out", type=Path, default=Path("out/tools"))
    parser.add_argument("--split", default="test", choices=["test", "calibration"])
    parser.add_argument("--per-template", type=int, default=0, help="0: every question")
    parser.add_argument("--templates", default="", help="only these (comma-separated)")
    parser.add_argument("--data", type=Path, default=Path("out/tools-data"), help="its store")
    parser.add_argument(
        "--pipelines", default=",".join(PIPELINES), help="some of " + ", ".join(PIPELINES)
    )
    parser.add_argument("--records", type=Path, help="fit: the calibration run's crag.jsonl")
    args = parser.parse_args(argv)
    if args.command == "fit":
        if args.records is None:
            parser.error("fit needs --records")
        print(json.dumps(fit(args.records, ROOT / "nodes" / "tool_confidence.json"), indent=2))
        return 0
    if args.command == "build":
        made = build(args.squad)
        QUESTIONS.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in made))
        print(
            f"{len(made)} questions: {dict(Counter(r['tool'] for r in made))}, "
            f"{dict(Counter(r['split'] for r in made))}; wrote {QUESTIONS}"
        )
        return 0
    chosen = [r for r in read_records(QUESTIONS) if r["split"] == args.split]
    if args.templates:
        chosen = [r for r in chosen if r["template"] in args.templates.split(",")]
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
    prepare_collection(data_dir)
    title = f"Tools: {len(chosen)} {args.split} questions"
    ids = [r["id"] for r in chosen]
    chosen_pipelines = tuple(p for p in args.pipelines.split(",") if p in PIPELINES)
    compare(
        "benchmarks.measurements.tools:answerer",
        {},
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
