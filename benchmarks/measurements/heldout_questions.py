"""The held-out set: public files nobody on the project had used, questions by code.

Built on 2026-12-05, before the change it judges, and only ever run (never read to choose a
rule, a prompt or a threshold). The collection (``benchmarks/data/heldout``, see its README
for sources and licences), 8 files:

- tables: ``statecrime.csv`` (a row per US state and DC, 2009: violent crime and murder
  rates per 100,000, high school graduates, poverty, single-parent households, white and
  urban population in percent; three state names carry a trailing space as shipped),
  ``grunfeld.csv`` (long: 11 US firms x 20 years, 1935-1954, gross investment, market value
  and capital stock), ``elnino.xlsx`` (a workbook, a row per year 1950-2010 and a column per
  month, ``JAN`` … ``DEC``: the Pacific's sea surface temperature in degrees Celsius),
  ``burtin.csv`` (16 bacteria: the minimum inhibitory concentration of penicillin,
  streptomycin and neomycin, Gram staining, genus);
- prose: three scikit-learn data set descriptions, ``rcv1.rst`` and
  ``species_distributions.rst`` as they ship and ``lfw.html`` rendered to HTML (its
  characteristics an incidental table), and ``statecrime.md``, statsmodels' description of
  the state crime table (title, source, variable definitions): notes beside a table.

Each question carries its gold computed from the files (a prose fact is checked to be in its
file), the tool that should answer it, and its type (Meta CRAG's: ``simple``, ``condition``,
``aggregation``, ``comparison``, ``set``, ``post-processing``, ``false premise``, plus
``collection`` and ``summary``). Every question is ``test``: this set has no calibration
split.

Run ``python -m benchmarks.measurements.heldout_questions`` to rewrite ``questions.jsonl``
and print its summary.
"""

from __future__ import annotations

import csv
import random
import re
import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks import DATA
from benchmarks.measurements.tools_questions import named, numbered, q
from crag.eval.records import write_records

HELDOUT = DATA / "heldout"
QUESTIONS = HELDOUT / "questions.jsonl"
FILES = {
    p.name: p
    for p in sorted(HELDOUT.iterdir())
    if p.suffix in (".csv", ".xlsx", ".html", ".rst", ".md") and p.stem != "README"
}
"""The collection's files (the README is about the set, not in it)."""
MODIFIED = {
    "statecrime.csv": "2024-09-17",
    "statecrime.md": "2024-09-18",
    "grunfeld.csv": "2023-05-08",
    "elnino.xlsx": "2025-07-22",
    "burtin.csv": "2022-11-30",
    "rcv1.rst": "2025-02-11",
    "lfw.html": "2024-03-05",
    "species_distributions.rst": "2023-10-14",
}
SEED = 1205
MONTHS = {
    "JAN": "January",
    "FEB": "February",
    "MAR": "March",
    "APR": "April",
    "MAY": "May",
    "JUN": "June",
    "JUL": "July",
    "AUG": "August",
    "SEP": "September",
    "OCT": "October",
    "NOV": "November",
    "DEC": "December",
}


def _rows(name: str) -> list[dict[str, str]]:
    with FILES[name].open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _sheet(name: str) -> list[dict[str, Any]]:
    import openpyxl

    sheet = openpyxl.load_workbook(FILES[name], read_only=True).active
    assert sheet is not None
    rows = list(sheet.iter_rows(values_only=True))
    return [dict(zip([str(h) for h in rows[0]], r, strict=True)) for r in rows[1:]]


def _pool(values: Iterable[str], *said: str) -> list[str]:
    """A name's other values an answer must not name: none of them inside the gold's words.

    ("Virginia" is left out where the gold is "West Virginia", which names it.)
    """
    return [v for v in values if v in said or not any(named(v, s) for s in said)]


