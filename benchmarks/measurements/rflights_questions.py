"""A calibration set of table questions over a week of New York flights: four tables, real gaps.

The second joined-tables calibration set, beside ``rjoins`` (a shop's tidy keys): the
nycflights13 data (``benchmarks/data/rflights``, see its README for the source and licence)
for the first week of March 2013. ``flights`` joins ``airlines`` on ``carrier``, ``airports``
on ``origin`` or ``dest`` = ``faa`` (a key that does not share its column's name), and
``planes`` on ``tailnum``; as in the published data, four destinations have no airport row
and a sixth of the tail numbers no plane row, so an inner join drops rows, and a plane's
maker is spelt two ways in places ("AIRBUS", "AIRBUS INDUSTRIE").

The questions are a traveller's or an analyst's: the airline or maker reached through a key,
counts and averages across a join, the top or second of a group, two airlines compared, a
share, a difference, short lists, and airlines the data never had (a false premise). Each
gold is computed from the CSV files by SQL (``sqlite3`` in memory), instances are drawn with a
fixed seed, and an instance whose answer is tied, or that a dropped row or a second spelling
would change, is skipped.

Every question is ``calibration``: for fitting the table answers' confidence, never for
reporting. ``python -m benchmarks.measurements.tools build --set rflights`` rewrites
``questions.jsonl``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from benchmarks import DATA
from benchmarks.measurements.rjoins_questions import (
    Tables,
    _checked,
    _draw,
    _others,
    _r,
    _top,
    load,
)
from benchmarks.measurements.tools_questions import numbered, q

RFLIGHTS = DATA / "rflights"
QUESTIONS = RFLIGHTS / "questions.jsonl"
FILES = {p.name: p for p in sorted(RFLIGHTS.iterdir()) if p.suffix == ".csv"}
"""The four tables (the README and the questions are about the set, not in it)."""
MODIFIED = {name: f"2025-06-0{1 + i}" for i, name in enumerate(sorted(FILES))}
SEED = 37
MAKERS = {"Boeing": "BOEING", "Embraer": "EMBRAER", "Bombardier": "BOMBARDIER INC"}
"""Makers spelt one way in ``planes`` (Airbus and McDonnell Douglas are spelt several)."""
ABSENT_AIRLINES = ("Pan Am", "Continental Airlines", "Trans World Airlines")
NAMED = "JOIN airlines a USING (carrier)"
FROM = "JOIN airports o ON o.faa = f.origin"
TO = "JOIN airports d ON d.faa = f.dest"


class Week(Tables):
    """The database and the names the templates draw from."""

    def __init__(self) -> None:
        """Read the tables; check every key but ``dest`` and ``tailnum`` resolves."""
        self.db = load(FILES.values())
        for key, parent, column in (
            ("carrier", "airlines", "carrier"),
            ("origin", "airports", "faa"),
        ):
            lost = self.one(
                f"SELECT COUNT(*) FROM flights WHERE {key} NOT IN (SELECT {column} FROM {parent})"
            )
            assert lost == 0, f"flights.{key}: {lost} rows refer to no {parent} row"
        self.airlines = self.column("SELECT name FROM airlines")
        self.short = sorted(_short(a) for a in self.airlines)
        """The airlines as people write them, the golds' form ("Delta Air Lines")."""
        self.origins = self.column(f"SELECT DISTINCT o.name FROM flights f {FROM}")
        self.dests = self.column(f"SELECT DISTINCT d.name FROM flights f {TO}")
        self.makers = self.column("SELECT DISTINCT manufacturer FROM planes")
        self.airports: dict[str, str] = dict(self.rows("SELECT faa, name FROM airports"))
        """Each airport's name by its code (four destinations have none)."""
        self.airline_origins = [(a, o) for a in self.airlines for o in self.origins]
        """Every (airline, airport flown from) pair the templates draw from."""


def _short(airline: str) -> str:
    """An airline as people write it: "Delta Air Lines", not "Delta Air Lines Inc."."""
    for tail in (" Inc.", " Co.", " Corporation"):
        airline = airline.removesuffix(tail)
    return airline


