"""The never-tuned set: public files no part of crag was built or tuned on, questions by code.

Built before the changes it judges, and only ever run (never read to choose a rule, a prompt
or a threshold). The collection (``benchmarks/data/unseen``, see its README for sources and
licences), 13 files:

- tables: ``gapminder.csv`` (long: 142 countries x 12 years, life expectancy in years,
  population, GDP per capita), ``life_expectancy_by_year.xlsx`` (the same life expectancy as
  a wide sheet, a column per year), ``stocks.csv`` (weekly dates, a column per company, prices
  relative to the first week), ``election.csv`` (58 districts named by number and name, votes
  per candidate), ``tips.xlsx`` (a restaurant's bills and tips in dollars, days as "Sun"),
  ``wind.csv`` (16 directions x strength bands, frequency in percent);
- prose: seven dataset descriptions, three of them HTML pages whose summary statistics are
  incidental tables (``wine_data.html``, ``breast_cancer.html``, ``iris.html``) and four
  reStructuredText files (``diabetes.rst``, ``california_housing.rst``, ``covtype.rst``,
  ``digits.rst``).

Each question carries its gold computed from the files, the tool that should answer it, and
its type (Meta CRAG's: ``simple``, ``condition``, ``aggregation``, ``comparison``, ``set``,
``post-processing``, ``multi-hop``, ``false premise``, plus ``collection`` and ``summary``).
Every question is ``test``: this set has no calibration split.
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
from benchmarks.measurements.tools_questions import numbered, q

UNSEEN = DATA / "unseen"
QUESTIONS = UNSEEN / "questions.jsonl"
FILES = {
    p.name: p for p in sorted(UNSEEN.iterdir()) if p.suffix in (".csv", ".xlsx", ".html", ".rst")
}
MODIFIED = {
    "gapminder.csv": "2024-05-02",
    "life_expectancy_by_year.xlsx": "2025-01-15",
    "stocks.csv": "2025-06-30",
    "election.csv": "2023-11-05",
    "tips.xlsx": "2025-09-12",
    "wind.csv": "2024-08-20",
    "wine_data.html": "2025-02-03",
    "breast_cancer.html": "2024-10-10",
    "iris.html": "2023-03-27",
    "diabetes.rst": "2025-04-18",
    "california_housing.rst": "2024-12-01",
    "covtype.rst": "2025-10-21",
    "digits.rst": "2022-06-14",
}
SEED = 2026


def _rows(name: str) -> list[dict[str, str]]:
    with FILES[name].open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _tips() -> list[dict[str, Any]]:
    import openpyxl

    sheet = openpyxl.load_workbook(FILES["tips.xlsx"], read_only=True).active
    assert sheet is not None
    rows = list(sheet.iter_rows(values_only=True))
    return [dict(zip([str(h) for h in rows[0]], r, strict=True)) for r in rows[1:]]


def _said(day: str) -> str:
    import datetime as dt

    d = dt.date.fromisoformat(day)
    return f"{d:%B} {d.day}, {d.year}"


def _gapminder(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = _rows("gapminder.csv")
    countries = sorted({r["country"] for r in data})
    continents = sorted({r["continent"] for r in data})
    years = sorted({r["year"] for r in data})
    at = {(r["country"], r["year"]): r for r in data}
    for c in rng.sample(countries, 8):
        y = rng.choice(years)
        yield q(
            "g-life",
            f"What was the life expectancy in {c} in {y}?",
            "table",
            "simple",
            "number",
            round(float(at[(c, y)]["lifeExp"]), 2),
        )
    for c in rng.sample(countries, 3):
        y = rng.choice(years)
        yield q(
            "g-pop",
            f"What was the population of {c} in {y}?",
            "table",
            "simple",
            "number",
            int(at[(c, y)]["pop"]),
        )
    for cont in rng.sample(continents[:4], 4):
        y = rng.choice(years)
        here = [r for r in data if r["continent"] == cont and r["year"] == y]
        cut = round(statistics.median(float(r["lifeExp"]) for r in here))
        yield q(
            "g-above",
            f"How many countries in {cont} had a life expectancy above {cut} years in {y}?",
            "table",
            "condition",
            "number",
            sum(float(r["lifeExp"]) > cut for r in here),
        )
    for cont in rng.sample(continents, 4):
        y = rng.choice(years)
        lives = [float(r["lifeExp"]) for r in data if r["continent"] == cont and r["year"] == y]
        yield q(
            "g-avg",
            f"What was the average life expectancy of the countries of {cont} in {y}?",
            "table",
            "aggregation",
            "number",
            round(statistics.mean(lives), 2),
        )
    for cont in rng.sample(continents, 2):
        y = rng.choice(years)
        yield q(
            "g-count",
            f"How many countries of {cont} are in the data for {y}?",
            "table",
            "aggregation",
            "number",
            sum(r["continent"] == cont and r["year"] == y for r in data),
        )
    for _ in range(4):
        a, b = rng.sample(countries, 2)
        y = rng.choice(years)
        richer = max((a, b), key=lambda c: float(at[(c, y)]["gdpPercap"]))
        yield q(
            "g-compare",
            f"Which had the higher GDP per capita in {y}: {a} or {b}?",
            "table",
            "comparison",
            "text",
            richer,
            universe=countries,
        )
    for cont in ("Asia", "Americas", "Europe"):
        y = rng.choice(years)
        here = sorted(
            (r for r in data if r["continent"] == cont and r["year"] == y),
            key=lambda r: -int(r["pop"]),
        )
        n = rng.choice((2, 3, 4))
        cut = (int(here[n - 1]["pop"]) + int(here[n]["pop"])) // 2
        millions = max(round(cut / 1e6), 1)
        members = [r["country"] for r in here if int(r["pop"]) > millions * 1e6]
        yield q(
            "g-set",
            f"Which countries in {cont} had a population of more than {millions} million in {y}?",
            "table",
            "set",
            "set",
            sorted(members),
            universe=countries,
        )
    for c in rng.sample(countries, 3):
        y1, y2 = sorted(rng.sample(years, 2))
        change = float(at[(c, y2)]["lifeExp"]) - float(at[(c, y1)]["lifeExp"])
        yield q(
            "g-change",
            f"By how many years did life expectancy in {c} change from {y1} to {y2}?",
            "table",
            "post-processing",
            "number",
            round(change, 2),
        )
    for cont in rng.sample(continents[:4], 2):
        y = rng.choice(years)
        here = sorted(
            (r for r in data if r["continent"] == cont and r["year"] == y),
            key=lambda r: -float(r["gdpPercap"]),
        )
        yield q(
            "g-second",
            f"Which country had the second highest GDP per capita in {cont} in {y}?",
            "table",
            "post-processing",
            "text",
            here[1]["country"],
            universe=countries,
        )
    for c in rng.sample(countries, 2):
        best = max(years, key=lambda y: float(at[(c, y)]["lifeExp"]))
        yield q(
            "g-best-year",
            f"In which year was the life expectancy in {c} the highest?",
            "table",
            "comparison",
            "text",
            best,
            universe=years,
        )
    for cont in ("Africa", "Europe"):
        y = "2007"
        top = max(
            (r for r in data if r["continent"] == cont and r["year"] == y),
            key=lambda r: int(r["pop"]),
        )
        yield q(
            "g-hop",
            f"What was the life expectancy in {y} of the most populous country of {cont} "
            f"that year?",
            "table",
            "multi-hop",
            "number",
            round(float(top["lifeExp"]), 2),
        )
    for c in rng.sample(countries, 2):
        yield q(
            "g-no-year",
            f"What was the life expectancy in {c} in 1960?",
            "table",
            "false premise",
            "premise",
            "no row for 1960 (the years are 1952, 1957, 1962, ...)",
        )
    yield q(
        "g-no-country",
        "What was the population of Atlantis in 2007?",
        "table",
        "false premise",
        "premise",
        "no country Atlantis",
    )


def _stocks(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = _rows("stocks.csv")
    names = ["GOOG", "AAPL", "AMZN", "FB", "NFLX", "MSFT"]
    for r in rng.sample(data, 4):
        s = rng.choice(names)
        yield q(
            "s-day",
            f"What was the value of {s} on {_said(r['date'])}?",
            "table",
            "simple",
            "number",
            round(float(r[s]), 4),
        )
    for y in ("2018", "2019"):
        s = rng.choice(names)
        kept = [float(r[s]) for r in data if r["date"].startswith(y)]
        yield q(
            "s-avg",
            f"What was the average value of {s} in {y}?",
            "table",
            "aggregation",
            "number",
            round(statistics.mean(kept), 4),
        )
        s = rng.choice(names)
        yield q(
            "s-max",
            f"What was the highest value of {s} in {y}?",
            "table",
            "aggregation",
            "number",
            round(max(float(r[s]) for r in data if r["date"].startswith(y)), 4),
        )
    for r in rng.sample(data, 3):
        a, b = rng.sample(names, 2)
        higher = a if float(r[a]) > float(r[b]) else b
        yield q(
            "s-compare",
            f"Which stock had the higher value on {_said(r['date'])}: {a} or {b}?",
            "table",
            "comparison",
            "text",
            higher,
            universe=names,
        )
    for s in rng.sample(names, 2):
        cut = 1.2
        yield q(
            "s-above",
            f"In how many weeks of 2019 was the value of {s} above {cut}?",
            "table",
            "condition",
            "number",
            sum(r["date"].startswith("2019") and float(r[s]) > cut for r in data),
        )
    for s in rng.sample(names, 2):
        r1, r2 = sorted(rng.sample(data, 2), key=lambda r: r["date"])
        yield q(
            "s-change",
            f"By how much did the value of {s} change from {_said(r1['date'])} to "
            f"{_said(r2['date'])}?",
            "table",
            "post-processing",
            "number",
            round(float(r2[s]) - float(r1[s]), 4),
        )
    best = max(data, key=lambda r: float(r["NFLX"]))
    yield q(
        "s-best-day",
        "On which date did NFLX reach its highest value?",
        "table",
        "comparison",
        "text",
        best["date"],
        universe=[r["date"] for r in data],
    )
    yield q(
        "s-no-column",
        "What was the value of TSLA on March 5, 2018?",
        "table",
        "false premise",
        "premise",
        "no TSLA column",
    )


def _district(name: str) -> str:
    """A district as a person names it: "101-Bois-de-Liesse" is "Bois-de-Liesse"."""
    return name.split("-", 1)[1]


def _election(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = _rows("election.csv")
    candidates = ["Coderre", "Bergeron", "Joly"]
    districts = [r["district"] for r in data]
    for r in rng.sample(data, 4):
        c = rng.choice(candidates)
        yield q(
            "el-votes",
            f"How many votes did {c} get in {_district(r['district'])}?",
            "table",
            "simple",
            "number",
            int(r[c]),
        )
    for c in candidates:
        yield q(
            "el-wins",
            f"How many districts did {c} win?",
            "table",
            "aggregation",
            "number",
            sum(r["winner"] == c for r in data),
        )
    yield q(
        "el-total",
        "How many votes did Bergeron get across all districts?",
        "table",
        "aggregation",
        "number",
        sum(int(r["Bergeron"]) for r in data),
    )
    yield q(
        "el-majority",
        "In how many districts was the winner elected by a majority?",
        "table",
        "condition",
        "number",
        sum(r["result"] == "majority" for r in data),
    )
    yield q(
        "el-big",
        "How many districts had more than 10000 votes in total?",
        "table",
        "condition",
        "number",
        sum(int(r["total"]) > 10000 for r in data),
    )
    for r in rng.sample(data, 3):
        a, b = rng.sample(candidates, 2)
        more = a if int(r[a]) > int(r[b]) else b
        yield q(
            "el-compare",
            f"Who got more votes in {_district(r['district'])}: {a} or {b}?",
            "table",
            "comparison",
            "text",
            more,
            universe=candidates,
        )
    for c in ("Bergeron", "Coderre"):
        won = sorted(
            _district(r["district"]) for r in data if r["winner"] == c and r["result"] == "majority"
        )
        yield q(
            "el-set",
            f"Which districts did {c} win with a majority?",
            "table",
            "set",
            "set",
            won,
            universe=[_district(d) for d in districts],
        )
    for r in rng.sample(data, 2):
        yield q(
            "el-margin",
            f"By how many votes did Joly's count differ from Coderre's in "
            f"{_district(r['district'])}?",
            "table",
            "post-processing",
            "number",
            abs(int(r["Joly"]) - int(r["Coderre"])),
        )
    top = max(data, key=lambda r: int(r["total"]))
    yield q(
        "el-top",
        "Which district had the most votes in total?",
        "table",
        "comparison",
        "text",
        _district(top["district"]),
        universe=[_district(d) for d in districts],
    )
    r = rng.choice(data)
    yield q(
        "el-no-candidate",
        f"How many votes did Trudeau get in {_district(r['district'])}?",
        "table",
        "false premise",
        "premise",
        "no candidate Trudeau",
    )


DAYS = {"Thur": "Thursday", "Fri": "Friday", "Sat": "Saturday", "Sun": "Sunday"}


def _tips_questions(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = _tips()
    for short in rng.sample(sorted(DAYS), 3):
        yield q(
            "t-avg-tip",
            f"What was the average tip on {DAYS[short]}?",
            "table",
            "aggregation",
            "number",
            round(statistics.mean(r["tip"] for r in data if r["day"] == short), 2),
        )
    for size in (1, 5):
        yield q(
            "t-size",
            f"How many parties of {size} were served?",
            "table",
            "aggregation",
            "number",
            sum(r["size"] == size for r in data),
        )
    for time in ("Lunch", "Dinner"):
        yield q(
            "t-big-bill",
            f"How many bills over $30 were paid at {time.lower()}?",
            "table",
            "condition",
            "number",
            sum(r["total_bill"] > 30 and r["time"] == time for r in data),
        )
    a, b = "Thur", "Fri"
    larger = max((a, b), key=lambda d: sum(r["total_bill"] for r in data if r["day"] == d))
    yield q(
        "t-compare",
        f"Which day had the larger total of bills: {DAYS[a]} or {DAYS[b]}?",
        "table",
        "comparison",
        "text",
        DAYS[larger],
        universe=list(DAYS.values()),
    )
    smoke = {s: statistics.mean(r["tip"] for r in data if r["smoker"] == s) for s in ("Yes", "No")}
    yield q(
        "t-smokers",
        "Who left the larger average tip: smokers or non-smokers?",
        "table",
        "comparison",
        "text",
        "non-smokers" if smoke["No"] > smoke["Yes"] else "smokers",
        universe=["smokers", "non-smokers"],
    )
    lunch_days = sorted(DAYS[d] for d in {r["day"] for r in data if r["time"] == "Lunch"})
    yield q(
        "t-set",
        "On which days was lunch served?",
        "table",
        "set",
        "set",
        lunch_days,
        universe=list(DAYS.values()),
    )
    by_time = {
        t: statistics.mean(r["tip"] for r in data if r["time"] == t) for t in ("Lunch", "Dinner")
    }
    yield q(
        "t-diff",
        "How much larger was the average tip at dinner than at lunch?",
        "table",
        "post-processing",
        "number",
        round(by_time["Dinner"] - by_time["Lunch"], 2),
    )
    yield q(
        "t-no-day",
        "What was the average tip on Monday?",
        "table",
        "false premise",
        "premise",
        "no Monday in the data",
    )


def _wind(rng: random.Random) -> Iterable[dict[str, Any]]:
    data = _rows("wind.csv")
    directions = list(dict.fromkeys(r["direction"] for r in data))
    for r in rng.sample(data, 2):
        yield q(
            "wi-value",
            f"What is the frequency of wind from {r['direction']} at strength {r['strength']}?",
            "table",
            "simple",
            "number",
            float(r["frequency"]),
        )
    for d in rng.sample(directions, 2):
        yield q(
            "wi-total",
            f"What is the total frequency of wind from {d} across all strengths?",
            "table",
            "aggregation",
            "number",
            round(sum(float(r["frequency"]) for r in data if r["direction"] == d), 2),
        )
    total = Counter[str]()
    for r in data:
        total[r["direction"]] += float(r["frequency"])  # type: ignore[assignment]
    a, b = "N", "S"
    yield q(
        "wi-compare",
        f"Which direction has the higher total frequency of wind: {a} or {b}?",
        "table",
        "comparison",
        "text",
        a if total[a] > total[b] else b,
        universe=directions,
    )
    strongest = max((r for r in data if r["strength"] == "6+"), key=lambda r: float(r["frequency"]))
    yield q(
        "wi-top",
        "Which direction has the highest frequency of wind at strength 6+?",
        "table",
        "comparison",
        "text",
        strongest["direction"],
        universe=directions,
    )


PROSE = {
    "wine_data.html": "wine recognition",
    "breast_cancer.html": "breast cancer Wisconsin (diagnostic)",
    "iris.html": "iris plants",
    "diabetes.rst": "diabetes",
    "california_housing.rst": "California housing",
    "digits.rst": "optical recognition of handwritten digits",
    "covtype.rst": "forest covertypes",
}
"""Each prose file's data set, as its own title names it."""
SHORT = {
    "wine_data.html": "wine",
    "breast_cancer.html": "breast cancer",
    "iris.html": "iris",
    "diabetes.rst": "diabetes",
    "california_housing.rst": "California housing",
    "digits.rst": "digits",
    "covtype.rst": "covertypes",
}
"""The name an answer that picks one of them must use (its title's core)."""