def _cut(values: list[float], rank: int, smallest: bool = False) -> float:
    """A round threshold between the ``rank``-th and the next largest (or smallest) value."""
    ordered = sorted(values, reverse=not smallest)
    hi, lo = sorted((ordered[rank - 1], ordered[rank]), reverse=True)
    assert hi > lo, (hi, lo)
    for step in (10.0, 5.0, 1.0, 0.5, 0.1):
        cut = round((hi + lo) / 2 / step) * step
        if lo < cut < hi:
            return round(cut, 1)
    return round((hi + lo) / 2, 2)


def _number(value: float) -> str:
    """A threshold as a person writes it (``15``, not ``15.0``)."""
    return f"{value:g}"


CRIME = {
    "violent": "violent crime rate",
    "murder": "murder rate",
    "poverty": "poverty rate",
    "hs_grad": "high school graduation rate",
}


def _statecrime(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = [r | {"state": r["state"].strip()} for r in _rows("statecrime.csv")]
    states = [r["state"] for r in data if r["state"] != "District of Columbia"]
    at = {r["state"]: r for r in data}
    for s, col in zip(rng.sample(states, 3), rng.sample(sorted(CRIME), 3), strict=True):
        yield q(
            "sc-value",
            f"What was the {CRIME[col]} in {s}?",
            "table",
            "simple",
            "number",
            float(at[s][col]),
        )
    poverty = [float(r["poverty"]) for r in data]
    cut = _cut(poverty, rng.choice((5, 6, 7)), smallest=True)
    assert float(at["District of Columbia"]["poverty"]) > cut  # "states": DC is not counted
    yield q(
        "sc-poverty",
        f"How many states had a poverty rate below {_number(cut)} percent?",
        "table",
        "condition",
        "number",
        sum(p < cut for p in poverty),
    )
    grads = sorted(data, key=lambda r: float(r["hs_grad"]))
    assert grads[0]["hs_grad"] != grads[1]["hs_grad"] and grads[0]["state"] in states
    yield q(
        "sc-lowest",
        "What was the lowest high school graduation rate of any state?",
        "table",
        "aggregation",
        "number",
        float(grads[0]["hs_grad"]),
    )
    a, b = rng.sample(states, 2)
    assert at[a]["violent"] != at[b]["violent"]
    higher = max((a, b), key=lambda s: float(at[s]["violent"]))
    yield q(
        "sc-compare",
        f"Which state had the higher violent crime rate: {a} or {b}?",
        "table",
        "comparison",
        "text",
        higher,
        universe=_pool(states, higher),
    )
    urban = sorted(data, key=lambda r: float(r["urban"]))
    n = rng.choice((3, 4))
    low = float(urban[n - 1]["urban"])
    cut = next(c for c in range(int(low) + 1, 101) if c < float(urban[n]["urban"]))
    members = sorted(r["state"] for r in data if float(r["urban"]) < cut)
    assert len(members) == n
    yield q(
        "sc-set",
        f"In which states did less than {cut} percent of the population live in urban areas?",
        "table",
        "set",
        "set",
        members,
        universe=_pool(states, *members),
    )
    a, b = sorted(rng.sample(states, 2), key=lambda s: -float(at[s]["murder"]))
    assert float(at[a]["murder"]) > float(at[b]["murder"])
    yield q(
        "sc-diff",
        f"How much higher was the murder rate in {a} than in {b}?",
        "table",
        "post-processing",
        "number",
        round(float(at[a]["murder"]) - float(at[b]["murder"]), 2),
    )
    yield q(
        "sc-no-state",
        "What was the murder rate in Puerto Rico?",
        "table",
        "false premise",
        "premise",
        "no Puerto Rico row (the 50 states and DC)",
    )


def _grunfeld(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = _rows("grunfeld.csv")
    firms = sorted({r["firm"] for r in data})
    years = sorted({r["year"] for r in data})
    at = {(r["firm"], r["year"]): r for r in data}
    for f in rng.sample(firms, 2):
        y = rng.choice(years)
        yield q(
            "gr-invest",
            f"How much did {f} invest in {y}?",
            "table",
            "simple",
            "number",
            float(at[(f, y)]["invest"]),
        )
    f, y = rng.choice(firms), rng.choice(years)
    yield q(
        "gr-value",
        f"What was the market value of {f} in {y}?",
        "table",
        "simple",
        "number",
        float(at[(f, y)]["value"]),
    )
    f = rng.choice(firms)
    yield q(
        "gr-total",
        f"What was the total investment of {f} from {years[0]} to {years[-1]}?",
        "table",
        "aggregation",
        "number",
        round(sum(float(at[(f, y)]["invest"]) for y in years), 2),
    )
    f = rng.choice(firms)
    invest = [float(at[(f, y)]["invest"]) for y in years]
    cut = _cut(invest, rng.choice(range(6, 14)))
    yield q(
        "gr-years",
        f"In how many years did {f} invest more than {_number(cut)}?",
        "table",
        "condition",
        "number",
        sum(v > cut for v in invest),
    )
    a, b = rng.sample(firms, 2)
    y = rng.choice(years)
    assert at[(a, y)]["invest"] != at[(b, y)]["invest"]
    more = max((a, b), key=lambda c: float(at[(c, y)]["invest"]))
    yield q(
        "gr-compare",
        f"Which firm invested more in {y}: {a} or {b}?",
        "table",
        "comparison",
        "text",
        more,
        universe=_pool(firms, more),
    )
    f = rng.choice(firms)
    y1, y2 = sorted(rng.sample(years, 2), key=lambda y: float(at[(f, y)]["invest"]))
    yield q(
        "gr-more",
        f"How much more did {f} invest in {y2} than in {y1}?",
        "table",
        "post-processing",
        "number",
        round(float(at[(f, y2)]["invest"]) - float(at[(f, y1)]["invest"]), 2),
    )


def _elnino(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = _sheet("elnino.xlsx")
    at = {str(r["YEAR"]): r for r in data}
    years = sorted(at)
    for y in rng.sample(years, 2):
        m = rng.choice(sorted(MONTHS))
        yield q(
            "en-temp",
            f"What was the sea surface temperature in {MONTHS[m]} {y}?",
            "table",
            "simple",
            "number",
            float(at[y][m]),
        )
    y = rng.choice(years)
    yield q(
        "en-avg",
        f"What was the average sea surface temperature in {y}?",
        "table",
        "aggregation",
        "number",
        round(statistics.mean(float(at[y][m]) for m in MONTHS), 2),
    )
    a, b = rng.sample(years, 2)
    m = rng.choice(sorted(MONTHS))
    assert at[a][m] != at[b][m]
    warmer = max((a, b), key=lambda y: float(at[y][m]))
    yield q(
        "en-compare",
        f"Which year had the warmer {MONTHS[m]}: {a} or {b}?",
        "table",
        "comparison",
        "text",
        warmer,
        universe=years,
    )
    december = [float(at[y]["DEC"]) for y in years]
    cut = _cut(december, rng.choice((2, 3)))
    members = sorted(y for y in years if float(at[y]["DEC"]) > cut)
    yield q(
        "en-set",
        f"In which years was the December sea surface temperature above {_number(cut)} degrees?",
        "table",
        "set",
        "set",
        members,
        universe=years,
    )
    m = rng.choice(sorted(MONTHS))
    y1, y2 = sorted(rng.sample(years, 2), key=lambda y: float(at[y][m]))
    assert float(at[y2][m]) > float(at[y1][m])
    yield q(
        "en-diff",
        f"How much warmer was {MONTHS[m]} {y2} than {MONTHS[m]} {y1}?",
        "table",
        "post-processing",
        "number",
        round(float(at[y2][m]) - float(at[y1][m]), 3),
    )
    assert "2015" not in at
    yield q(
        "en-no-year",
        "What was the sea surface temperature in March 2015?",
        "table",
        "false premise",
        "premise",
        f"no row for 2015 (the years are {years[0]}-{years[-1]})",
    )


DRUGS = ("Penicillin", "Streptomycin", "Neomycin")


def _burtin(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = _rows("burtin.csv")
    bacteria = [r["Bacteria"] for r in data]
    at = {r["Bacteria"]: r for r in data}
    plain = [b for b in bacteria if "(" not in b]
    for d in rng.sample(DRUGS, 2):
        b = rng.choice([b for b in plain if float(at[b][d]) >= 1])
        yield q(
            "bu-value",
            f"What is the {d.lower()} value for {b}?",
            "table",
            "simple",
            "number",
            float(at[b][d]),
        )
    negative = [r for r in data if r["Gram_Staining"] == "negative"]
    cut = 500
    assert all(float(r["Penicillin"]) != cut for r in negative)
    yield q(
        "bu-negative",
        f"How many gram-negative bacteria have a penicillin value above {cut}?",
        "table",
        "condition",
        "number",
        sum(float(r["Penicillin"]) > cut for r in negative),
    )
    d = rng.choice(DRUGS)
    a, b = rng.sample([x for x in plain if float(at[x][d]) >= 0.1], 2)
    while at[a][d] == at[b][d]:
        a, b = rng.sample([x for x in plain if float(at[x][d]) >= 0.1], 2)
    higher = max((a, b), key=lambda x: float(at[x][d]))
    yield q(
        "bu-compare",
        f"Which has the higher {d.lower()} value: {a} or {b}?",
        "table",
        "comparison",
        "text",
        higher,
        universe=_pool(bacteria, higher),
    )
    members = sorted(r["Bacteria"] for r in data if float(r["Neomycin"]) >= 10)
    assert 2 <= len(members) <= 4
    yield q(
        "bu-set",
        "Which bacteria have a neomycin value of 10 or more?",
        "table",
        "set",
        "set",
        members,
        universe=_pool(bacteria, *members),
    )


def _text(name: str) -> str:
    text = FILES[name].read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text) if name.endswith(".html") else text)


def _found(name: str, pattern: str) -> str:
    """The first group of ``pattern`` in a prose file's text (tags dropped, spaces joined)."""
    found = re.search(pattern, _text(name))
    assert found, (name, pattern)
    return found.group(1)


def _stated(name: str, *spans: str) -> list[str]:
    """Accepted answers, each checked to be in the file as written."""
    for span in spans:
        assert span.lower() in _text(name).lower(), (name, span)
    return list(spans)


def _prose(rng: random.Random) -> Iterable[dict[str, Any]]:
    sizes = {
        "RCV1": int(_found("rcv1.rst", r"Samples total (\d+)")),
        "Labeled Faces in the Wild": int(_found("lfw.html", r"Samples total (\d+)")),
        "statewide crime": int(_found("statecrime.md", r"Number of observations: (\d+)")),
    }
    yield q(
        "d-rcv1-samples",
        "How many samples does the RCV1 dataset have?",
        "search",
        "simple",
        "number",
        sizes["RCV1"],
    )
    yield q(
        "d-rcv1-train",
        "How many samples are in the RCV1 training set?",
        "search",
        "simple",
        "number",
        int(_found("rcv1.rst", r"The first (\d+) samples are the training set")),
    )
    yield q(
        "d-lfw-classes",
        "How many classes does the Labeled Faces in the Wild dataset have?",
        "search",
        "simple",
        "number",
        int(_found("lfw.html", r"Classes (\d+)")),
    )
    yield q(
        "d-lfw-detector",
        "Which face detector were the LFW faces extracted with?",
        "search",
        "simple",
        "squad",
        _stated("lfw.html", "Viola-Jones"),
    )
    yield q(
        "d-species-sloth",
        "What is the common name of Bradypus variegatus?",
        "search",
        "simple",
        "squad",
        _stated("species_distributions.rst", "Brown-throated Sloth"),
    )
    yield q(
        "d-species-rodent",
        "Which species in the species distribution dataset is a rodent?",
        "search",
        "simple",
        "squad",
        _stated("species_distributions.rst", "Microryzomys minutus", "Forest Small Rice Rat"),
    )
    yield q(
        "d-species-who",
        "Who provided the species distribution dataset?",
        "search",
        "simple",
        "squad",
        _stated("species_distributions.rst", "Phillips"),
    )
    yield q(
        "d-crime-source",
        "Where was the statewide crime data for 2009 obtained from?",
        "search",
        "simple",
        "squad",
        _stated("statecrime.md", "American Statistical Abstracts", "American Statistical Abstract"),
    )
    yield q(
        "d-crime-urban",
        "How many people must an urbanized area have in the state crime data's definition?",
        "search",
        "simple",
        "number",
        int(_found("statecrime.md", r"area of ([\d,]+) or more people").replace(",", "")),
    )
    names = list(sizes)
    pairs = [
        ("RCV1", "Labeled Faces in the Wild"),
        ("statewide crime", "Labeled Faces in the Wild"),
    ]
    for pair in pairs:
        a, b = rng.sample(pair, 2)
        bigger = max((a, b), key=lambda n: sizes[n])
        said = {n: n if n != "statewide crime" else "the statewide crime data" for n in (a, b)}
        yield q(
            "d-compare",
            f"Which dataset has more samples: {said[a]} or {said[b]}?",
            "search",
            "comparison",
            "text",
            bigger,
            universe=names,
        )
    assert int(_found("rcv1.rst", r"There are (\d+) topics")) != 200
    yield q(
        "d-no-categories",
        "Why does the RCV1 dataset have 200 categories?",
        "search",
        "false premise",
        "premise",
        "RCV1 has 103 categories, not 200",
    )
    for name, words in (
        ("rcv1.rst", ["reuters", "news"]),
        ("species_distributions.rst", ["species", "distribution"]),
    ):
        for w in words:
            assert w in _text(name).lower(), (name, w)
        yield q("d-summary", f"Summarize {name}.", "document", "summary", "summary", words)


def _collection() -> Iterable[dict[str, Any]]:
    names = sorted(FILES)
    newest = max(names, key=lambda n: MODIFIED[n])
    assert sum(MODIFIED[n] == MODIFIED[newest] for n in names) == 1
    asked: list[tuple[str, str, Any]] = [
        (
            "c-xlsx",
            "Which of my files are Excel workbooks?",
            [n for n in names if n.endswith(".xlsx")],
        ),
        ("c-csv", "How many CSV files do I have?", sum(n.endswith(".csv") for n in names)),
        ("c-newest", "Which file was changed most recently?", [newest]),
    ]
    for template, question, gold in asked:
        kind = "number" if isinstance(gold, int) else "set"
        yield q(template, question, "catalog", "collection", kind, gold, universe=names)


def build() -> list[dict[str, Any]]:
    """Every question, with an id; all of them ``test``."""
    assert set(FILES) == set(MODIFIED), sorted(set(FILES) ^ set(MODIFIED))
    rng = random.Random(SEED)
    made = [
        *_statecrime(rng),
        *_grunfeld(rng),
        *_elnino(rng),
        *_burtin(rng),
        *_prose(rng),
        *_collection(),
    ]
    return numbered(made, "test")


def summary(rows: list[dict[str, Any]]) -> str:
    """Counts per type and per tool, after the checks every set must pass."""
    asked = [r["question"] for r in rows]
    assert len(set(asked)) == len(asked), "a question asked twice"
    empty = [r["id"] for r in rows if r["gold"] in (None, "", [], {})]
    assert not empty, empty
    lines = [f"{len(rows)} questions over {len(FILES)} files, no duplicate, no empty gold"]
    lines += [f"  type {k}: {n}" for k, n in sorted(Counter(r["type"] for r in rows).items())]
    lines += [f"  tool {k}: {n}" for k, n in sorted(Counter(r["tool"] for r in rows).items())]
    return "\n".join(lines)


def files() -> dict[str, Path]:
    """The collection's files by name."""
    return dict(FILES)


def main() -> None:
    """Write ``questions.jsonl`` and print its summary (not the questions)."""
    rows = build()
    text = summary(rows)
    write_records(QUESTIONS, rows)
    print(f"wrote {QUESTIONS}")
    print(text)


__all__ = ["FILES", "MODIFIED", "QUESTIONS", "build", "files"]


if __name__ == "__main__":
    main()
