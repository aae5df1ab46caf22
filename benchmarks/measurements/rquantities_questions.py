"""A calibration set of table questions whose quantity sits where a small model looks last.

The table answers' confidence is fitted on answers that are sometimes wrong; this set is made
for a small text-to-SQL model to get about a quarter of them wrong, by asking as users ask.
Its seven tables (``benchmarks/data/rquantities``, see its README) are panels of the US states
by year that share their keys and hold different quantities: cigarette prices and sales
1963-1992 (``cigar.csv``, states by a number, two-digit years), cigarette prices and taxes
1985-1995 (``cigarette.csv``, states by postal code), state production and employment
1970-1986 (``produc.csv``, states in capitals with underscores), traffic deaths and drinking
laws 1982-1988 (``fatality.csv``, states by FIPS code), the Democratic share of the
presidential vote 1932-2012 (``presidential_elections.csv``, states by name), and the two
tables that name the codes (``state_abbreviations.csv``, ``cigar_state_codes.csv``).

The questions (``build``, golds computed from the files by a fixed seed) are of six kinds,
each a template prefix: ``rq-other`` (a quantity asked in words that point to another table:
a tax on beer beside the cigarette taxes, per-capita personal income beside total personal
income, the unemployment rate of a year only one table holds), ``rq-unit`` (a unit or scale
the table does not hold: millions of people from thousands, deaths per 100,000 from per
10,000, dollars from cents, total packs from packs per person), ``rq-cond`` (two or three
conditions), ``rq-agg`` (counts, averages, sums, highs and lows under a condition),
``rq-cmp`` (which of two, and changes or differences) and ``rq-premise`` (a state or year no
table holds). A number's gold is never within the judge's 1% of a number the question says
or of a year an answer may name; a name's gold names no other value it could be confused with.

Every question is ``calibration``: the set is for fitting and choosing, never for reporting.
"""

from __future__ import annotations

import csv
import random
import re
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from benchmarks import DATA
from benchmarks.measurements.rtables_questions import cell
from benchmarks.measurements.tools_questions import numbered, q

RQUANTITIES = DATA / "rquantities"
QUESTIONS = RQUANTITIES / "questions.jsonl"
FILES = {p.name: p for p in sorted(RQUANTITIES.iterdir()) if p.suffix in (".csv", ".xlsx")}
MODIFIED = {name: f"2025-1{i % 3}-0{1 + i % 9}" for i, name in enumerate(sorted(FILES))}
SEED = 23

Row = dict[str, Any]
Key = tuple[str, int]


def load(name: str) -> list[Row]:
    """A file's rows, cells as numbers where they are numbers (an empty cell: None)."""
    with FILES[name].open(encoding="utf-8", newline="") as fh:
        return [{k: cell(v) for k, v in r.items()} for r in csv.DictReader(fh)]


@dataclass(frozen=True)
class Panels:
    """Each panel's rows by (the state's name, the four-digit year)."""

    cigar: dict[Key, Row]
    cigarette: dict[Key, Row]
    produc: dict[Key, Row]
    fatality: dict[Key, Row]
    votes: dict[Key, Row]
    produc_said: dict[str, str]
    """A state's name as ``produc.csv`` writes it (``NEW_YORK``, ``TENNESSE``)."""

    @staticmethod
    def states(panel: dict[Key, Row]) -> list[str]:
        """The states a panel holds, by name (not DC, not a national total)."""
        return sorted({s for s, _ in panel} - NOT_STATES)

    @staticmethod
    def years(panel: dict[Key, Row]) -> list[int]:
        """The years a panel holds."""
        return sorted({y for _, y in panel})