def _through_keys(w: Week, rng: random.Random) -> Iterable[dict[str, Any]]:
    """An airline, a maker or an altitude held in another table than the flight's."""
    tails = w.rows(
        f"SELECT f.tailnum, MIN(a.name) FROM flights f {NAMED} WHERE f.tailnum != '' "
        "GROUP BY f.tailnum HAVING COUNT(DISTINCT f.carrier) = 1"
    )

    def airline(row: tuple[str, str]) -> dict[str, Any]:
        """The airline that flew a plane (planes flown by one airline that week)."""
        tail, name = row
        return q(
            "rf-airline-of-plane",
            f"Which airline flew the plane with tail number {tail}?",
            "table",
            "multi-hop",
            "text",
            _short(name),
            universe=_others(w.short, _short(name)),
        )

    yield from _draw(rng, tails, airline)
    flights = w.rows(
        f"SELECT a.name, f.flight, f.day, pl.manufacturer, d.alt FROM flights f {NAMED} "
        f"JOIN planes pl USING (tailnum) {TO} WHERE f.dep_time IS NOT NULL "
        "GROUP BY f.carrier, f.flight, f.day HAVING COUNT(*) = 1"
    )

    def maker(row: tuple[str, int, int, str, int]) -> dict[str, Any] | None:
        """Who built the plane of one flight (a maker spelt one way only)."""
        name, number, day, built, _ = row
        maker = next((m for m, spelt in MAKERS.items() if spelt == built), None)
        if maker is None:
            return None
        return q(
            "rf-maker-of-flight",
            f"Who made the plane that flew {_short(name)} flight {number} on March {day}, 2013?",
            "table",
            "multi-hop",
            "text",
            maker,
            universe=_others(MAKERS, maker),
        )

    yield from _draw(rng, flights, maker)

    def altitude(row: tuple[str, int, int, str, int]) -> dict[str, Any]:
        """The altitude of the airport a flight flew to."""
        name, number, day, _, alt = row
        return q(
            "rf-altitude-of-destination",
            f"How high above sea level, in feet, is the airport that {_short(name)} flight "
            f"{number} flew to on March {day}, 2013?",
            "table",
            "multi-hop",
            "number",
            alt,
        )

    yield from _draw(rng, flights, altitude)