def _field(name: str, field: str) -> str:
    """A ``:Field: value`` line of the reStructuredText the file was made from."""
    text = FILES[name].read_text(encoding="utf-8")
    if name.endswith(".html"):
        found = re.search(
            rf"<dt>{re.escape(field)}<span[^>]*>:</span></dt>\s*<dd>(.*?)</dd>", text, re.S
        )
        return re.sub(r"<[^>]+>", "", found.group(1)).strip() if found else ""
    found = re.search(rf"^:{re.escape(field)}:\s*(.+)$", text, re.M)
    return found.group(1).strip() if found else ""


def _instances(name: str) -> int | None:
    text = _field(name, "Number of Instances") or _field(name, "Samples total")
    if not text:
        found = re.search(r"Samples total\s+(\d+)", FILES[name].read_text(encoding="utf-8"))
        text = found.group(1) if found else ""
    number = re.match(r"\d+", text)
    return int(number.group(0)) if number else None


def _prose(rng: random.Random) -> Iterable[dict[str, Any]]:
    sizes = {n: _instances(n) for n in PROSE}
    for name, title in PROSE.items():
        if sizes[name] is not None:
            yield q(
                "d-instances",
                f"How many instances does the {title} data set have?",
                "search",
                "simple",
                "number",
                sizes[name],
            )
    for name in ("wine_data.html", "breast_cancer.html", "digits.rst"):
        creator = _field(name, "Creator")
        yield q(
            "d-creator",
            f"Who created the {PROSE[name]} data set?",
            "search",
            "simple",
            "squad",
            [creator.split(",")[0].split("(")[0].strip()],
        )
    yield q(
        "d-wine-proline",
        "What is the maximum Proline value in the wine recognition data set?",
        "search",
        "simple",
        "number",
        1680,
    )
    yield q(
        "d-iris-petal",
        "What is the mean petal length in the iris plants data set?",
        "search",
        "simple",
        "number",
        3.76,
    )
    yield q(
        "d-housing-unit",
        "In what unit is the target of the California housing data set expressed?",
        "search",
        "simple",
        "squad",
        ["hundreds of thousands of dollars", "$100,000"],
    )
    yield q(
        "d-covtype-classes",
        "How many cover types does the forest covertypes data set have?",
        "search",
        "simple",
        "number",
        7,
    )
    pairs = [(a, b) for a in PROSE for b in PROSE if a < b and sizes[a] and sizes[b]]
    for a, b in rng.sample(pairs, 4):
        bigger = a if (sizes[a] or 0) > (sizes[b] or 0) else b
        yield q(
            "d-compare",
            f"Which data set has more instances: {PROSE[a]} or {PROSE[b]}?",
            "search",
            "comparison",
            "text",
            SHORT[bigger],
            universe=list(SHORT.values()),
        )
    yield q(
        "d-hop-donor",
        "How many instances does the data set donated by Nick Street have?",
        "search",
        "multi-hop",
        "number",
        sizes["breast_cancer.html"],
    )
    yield q(
        "d-hop-1998",
        "How many attributes does the data set dated July 1998 have?",
        "search",
        "multi-hop",
        "number",
        64,
    )
    gap = [r for r in _rows("gapminder.csv") if r["country"] == "Italy" and r["year"] == "2007"]
    yield q(
        "d-hop-italy",
        "What was the 2007 population of the country whose wines the wine recognition data "
        "set analyses?",
        "search",
        "multi-hop",
        "number",
        int(gap[0]["pop"]),
    )
    yield q(
        "d-no-dataset",
        "How many instances does the Titanic passengers data set have?",
        "search",
        "false premise",
        "premise",
        "no such data set in the collection",
    )
    yield q(
        "d-no-creator",
        "Why did R.A. Fisher create the diabetes data set?",
        "search",
        "false premise",
        "premise",
        "Fisher created the iris data set, not diabetes",
    )
    yield q(
        "d-no-missing",
        "How many missing attribute values does the wine recognition data set have?",
        "search",
        "false premise",
        "premise-or-none",
        0,
    )
    for name, words in (
        ("covtype.rst", ["forest", "cover"]),
        ("diabetes.rst", ["diabetes", "patients"]),
        ("wine_data.html", ["wine", "chemical"]),
        ("digits.rst", ["digits", "handwritten"]),
    ):
        yield q(
            "d-summary",
            f"Summarize {name}.",
            "document",
            "summary",
            "summary",
            words,
        )