def panels() -> Panels:
    """The five panels, each state by its name whatever code its file uses."""
    codes = load("state_abbreviations.csv")
    by_fips = {int(r["ANSI.digits"]): r["Name"] for r in codes if r["ANSI.digits"] is not None}
    by_usps = {r["USPS"]: r["Name"] for r in codes if r["USPS"]}
    numbered_as = {int(r["state"]): r["name"] for r in load("cigar_state_codes.csv")}
    names = [str(r["Name"]) for r in codes if str(r["Status"]).startswith("State")]
    capitals = {n.upper().replace(" ", "_"): n for n in names}

    def capital(said: str) -> str:  # TENNESSE: the one name that begins so
        if said in capitals:
            return capitals[said]
        (name,) = [n for c, n in capitals.items() if c.startswith(said)]
        return name

    produc = {(capital(r["state"]), int(r["year"])): r for r in load("produc.csv")}
    return Panels(
        cigar={(numbered_as[int(r["state"])], 1900 + int(r["year"])): r for r in load("cigar.csv")},
        cigarette={(by_usps[r["state"]], int(r["year"])): r for r in load("cigarette.csv")},
        produc=produc,
        fatality={(by_fips[int(r["state"])], int(r["year"])): r for r in load("fatality.csv")},
        votes={(r["state"], int(r["year"])): r for r in load("presidential_elections.csv")},
        produc_said={s: r["state"] for (s, _), r in produc.items()},
    )


NOT_STATES = {"District of Columbia", "DC", "Total"}
"""Rows some panels hold beside the states: a question never picks them."""
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
YEARS = range(1930, 2016)


def _r(x: float) -> float | int:
    """A gold as a reader would write it: a whole number as one, else to 2 decimals (4 below 1)."""
    if float(x).is_integer():
        return int(x)
    return round(float(x), 2 if abs(x) >= 1 else 4)


def _clear(gold: float, question: str) -> bool:
    """No number the question says, nor a year an answer may name, is within 1% of the gold."""
    said = [float(n.replace(",", "")) for n in NUMBER.findall(question)] + list(YEARS)
    return all(abs(s - gold) > max(0.01 * abs(gold), 0.01) for s in said)


def _apart(gold: str, universe: Iterable[str]) -> bool:
    """Naming the gold names no other value (``West Virginia`` names ``Virginia``)."""
    return not any(
        re.search(rf"(?<![\w-]){re.escape(o.lower())}(?![\w-])", gold.lower())
        for o in universe
        if o != gold
    )


def _number(template: str, question: str, kind: str, gold: float) -> dict[str, Any] | None:
    said = _r(gold)
    return q(template, question, "table", kind, "number", said) if _clear(said, question) else None


def _name(
    template: str, question: str, kind: str, gold: str, universe: list[str]
) -> dict[str, Any] | None:
    if not _apart(gold, universe):
        return None
    return q(template, question, "table", kind, "text", gold, universe=universe)


def _made(n: int, rng: random.Random, make: Callable[[random.Random], Any]) -> list[dict[str, Any]]:
    """``n`` different questions from ``make`` (None: that draw gave no fair question).

    Two questions whose gold is a name or a set also differ in their gold.
    """
    out: list[dict[str, Any]] = []
    for _ in range(2000):
        row = make(rng)
        if row is not None and all(
            row["question"] != r["question"]
            and (row["gold"] != r["gold"] or row["gold_kind"] == "number")
            for r in out
        ):
            out.append(row)
            if len(out) == n:
                return out
    raise AssertionError(f"too few fair questions from {make.__name__}")


def _pick(rng: random.Random, panel: dict[Key, Row], years: Iterable[int]) -> tuple[str, int]:
    """A state and a year the panel holds, the year among ``years``."""
    return rng.choice(sorted(k for k in panel if k[1] in set(years) and k[0] not in NOT_STATES))


