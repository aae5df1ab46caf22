"""The tools benchmark's collection and questions, built from public tables and SQuAD.

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
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import json
import random
import re
import statistics
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchmarks import DATA, ROOT

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


def plain(text: str) -> str:
    """``text`` in lower case without its accents, as ``tools.judge`` compares names."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def named(value: str, text: str) -> bool:
    """Whether ``value`` is a word of ``text``, as ``tools.judge`` looks for a name.

    In any case, with or without accents, a file's name without its extension.
    """
    stem = re.sub(r"\.\w+$", "", plain(value))
    return re.search(rf"(?<![\w-]){re.escape(stem)}(?![\w-])", plain(text)) is not None


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


def numbered(made: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """Each question with its id (its template and its number in it) and ``split``."""
    seen: Counter[str] = Counter()
    out = []
    for row in made:
        seen[row["template"]] += 1
        out.append(row | {"id": f"{row['template']}-{seen[row['template']]:02d}", "split": split})
    return out


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