def _collection() -> Iterable[dict[str, Any]]:
    names = sorted(FILES)
    newest = max(names, key=lambda n: MODIFIED[n])
    oldest = min(names, key=lambda n: MODIFIED[n])
    asked: list[tuple[str, str, Any]] = [
        (
            "c-xlsx",
            "Which of my files are Excel workbooks?",
            [n for n in names if n.endswith(".xlsx")],
        ),
        ("c-html", "Which of my files are HTML pages?", [n for n in names if n.endswith(".html")]),
        (
            "c-rst",
            "How many reStructuredText files do I have?",
            sum(n.endswith(".rst") for n in names),
        ),
        (
            "c-sheets",
            "How many spreadsheets are in my collection?",
            sum(n.endswith((".csv", ".xlsx")) for n in names),
        ),
        ("c-newest", "Which file was modified most recently?", [newest]),
        ("c-oldest", "Which is my oldest file?", [oldest]),
        (
            "c-2024",
            "Which files were modified in 2024?",
            [n for n in names if MODIFIED[n].startswith("2024")],
        ),
        ("c-topic-wine", "Which documents are about wine?", ["wine_data.html"]),
        ("c-topic-vote", "Which files are about an election?", ["election.csv"]),
    ]
    for template, question, gold in asked:
        kind = "number" if isinstance(gold, int) else "set"
        yield q(template, question, "catalog", "collection", kind, gold, universe=names)


def build() -> list[dict[str, Any]]:
    """Every question, with an id; all of them ``test``."""
    rng = random.Random(SEED)
    made = [
        *_gapminder(rng),
        *_stocks(rng),
        *_election(rng),
        *_tips_questions(rng),
        *_wind(rng),
        *_prose(rng),
        *_collection(),
    ]
    return numbered(made, "test")


def files() -> dict[str, Path]:
    """The collection's files by name."""
    return dict(FILES)


__all__ = ["FILES", "MODIFIED", "QUESTIONS", "build", "files"]