def _other(p: Panels, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Look-ups whose quantity is in another table than the question's words point to."""

    def unemp70s(rng: random.Random) -> Any:
        s, y = _pick(rng, p.produc, range(1970, 1982))
        said = f"What was the unemployment rate in {s} in {y}, in percent?"
        return _number("rq-other-unemp", said, "simple", p.produc[s, y]["unemp"])

    def unemp87(rng: random.Random) -> Any:
        s, y = _pick(rng, p.fatality, (1987, 1988))
        said = f"What was the unemployment rate in {s} in {y}?"
        return _number("rq-other-unemp", said, "simple", p.fatality[s, y]["unrate"])

    def income(rng: random.Random) -> Any:
        s, y = _pick(rng, p.fatality, range(1982, 1989))
        said = f"What was the per capita personal income in {s} in {y}, in dollars?"
        return _number("rq-other-income", said, "simple", p.fatality[s, y]["perinc"])

    def disposable(rng: random.Random) -> Any:
        s, y = _pick(rng, p.cigar, range(1963, 1993))
        said = f"What was the per capita disposable income in {s} in {y}?"
        return _number("rq-other-income", said, "simple", p.cigar[s, y]["ndi"])

    def beer(rng: random.Random) -> Any:
        s, y = _pick(rng, p.fatality, range(1982, 1989))
        said = f"How much was the tax on a case of beer in {s} in {y}, in dollars?"
        return _number("rq-other-beertax", said, "simple", p.fatality[s, y]["beertax"])

    def drinking(rng: random.Random) -> Any:
        s, y = _pick(rng, p.fatality, range(1982, 1989))
        age = p.fatality[s, y]["mlda"]
        said = f"What was the minimum legal drinking age in {s} in {y}?"
        return _number("rq-other-mlda", said, "simple", age) if age == int(age) else None

    def over16(rng: random.Random) -> Any:
        s, y = _pick(rng, p.cigar, range(1963, 1993))
        said = f"How many thousand people over the age of 16 lived in {s} in {y}?"
        return _number("rq-other-pop16", said, "simple", p.cigar[s, y]["pop16"])

    def population(rng: random.Random) -> Any:
        s, y = _pick(rng, p.cigarette, range(1993, 1996))
        said = f"What was the population of {s} in {y}?"
        return _number("rq-other-pop", said, "simple", p.cigarette[s, y]["pop"])

    def neighbours(rng: random.Random) -> Any:
        s, y = _pick(rng, p.cigar, range(1963, 1993))
        said = (
            f"What was the lowest price of a pack of cigarettes in the states next to {s} "
            f"in {y}, in cents?"
        )
        return _number("rq-other-pimin", said, "simple", p.cigar[s, y]["pimin"])

    def miles(rng: random.Random) -> Any:
        s, y = _pick(rng, p.fatality, range(1982, 1989))
        said = f"How many thousand miles did the average driver in {s} drive in {y}?"
        return _number("rq-other-vmiles", said, "simple", p.fatality[s, y]["vmiles"])

    for make, n in (
        (unemp70s, 2),
        (unemp87, 2),
        (income, 2),
        (disposable, 1),
        (beer, 2),
        (drinking, 1),
        (over16, 1),
        (population, 1),
        (neighbours, 1),
        (miles, 1),
    ):
        yield from _made(n, rng, make)


def _unit(p: Panels, rng: random.Random) -> Iterable[dict[str, Any]]:
    """A unit or scale the table does not hold: the answer converts what it finds."""

    def millions(rng: random.Random) -> Any:
        s, y = _pick(rng, p.cigar, range(1963, 1985))
        said = f"What was the population of {s} in {y}, in millions?"
        return _number("rq-unit-pop", said, "post-processing", p.cigar[s, y]["pop"] / 1000)

    def deaths(rng: random.Random) -> Any:
        s, y = _pick(rng, p.fatality, range(1982, 1989))
        said = f"How many traffic deaths per 100,000 people were there in {s} in {y}?"
        return _number("rq-unit-deaths", said, "post-processing", p.fatality[s, y]["mrall"] * 10)

    def dollars(rng: random.Random) -> Any:
        s, y = _pick(rng, p.cigarette, range(1993, 1996))
        said = (
            f"In dollars, what was the average price of a pack of cigarettes in {s} in {y}, "
            "sales taxes included?"
        )
        gold = p.cigarette[s, y]["avgprs"] / 100
        return _number("rq-unit-dollars", said, "post-processing", gold)

    def packs(rng: random.Random) -> Any:
        s, y = _pick(rng, p.cigarette, range(1993, 1996))
        r = p.cigarette[s, y]
        said = f"How many million packs of cigarettes were sold in {s} in {y}?"
        return _number("rq-unit-packs", said, "post-processing", r["packpc"] * r["pop"] / 1e6)

    def payrolls(rng: random.Random) -> Any:
        s, y = _pick(rng, p.produc, range(1970, 1987))
        said = f"How many million people were on non-farm payrolls in {s} in {y}?"
        return _number("rq-unit-emp", said, "post-processing", p.produc[s, y]["emp"] / 1000)

    def tax_share(rng: random.Random) -> Any:
        s, y = _pick(rng, p.cigarette, range(1985, 1996))
        r = p.cigarette[s, y]
        said = (
            f"What percentage of the average price of a pack of cigarettes in {s} in {y} "
            "was excise tax?"
        )
        gold = 100 * r["tax"] / r["avgprs"]
        return _number("rq-unit-taxshare", said, "post-processing", gold)

    def cpi(rng: random.Random) -> Any:
        y = rng.choice(range(1985, 1993))
        said = f"What was the consumer price index in {y}, with 1983 = 100?"
        (index,) = {r["cpi"] for (_, ry), r in p.cigar.items() if ry == y}
        return _number("rq-unit-cpi", said, "simple", index)

    for make, n in (
        (millions, 2),
        (deaths, 2),
        (dollars, 2),
        (packs, 2),
        (payrolls, 1),
        (tax_share, 1),
        (cpi, 1),
    ):
        yield from _made(n, rng, make)


SOUTH = "Southern states (the former Confederacy)"


def _south(p: Panels, y: int) -> dict[str, float]:
    return {s: r["demVote"] for (s, ry), r in p.votes.items() if ry == y and r["south"] == "TRUE"}


def _cond(p: Panels, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Two or three conditions: a state or year and a threshold or two."""

    def cigar(rng: random.Random) -> Any:
        y = rng.choice(range(1963, 1985))
        rows = {s: r for (s, ry), r in p.cigar.items() if ry == y}
        price = round(statistics.median(r["price"] for r in rows.values()))
        sales = round(statistics.median(r["sales"] for r in rows.values()))
        met = [s for s, r in rows.items() if r["price"] > price and r["sales"] > sales]
        if "District of Columbia" in met:  # "states": the gold must not hang on DC
            return None
        said = (
            f"How many states had a cigarette price above {price} cents per pack and sales "
            f"above {sales} packs per person in {y}?"
        )
        return _number("rq-cond-cigar", said, "condition", len(met))

    def south(rng: random.Random) -> Any:
        y = rng.choice(range(1932, 2012, 4))
        votes = _south(p, y)
        x = rng.choice([40, 50, 60, 70])
        n = sum(v > x for v in votes.values())
        if not 1 <= n < len(votes):
            return None
        said = f"How many of the {SOUTH} gave the Democratic candidate over {x} percent in {y}?"
        return _number("rq-cond-south", said, "condition", n)

    def drinking(rng: random.Random) -> Any:
        y = rng.choice(range(1982, 1989))
        rows = [r for (_, ry), r in p.fatality.items() if ry == y]
        n = sum(r["mlda"] == 21 and r["jaild"] == "yes" for r in rows)
        said = (
            f"In {y}, how many states had both a minimum legal drinking age of 21 and a "
            "mandatory jail sentence for drunk driving?"
        )
        return _number("rq-cond-drink", said, "condition", n) if n else None

    def years(rng: random.Random) -> Any:
        s = rng.choice(Panels.states(p.produc))
        y1 = rng.choice(range(1970, 1975))
        y2 = rng.choice(range(y1 + 5, 1982))
        rates = [p.produc[s, y]["unemp"] for y in range(y1, y2 + 1)]
        x = round(statistics.median(rates))
        n = sum(v > x for v in rates)
        said = f"In how many years from {y1} to {y2} was unemployment in {s} above {x} percent?"
        return _number("rq-cond-years", said, "condition", n) if 0 < n < len(rates) else None

    def south_set(rng: random.Random) -> Any:
        y = rng.choice(range(1932, 2012, 4))
        votes = _south(p, y)
        for x in (80, 75, 70, 65, 60, 55, 50, 45, 40):
            members = sorted(s for s, v in votes.items() if v > x)
            if 2 <= len(members) <= 4:
                said = f"Which {SOUTH} gave the Democratic candidate more than {x} percent in {y}?"
                return q("rq-cond-set", said, "table", "set", "set", members, sorted(votes))
        return None

    def gsp(rng: random.Random) -> Any:
        y = rng.choice(range(1970, 1982))
        rows = {s: r for (s, ry), r in p.produc.items() if ry == y}
        x = rng.choice([4, 5, 6, 7])
        low = {s: r["gsp"] for s, r in rows.items() if r["unemp"] < x}
        if len(low) < 3:
            return None
        top = max(low, key=low.__getitem__)
        if "_" in p.produc_said[top] or p.produc_said[top].title() != top:  # said as written
            return None
        said = (
            f"Of the states whose unemployment rate was below {x} percent in {y}, which had "
            "the largest gross state product?"
        )
        return _name("rq-cond-gsp", said, "condition", top, sorted(rows))

    def fatal(rng: random.Random) -> Any:
        y = rng.choice(range(1982, 1989))
        rows = [r for (_, ry), r in p.fatality.items() if ry == y]
        x = round(statistics.median(r["mrall"] for r in rows), 1)
        tax = round(statistics.median(r["beertax"] for r in rows), 1)
        n = sum(r["mrall"] > x and r["beertax"] < tax for r in rows)
        said = (
            f"How many states had more than {x} traffic deaths per 10,000 people in {y} while "
            f"taxing a case of beer at less than {tax:.2f} dollars?"
        )
        return _number("rq-cond-fatal", said, "condition", n) if n else None

    def cigtax(rng: random.Random) -> Any:
        y = rng.choice(range(1985, 1996))
        rows = [r for (_, ry), r in p.cigarette.items() if ry == y]
        tax = 5 * round(statistics.median(r["tax"] for r in rows) / 5)
        price = 10 * round(statistics.median(r["avgprs"] for r in rows) / 10)
        n = sum(r["tax"] > tax and r["avgprs"] > price for r in rows)
        said = (
            f"In {y}, how many states had cigarette excise taxes above {tax} cents a pack and "
            f"an average price above {price} cents?"
        )
        return _number("rq-cond-cigtax", said, "condition", n) if n else None

    for make, n in (
        (cigar, 2),
        (south, 2),
        (drinking, 2),
        (years, 2),
        (south_set, 2),
        (gsp, 2),
        (fatal, 1),
        (cigtax, 1),
    ):
        yield from _made(n, rng, make)


def _agg(p: Panels, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Counts, averages, sums, highs and lows, most of them under a condition."""

    def of_year(panel: dict[Key, Row], y: int) -> dict[str, Row]:
        return {s: r for (s, ry), r in panel.items() if ry == y}

    def unemp(rng: random.Random) -> Any:
        y = rng.choice(range(1970, 1982))
        rates = [r["unemp"] for r in of_year(p.produc, y).values()]
        said = f"What was the average unemployment rate across the states in {y}?"
        return _number("rq-agg-unemp", said, "aggregation", statistics.mean(rates))

    def gsp(rng: random.Random) -> Any:
        y = rng.choice(range(1970, 1987))
        total = sum(r["gsp"] for r in of_year(p.produc, y).values())
        said = (
            f"What was the combined gross state product of the 48 contiguous states in {y}, "
            "in millions of dollars?"
        )
        return _number("rq-agg-gsp", said, "aggregation", total)

    def beer(rng: random.Random) -> Any:
        y = rng.choice(range(1982, 1989))
        top = max(r["beertax"] for r in of_year(p.fatality, y).values())
        said = f"What was the highest tax on a case of beer in any state in {y}?"
        return _number("rq-agg-beertax", said, "aggregation", top)

    def cheapest(rng: random.Random) -> Any:
        y = rng.choice(range(1963, 1985))
        rows = of_year(p.cigar, y)
        low = min(r["price"] for r in rows.values())
        if rows["District of Columbia"]["price"] == low:
            return None
        said = f"What was the lowest price of a pack of cigarettes in any state in {y}, in cents?"
        return _number("rq-agg-price", said, "aggregation", low)

    def sales(rng: random.Random) -> Any:
        y = rng.choice(range(1963, 1985))
        rows = of_year(p.cigar, y)
        every = statistics.mean(r["sales"] for r in rows.values())
        states = statistics.mean(r["sales"] for s, r in rows.items() if s != "District of Columbia")
        if abs(every - states) > 0.005 * states:  # "across the states": DC must not matter
            return None
        said = f"What were the average cigarette sales per person across the states in {y}?"
        return _number("rq-agg-sales", said, "aggregation", states)

    def state_avg(rng: random.Random) -> Any:
        s = rng.choice(Panels.states(p.produc))
        y1 = rng.choice(range(1970, 1976))
        y2 = rng.choice(range(y1 + 3, 1982))
        rates = [p.produc[s, y]["unemp"] for y in range(y1, y2 + 1)]
        said = f"What was the average unemployment rate in {s} from {y1} to {y2}?"
        return _number("rq-agg-state", said, "aggregation", statistics.mean(rates))

    def peak(rng: random.Random) -> Any:
        s = rng.choice(sorted(set(Panels.states(p.produc)) & set(Panels.states(p.fatality))))
        rates: dict[int, list[float]] = {}  # both tables' rates, where both hold the year
        for (rs, y), r in [*p.produc.items(), *p.fatality.items()]:
            if rs == s:
                rates.setdefault(y, []).append(r.get("unemp") or r["unrate"])
        top = max(rates, key=lambda y: max(rates[y]))
        if min(rates[top]) <= max(max(v) for y, v in rates.items() if y != top):
            return None
        said = f"In which year was the unemployment rate in {s} at its highest?"
        return _name("rq-agg-peak", said, "aggregation", str(top), [str(y) for y in rates])

    def south_avg(rng: random.Random) -> Any:
        y = rng.choice(range(1932, 2012, 4))
        said = f"What was the average Democratic share of the vote across the {SOUTH} in {y}?"
        return _number("rq-agg-south", said, "aggregation", statistics.mean(_south(p, y).values()))

    def young(rng: random.Random) -> Any:
        y = rng.choice(range(1982, 1989))
        n = sum(r["mlda"] < 21 for r in of_year(p.fatality, y).values())
        said = f"How many states had a minimum legal drinking age below 21 in {y}?"
        return _number("rq-agg-mlda", said, "aggregation", n) if n else None

    def deadliest(rng: random.Random) -> Any:
        y = rng.choice(range(1982, 1989))
        rows = of_year(p.fatality, y)
        top = max(rows, key=lambda s: rows[s]["mrall"])
        said = f"Which state had the highest traffic fatality rate in {y}?"
        return _name("rq-agg-fatal", said, "aggregation", top, sorted(rows))

    def dear(rng: random.Random) -> Any:
        y = rng.choice(range(1993, 1996))
        x = rng.choice([1.5, 1.75, 2.0])
        n = sum(r["avgprs"] > 100 * x for r in of_year(p.cigarette, y).values())
        said = (
            f"How many states had an average cigarette price above {x:.2f} dollars a pack in {y}?"
        )
        return _number("rq-agg-dear", said, "aggregation", n) if n else None

    def landslide(rng: random.Random) -> Any:
        y = rng.choice(range(1932, 1964, 4))  # before DC voted
        top = max(r["demVote"] for r in of_year(p.votes, y).values())
        said = f"What was the highest Democratic share of the vote in any state in {y}?"
        return _number("rq-agg-votes", said, "aggregation", top)

    for make, n in (
        (unemp, 2),
        (gsp, 1),
        (beer, 1),
        (cheapest, 1),
        (sales, 1),
        (state_avg, 1),
        (peak, 1),
        (south_avg, 1),
        (young, 1),
        (deadliest, 1),
        (dear, 1),
        (landslide, 1),
    ):
        yield from _made(n, rng, make)


def _cmp(p: Panels, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Which of two states had more, and changes or differences between two values."""

    def two(panel: dict[Key, Row], years: Iterable[int]) -> tuple[str, str, int]:
        y = rng.choice(sorted(set(years) & set(Panels.years(panel))))
        a, b = rng.sample(sorted(s for s, ry in panel if ry == y and s not in NOT_STATES), 2)
        return a, b, y

    def which(template: str, said: str, a: str, b: str, va: float, vb: float) -> Any:
        return (
            None if va == vb else _name(template, said, "comparison", a if va > vb else b, [a, b])
        )

    def votes(rng: random.Random) -> Any:
        a, b, y = two(p.votes, range(1932, 2012))
        said = f"Which state gave the Democratic candidate a larger share in {y}: {a} or {b}?"
        return which("rq-cmp-votes", said, a, b, p.votes[a, y]["demVote"], p.votes[b, y]["demVote"])

    def payrolls(rng: random.Random) -> Any:
        a, b, y = two(p.produc, range(1970, 1987))
        if any("_" in p.produc_said[s] or p.produc_said[s].title() != s for s in (a, b)):
            return None
        said = f"Which had more people on non-farm payrolls in {y}, {a} or {b}?"
        return which("rq-cmp-emp", said, a, b, p.produc[a, y]["emp"], p.produc[b, y]["emp"])

    def fatal(rng: random.Random) -> Any:
        a, b, y = two(p.fatality, range(1982, 1989))
        said = f"Which had the higher traffic fatality rate in {y}: {a} or {b}?"
        va, vb = p.fatality[a, y]["mrall"], p.fatality[b, y]["mrall"]
        return which("rq-cmp-fatal", said, a, b, va, vb)

    def smokers(rng: random.Random) -> Any:
        a, b, y = two(p.cigar, range(1963, 1985))
        said = f"Where were more packs of cigarettes sold per person in {y}, {a} or {b}?"
        return which("rq-cmp-sales", said, a, b, p.cigar[a, y]["sales"], p.cigar[b, y]["sales"])

    def rise(rng: random.Random) -> Any:
        s = rng.choice(Panels.states(p.cigar))
        y1, y2 = sorted(rng.sample(range(1963, 1985), 2))
        change = p.cigar[s, y2]["price"] - p.cigar[s, y1]["price"]
        said = (
            f"By how many cents did the price of a pack of cigarettes in {s} rise "
            f"from {y1} to {y2}?"
        )
        return _number("rq-cmp-rise", said, "post-processing", change) if change > 0 else None

    def swing(rng: random.Random) -> Any:
        s, y = _pick(rng, p.votes, range(1932, 2008))
        if (s, y + 4) not in p.votes:
            return None
        change = abs(p.votes[s, y + 4]["demVote"] - p.votes[s, y]["demVote"])
        said = (
            f"By how many percentage points did the Democratic share of the vote in {s} "
            f"differ between {y} and {y + 4}?"
        )
        return _number("rq-cmp-swing", said, "post-processing", change)

    def jobs(rng: random.Random) -> Any:
        s = rng.choice(Panels.states(p.produc))
        growth = p.produc[s, 1986]["emp"] - p.produc[s, 1970]["emp"]
        said = f"By how many thousand did non-farm employment in {s} grow from 1970 to 1986?"
        return _number("rq-cmp-jobs", said, "post-processing", growth) if growth > 0 else None

    def growth(rng: random.Random) -> Any:
        s = rng.choice(Panels.states(p.produc))
        y1 = rng.choice(range(1970, 1978))
        y2 = rng.choice(range(y1 + 5, 1987))
        pct = 100 * (p.produc[s, y2]["gsp"] / p.produc[s, y1]["gsp"] - 1)
        said = f"By what percentage did the gross state product of {s} grow from {y1} to {y2}?"
        return _number("rq-cmp-gsp", said, "post-processing", pct)

    def dearer(rng: random.Random) -> Any:
        a, b, y = two(p.cigarette, range(1993, 1996))
        a, b = sorted((a, b), key=lambda s: -p.cigarette[s, y]["avgprs"])
        more = p.cigarette[a, y]["avgprs"] - p.cigarette[b, y]["avgprs"]
        said = (
            f"How many cents more did a pack of cigarettes cost in {a} than in {b} in {y}, "
            "sales taxes included?"
        )
        return _number("rq-cmp-dearer", said, "post-processing", more)

    for make, n in (
        (votes, 2),
        (payrolls, 1),
        (fatal, 1),
        (smokers, 1),
        (rise, 2),
        (swing, 1),
        (jobs, 1),
        (growth, 1),
        (dearer, 1),
    ):
        yield from _made(n, rng, make)


def _premise(p: Panels, rng: random.Random) -> Iterable[dict[str, Any]]:
    """A state or a year no table holds, asked as if it were there."""
    held = (p.cigar, p.cigarette, p.produc, p.fatality)
    missing = sorted({"Alaska", "Hawaii"} - {s for panel in held for s, _ in panel})
    assert missing == ["Alaska", "Hawaii"]

    def said(template: str, question: str) -> dict[str, Any]:
        return q(template, question, "table", "false premise", "premise", "")

    first, second = rng.sample(missing, 2)
    yield said(
        "rq-premise-state",
        f"What was the price of a pack of cigarettes in {first} in "
        f"{rng.choice(range(1963, 1985))}?",
    )
    yield said(
        "rq-premise-state",
        f"What was the traffic fatality rate in {second} in {rng.choice(range(1982, 1989))}?",
    )
    yield said(
        "rq-premise-state",
        f"What was the gross state product of {first} in {rng.choice(range(1970, 1987))}?",
    )
    last = max(max(Panels.years(p.produc)), max(Panels.years(p.fatality)))
    y = rng.choice(range(last + 3, 1996))
    yield said(
        "rq-premise-year",
        f"What was the unemployment rate in {rng.choice(Panels.states(p.produc))} in {y}?",
    )
    gaps = [y for y in (1948, 1964) if ("Alabama", y) not in p.votes]
    assert gaps, "Alabama's missing elections"
    yield said(
        "rq-premise-year",
        f"What share of the vote did the Democrat win in Alabama in {rng.choice(gaps)}?",
    )
    off = rng.choice([y for y in range(1934, 2012) if y % 4 == 2])
    yield said(
        "rq-premise-year",
        f"What share of the vote did the Democratic presidential candidate get in "
        f"{rng.choice(Panels.states(p.votes))} in {off}?",
    )


def build() -> list[dict[str, Any]]:
    """Every question, with an id; all of them ``calibration``."""
    p = panels()
    made = [
        *_other(p, random.Random(f"{SEED}-other")),
        *_unit(p, random.Random(f"{SEED}-unit")),
        *_cond(p, random.Random(f"{SEED}-cond")),
        *_agg(p, random.Random(f"{SEED}-agg")),
        *_cmp(p, random.Random(f"{SEED}-cmp")),
        *_premise(p, random.Random(f"{SEED}-premise")),
    ]
    return numbered(made, "calibration")


__all__ = ["FILES", "MODIFIED", "QUESTIONS", "build"]