def _aggregations(w: Week, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Counts and averages across a join, with a condition or two."""

    def count(pair: tuple[str, str]) -> dict[str, Any] | None:
        """How many flights an airline flew out of one airport."""
        name, origin = pair
        n = w.one(
            f"SELECT COUNT(*) FROM flights f {NAMED} {FROM} WHERE a.name = ? AND o.name = ?",
            name,
            origin,
        )
        if n == 0:
            return None
        return q(
            "rf-flights-airline-origin",
            f"How many flights did {_short(name)} fly out of {origin}?",
            "table",
            "condition",
            "number",
            n,
        )

    yield from _draw(rng, w.airline_origins, count)

    def delay(name: str) -> dict[str, Any]:
        """An airline's average departure delay over the flights that left."""
        mean = w.one(f"SELECT AVG(f.dep_delay) FROM flights f {NAMED} WHERE a.name = ?", name)
        return q(
            "rf-mean-departure-delay",
            f"On average, how many minutes late did {_short(name)} flights depart?",
            "table",
            "aggregation",
            "number",
            _r(mean),
        )

    yield from _draw(rng, w.airlines, delay)
    makers = [(m, o) for m in MAKERS for o in w.origins]

    def built_by(pair: tuple[str, str]) -> dict[str, Any]:
        """How many flights out of one airport were flown on one maker's planes."""
        maker, origin = pair
        n = w.one(
            f"SELECT COUNT(*) FROM flights f JOIN planes pl USING (tailnum) {FROM} "
            "WHERE pl.manufacturer = ? AND o.name = ?",
            MAKERS[maker],
            origin,
        )
        return q(
            "rf-flights-by-maker",
            f"How many flights out of {origin} were flown on planes made by {maker}?",
            "table",
            "multi-hop",
            "number",
            n,
        )

    yield from _draw(rng, makers, built_by)

    def destinations(pair: tuple[str, str]) -> dict[str, Any] | None:
        """How many airports an airline flew to from one airport."""
        name, origin = pair
        n = w.one(
            f"SELECT COUNT(DISTINCT f.dest) FROM flights f {NAMED} {FROM} "
            "WHERE a.name = ? AND o.name = ?",
            name,
            origin,
        )
        if n < 2:
            return None
        return q(
            "rf-destinations-count",
            f"To how many different airports did {_short(name)} fly from {origin}?",
            "table",
            "aggregation",
            "number",
            n,
        )

    yield from _draw(rng, w.airline_origins, destinations)

    def oldest(name: str) -> dict[str, Any] | None:
        """The year the oldest plane an airline flew was built."""
        year = w.one(
            f"SELECT MIN(pl.year) FROM flights f {NAMED} JOIN planes pl USING (tailnum) "
            "WHERE a.name = ? AND pl.year != ''",
            name,
        )
        if year is None:
            return None
        return q(
            "rf-oldest-plane",
            f"In what year was the oldest plane that {_short(name)} flew built?",
            "table",
            "multi-hop",
            "number",
            year,
        )

    yield from _draw(rng, w.airlines, oldest)


def _ranks(w: Week, rng: random.Random) -> Iterable[dict[str, Any]]:
    """The top or second of a group, named through a key."""

    def busiest(dest: str) -> dict[str, Any] | None:
        """The airline with the most flights to an airport."""
        gold = _top(
            w.score(
                f"SELECT a.name, COUNT(*) FROM flights f {NAMED} {TO} WHERE d.name = ? "
                "GROUP BY a.name",
                dest,
            )
        )
        if gold is None:
            return None
        return q(
            "rf-top-airline-to",
            f"Which airline flew the most flights to {dest}?",
            "table",
            "post-processing",
            "text",
            _short(gold),
            universe=_others(w.short, _short(gold)),
        )

    yield from _draw(rng, w.dests, busiest)
    ranked = [(o, rank) for o in w.origins for rank in (1, 2)]

    def destination(pair: tuple[str, int]) -> dict[str, Any] | None:
        """The airport an origin sent the most (or second most) flights to, all named."""
        origin, rank = pair
        counts = w.score(
            f"SELECT f.dest, COUNT(*) FROM flights f {FROM} WHERE o.name = ? GROUP BY f.dest",
            origin,
        )
        code = _top(counts, rank)
        names = w.airports
        if code is None or code not in names:
            return None
        which = "the most" if rank == 1 else "the second most"
        return q(
            "rf-top-destination-from",
            f"Which airport received {which} flights from {origin}?",
            "table",
            "post-processing",
            "text",
            names[code],
            universe=_others(w.dests, names[code]),
        )

    yield from _draw(rng, ranked, destination, 6)


def _comparisons(w: Week, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Two airlines compared; a share; a difference between two airports."""
    pairs = [(a, b) for a in w.airlines for b in w.airlines if a < b]

    def lower(pair: tuple[str, str]) -> dict[str, Any] | None:
        """Of two airlines, the one with the lower average arrival delay."""
        means = w.score(
            f"SELECT a.name, AVG(f.arr_delay) FROM flights f {NAMED} WHERE a.name IN (?, ?) "
            "GROUP BY a.name",
            *pair,
        )
        if len(means) != 2 or round(means[pair[0]], 2) == round(means[pair[1]], 2):
            return None
        gold = min(means, key=lambda k: means[k])
        return q(
            "rf-lower-arrival-delay",
            f"Which had the lower average arrival delay: {_short(pair[0])} or {_short(pair[1])}?",
            "table",
            "comparison",
            "text",
            _short(gold),
            universe=[_short(p) for p in pair if p != gold],
        )

    yield from _draw(rng, pairs, lower)

    def late(name: str) -> dict[str, Any] | None:
        """The percentage of an airline's departed flights that left over 15 minutes late."""
        left, late = w.rows(
            f"SELECT COUNT(f.dep_delay), SUM(f.dep_delay > 15) FROM flights f {NAMED} "
            "WHERE a.name = ?",
            name,
        )[0]
        if not left or not late:
            return None
        return q(
            "rf-share-late",
            f"Of the {_short(name)} flights that departed, what percentage left more than 15 "
            "minutes late?",
            "table",
            "post-processing",
            "number",
            _r(100 * late / left),
        )

    yield from _draw(rng, w.airlines, late)
    origins = [(a, b) for a in w.origins for b in w.origins if a != b]

    def exceeds(pair: tuple[str, str]) -> dict[str, Any] | None:
        """By how many minutes one airport's mean departure delay exceeded another's."""
        means = w.score(
            f"SELECT o.name, AVG(f.dep_delay) FROM flights f {FROM} WHERE o.name IN (?, ?) "
            "GROUP BY o.name",
            *pair,
        )
        gap = means[pair[0]] - means[pair[1]]
        if gap <= 0:
            return None
        return q(
            "rf-delay-gap",
            f"By how many minutes did the average departure delay at {pair[0]} exceed the "
            f"average at {pair[1]}?",
            "table",
            "post-processing",
            "number",
            _r(gap),
        )

    yield from _draw(rng, origins, exceeds, 3)


def _sets(w: Week, rng: random.Random) -> Iterable[dict[str, Any]]:
    """The airports an airline flew to from one airport: a short list, every one named."""

    def served(pair: tuple[str, str]) -> dict[str, Any] | None:
        name, origin = pair
        codes = w.column(
            f"SELECT DISTINCT f.dest FROM flights f {NAMED} {FROM} WHERE a.name = ? AND o.name = ?",
            name,
            origin,
        )
        names = w.airports
        if not 2 <= len(codes) <= 4 or any(c not in names for c in codes):
            return None
        gold = sorted(names[c] for c in codes)
        return q(
            "rf-destinations-list",
            f"Which airports did {_short(name)} fly to from {origin}?",
            "table",
            "set",
            "set",
            gold,
            universe=_others(w.dests, *gold),
        )

    yield from _draw(rng, w.airline_origins, served)


def _premises(w: Week) -> Iterable[dict[str, Any]]:
    """Questions about airlines the week's flights never had."""
    assert not {_short(a) for a in w.airlines} & set(ABSENT_AIRLINES)
    asked = [
        f"How many flights did {ABSENT_AIRLINES[0]} fly out of {w.origins[0]}?",
        f"On average, how many minutes late did {ABSENT_AIRLINES[1]} flights depart?",
        f"Which airports did {ABSENT_AIRLINES[2]} fly to from {w.origins[-1]}?",
    ]
    for question in asked:
        yield q("rf-premise", question, "table", "false premise", "premise", "")


def build() -> list[dict[str, Any]]:
    """Every question, with an id; all of them ``calibration``."""
    week = Week()
    rng = random.Random(SEED)
    made = [
        *_through_keys(week, rng),
        *_aggregations(week, rng),
        *_ranks(week, rng),
        *_comparisons(week, rng),
        *_sets(week, rng),
        *_premises(week),
    ]
    return _checked(numbered(made, "calibration"))


__all__ = ["FILES", "MODIFIED", "QUESTIONS", "build"]
