"""A calibration set of agent-loop shapes: six seasons of baseball tables beside prose notes.

The table answers' checks are fitted on calibration sets that ask one shape at a time; none
asks the shapes an agent loop meets in a user's folder (a fact carried from a table to a
note, two conditions at once, a set, a difference or a rank, two teams compared across two
tables, a premise the files never held). This set asks them of files never used here before:
the Lahman baseball database as the Baseball Databank 2021.2 packs it
(``benchmarks/data/rbaseball``, see its README for the source, the licence and what was cut)
for the seasons 2010 to 2015: ``people`` (``player_id``, names, birth country), ``batting``
and ``pitching`` (a row per player, season and team: ``player_id``, ``year``, ``team_id``),
``teams`` (``year``, ``team_id``, name, wins), ``salaries`` (``year``, ``team_id``,
``player_id``) and ``awards`` (``player_id``, ``year``, ``award``); and eight Markdown notes,
Wikipedia summaries, about four countries players were born in, three cities teams play in,
and Major League Baseball.

As the published data has them, a player traded in a season has a row per team (a count of
rows is not a count of players), a salary is listed for about three player-seasons in five
(a join on ``salaries`` drops rows), the tables write some countries short ("D.R.") where the
notes spell them out, the Marlins changed their name in 2012, the Astros their league in 2013,
and a score of full names belong to two players.

The questions are a fan's or an analyst's, of Meta CRAG's types (``simple``, ``condition``,
``aggregation``, ``comparison``, ``set``, ``post-processing``, ``multi-hop``, ``false
premise``) and tools (``table``, ``text``, ``both``): a team named in a note by its city
then counted in a table, a player's birth country then its capital in a note, an award
winner's team or home runs through keys, payrolls compared, teams that won 90 in both of two
seasons, and players or teams the data never had. Each gold is computed from the CSV files by
SQL (``sqlite3`` in memory) and from the notes' text (the fact found in its note by a
pattern, asserted present); instances are drawn with a fixed seed, and one whose answer is
tied, whose name two players share, or that a second row (a trade, a rename) would change,
is skipped.

Every question is ``calibration``: for studying and fitting the table answers' checks, never
for reporting. ``python -m benchmarks.measurements.tools build --set rbaseball`` writes the
notes from the Wikipedia summaries (``../shared``, at build time only) and rewrites
``questions.jsonl``.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections.abc import Iterable
from pathlib import Path
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

RBASEBALL = DATA / "rbaseball"
QUESTIONS = RBASEBALL / "questions.jsonl"
SEED = 53
YEARS = tuple(range(2010, 2016))
PLAYER = "p.first_name || ' ' || p.last_name"

COUNTRIES = {
    "D.R.": ("Dominican Republic", "Santo Domingo"),
    "Venezuela": ("Venezuela", "Caracas"),
    "Cuba": ("Cuba", "Havana"),
    "Japan": ("Japan", "Tokyo"),
}
"""A birth country as ``people`` spells it: its note's title and the capital the note names."""
CITIES = {
    "Houston": ("Houston Astros", "the most populous city in the U.S. state of Texas"),
    "Seattle": ("Seattle Mariners", "the most populous city in the U.S. state of Washington"),
    "Toronto": ("Toronto Blue Jays", "the most populous city in Canada"),
}
"""A city's note: the team that plays there and how the note describes the city."""
LEAGUE_NOTE = "Major League Baseball"
LEAGUE_FACTS = {
    "games": r"Each team plays (\d+) games per season",
    "headquarters": r"MLB is headquartered in ([A-Z][\w ]+?)\.",
}
"""The facts the league's note is asked for, each found by a pattern."""
TITLES = [*(title for title, _ in COUNTRIES.values()), *CITIES, LEAGUE_NOTE]
SPELT = (
    "Australia",
    "Brazil",
    "Colombia",
    "Cuba",
    "Germany",
    "Japan",
    "Mexico",
    "Netherlands",
    "Nicaragua",
    "Panama",
    "South Korea",
    "Taiwan",
    "Venezuela",
)
"""Birth countries ``people`` spells out in full (not "USA", "D.R.", "P.R.", "CAN")."""
PHRASED = {"D.R.": "the Dominican Republic", "P.R.": "Puerto Rico", "CAN": "Canada"}

ABSENT = {
    "players": ("Babe Ruth",),
    "teams": ("Montreal Expos", "Brooklyn Dodgers"),
}
"""A player and teams the six seasons never had (checked absent)."""


def _note_name(title: str) -> str:
    """A note's file name: ``dominican_republic.md``."""
    return title.lower().replace(" ", "_") + ".md"


def notes(wikipedia: Path) -> list[Path]:
    """Write a note per title from its Wikipedia summary; every fact asked checked in it."""
    found: dict[str, str] = {}
    with gzip.open(wikipedia, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["title"] in TITLES:
                found[row["title"]] = row["text"].strip()
    missing = sorted(set(TITLES) - set(found))
    assert not missing, f"no summary for {missing}"
    written = []
    for title in TITLES:
        path = RBASEBALL / _note_name(title)
        path.write_text(f"# {title}\n\n{found[title]}\n", encoding="utf-8")
        written.append(path)
    _facts()
    return written


def _note(title: str) -> str:
    """A note's text."""
    return (RBASEBALL / _note_name(title)).read_text(encoding="utf-8")


def _facts() -> dict[str, str]:
    """The facts the questions take from the notes, each asserted present in its note."""
    for title, capital in COUNTRIES.values():
        assert re.search(rf"\b{capital}\b", _note(title)), f"{title}'s note names no {capital}"
    for city, (_, described) in CITIES.items():
        said = described.removeprefix("the ")
        assert f"{city} is the {said}" in _note(city), f"{city}'s note is not {said}"
    league = _note(LEAGUE_NOTE)
    facts = {}
    for fact, pattern in LEAGUE_FACTS.items():
        found = re.search(pattern, league)
        assert found, f"the league's note does not say its {fact}"
        facts[fact] = found[1]
    return facts


FILES = {
    p.name: p
    for p in sorted(RBASEBALL.iterdir())
    if p.suffix in (".csv", ".md") and p.name != "README.md"
}
"""The six tables and the eight notes (the README and the questions are about the set)."""
MODIFIED = {
    **{n: f"2025-07-0{1 + i}" for i, n in enumerate(n for n in FILES if n.endswith(".csv"))},
    **{n: "2025-07-10" for n in FILES if n.endswith(".md")},
}


class Seasons(Tables):
    """The six seasons' database and the names the templates draw from."""

    def __init__(self) -> None:
        """Read the tables; check the keys every question crosses resolve."""
        self.db = load(p for n, p in sorted(FILES.items()) if n.endswith(".csv"))
        for table in ("batting", "pitching", "salaries", "awards"):
            lost = self.one(
                f"SELECT COUNT(*) FROM {table} WHERE player_id NOT IN "
                "(SELECT player_id FROM people)"
            )
            assert lost == 0, f"{table}.player_id: {lost} rows refer to no player"
        for table in ("batting", "pitching", "salaries"):
            lost = self.one(
                f"SELECT COUNT(*) FROM {table} x WHERE NOT EXISTS (SELECT 1 FROM teams t "
                "WHERE t.year = x.year AND t.team_id = x.team_id)"
            )
            assert lost == 0, f"{table}.team_id: {lost} rows refer to no team"
        self.teams = self.column("SELECT DISTINCT name FROM teams")
        self.team_years = [(t, y) for t in self.teams for y in YEARS if self.team_id(t, y)]
        """Every (team, season) the tables hold."""
        shared = self.column(f"SELECT {PLAYER} FROM people p GROUP BY {PLAYER} HAVING COUNT(*) > 1")
        self.shared = set(shared)
        """Full names two players (or three) share: never asked by."""
        self.named: dict[str, str] = {
            n: i
            for i, n in self.rows(f"SELECT player_id, {PLAYER} FROM people p")
            if n not in self.shared
        }
        """Each player's id by a full name no other player has."""

    def team_id(self, name: str, year: int) -> str | None:
        """A team's code in a season (None where it had another name that season)."""
        found = self.rows("SELECT team_id FROM teams WHERE name = ? AND year = ?", name, year)
        return str(found[0][0]) if found else None

    def wins(self, name: str, year: int) -> int:
        """A team's wins in a season."""
        return int(self.one("SELECT w FROM teams WHERE name = ? AND year = ?", name, year))

    def payroll(self, name: str, year: int) -> int:
        """The salaries listed for a team's players in a season, summed."""
        return int(
            self.one(
                "SELECT SUM(s.salary) FROM salaries s JOIN teams t USING (year, team_id) "
                "WHERE t.name = ? AND s.year = ?",
                name,
                year,
            )
        )

    def home_runs(self, player: str, year: int) -> int:
        """A player's home runs in a season, every team's summed."""
        return int(
            self.one(
                "SELECT COALESCE(SUM(hr), 0) FROM batting WHERE player_id = ? AND year = ?",
                self.named[player],
                year,
            )
        )


def _place(country: str) -> str:
    """A birth country as a sentence names it: "the Dominican Republic", "Venezuela"."""
    return PHRASED.get(country, country)


def _simple(s: Seasons, rng: random.Random) -> Iterable[dict[str, Any]]:
    """One value read from one row, or from the league's note."""
    born = s.rows(
        f"SELECT {PLAYER}, p.birth_country FROM people p WHERE p.birth_country IN "
        f"({', '.join('?' * len(SPELT))}) ORDER BY 1",
        *SPELT,
    )

    def country(row: tuple[str, str]) -> dict[str, Any] | None:
        name, where = row
        if name not in s.named:
            return None
        return q(
            "rb-birth-country",
            f"In which country was {name} born?",
            "table",
            "simple",
            "text",
            where,
            universe=_others(SPELT, where),
        )

    yield from _draw(rng, born, country, 2)

    def wins(pair: tuple[str, int]) -> dict[str, Any]:
        team, year = pair
        return q(
            "rb-team-wins",
            f"How many games did the {team} win in {year}?",
            "table",
            "simple",
            "number",
            s.wins(team, year),
        )

    yield from _draw(rng, s.team_years, wins, 2)
    paid = s.rows(
        f"SELECT {PLAYER}, s.year, s.salary FROM salaries s JOIN people p USING (player_id) "
        "WHERE s.salary >= 1000000 GROUP BY s.player_id, s.year HAVING COUNT(*) = 1 ORDER BY 1, 2"
    )

    def salary(row: tuple[str, int, int]) -> dict[str, Any] | None:
        name, year, amount = row
        if name not in s.named:
            return None
        return q(
            "rb-salary",
            f"How much was {name} paid in {year}?",
            "table",
            "simple",
            "number",
            amount,
        )

    yield from _draw(rng, paid, salary, 2)
    facts = _facts()
    yield q(
        "rb-league-games",
        "How many games does each Major League Baseball team play in a regular season?",
        "text",
        "simple",
        "number",
        int(facts["games"]),
    )
    yield q(
        "rb-league-headquarters",
        "In which city does Major League Baseball have its headquarters?",
        "text",
        "simple",
        "text",
        facts["headquarters"],
        universe=_others(CITIES, facts["headquarters"]),
    )


def _conditions(s: Seasons, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Counts under two conditions at once; a traded player counted once."""
    cuts = [(y, n) for y in YEARS for n in (30, 40)]

    def sluggers(pair: tuple[int, int]) -> dict[str, Any] | None:
        year, at_least = pair
        players = s.one(
            "SELECT COUNT(*) FROM (SELECT player_id FROM batting WHERE year = ? "
            "GROUP BY player_id HAVING SUM(hr) >= ?)",
            year,
            at_least,
        )
        rows = s.one("SELECT COUNT(*) FROM batting WHERE year = ? AND hr >= ?", year, at_least)
        if players != rows or not players:  # a traded slugger's rows would count him twice
            return None
        return q(
            "rb-sluggers-count",
            f"How many players hit at least {at_least} home runs in {year}?",
            "table",
            "condition",
            "number",
            players,
        )

    yield from _draw(rng, cuts, sluggers, 3)
    from_abroad = [(t, y, c) for t, y in s.team_years for c in ("D.R.", "Venezuela", "Cuba")]

    def born_in(triple: tuple[str, int, str]) -> dict[str, Any] | None:
        team, year, where = triple
        n = s.one(
            "SELECT COUNT(DISTINCT b.player_id) FROM batting b JOIN people p USING (player_id) "
            "WHERE b.team_id = ? AND b.year = ? AND p.birth_country = ?",
            s.team_id(team, year),
            year,
            where,
        )
        if n < 2:
            return None
        return q(
            "rb-born-abroad-on-team",
            f"How many players born in {_place(where)} played for the {team} in {year}?",
            "table",
            "condition",
            "number",
            n,
        )

    yield from _draw(rng, from_abroad, born_in, 3)
    leagues = [(y, lg) for y in YEARS for lg in ("AL", "NL")]

    def ninety(pair: tuple[int, str]) -> dict[str, Any] | None:
        year, league = pair
        n = s.one("SELECT COUNT(*) FROM teams WHERE year = ? AND league = ? AND w >= 90", *pair)
        if not n:
            return None
        named = "American" if league == "AL" else "National"
        return q(
            "rb-ninety-win-teams",
            f"How many {named} League teams won 90 or more games in {year}?",
            "table",
            "condition",
            "number",
            n,
        )

    yield from _draw(rng, leagues, ninety, 2)


def _aggregations(s: Seasons, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Sums, distinct counts and averages, some across a key that drops rows."""

    def payroll(pair: tuple[str, int]) -> dict[str, Any]:
        team, year = pair
        return q(
            "rb-payroll",
            f"What was the {team} payroll in {year}, adding up the salaries listed for their "
            "players?",
            "table",
            "aggregation",
            "number",
            s.payroll(team, year),
        )

    yield from _draw(rng, s.team_years, payroll, 2)
    kept = [t for t in s.teams if len(s.rows("SELECT 1 FROM teams WHERE name = ?", t)) == 6]

    def six_seasons(team: str) -> dict[str, Any]:
        n = s.one("SELECT SUM(hr) FROM teams WHERE name = ?", team)
        return q(
            "rb-team-home-runs-2010-2015",
            f"How many home runs did the {team} hit in all from 2010 to 2015?",
            "table",
            "aggregation",
            "number",
            n,
        )

    yield from _draw(rng, kept, six_seasons, 2)

    def used(pair: tuple[str, int]) -> dict[str, Any]:
        team, year = pair
        n = s.one(
            "SELECT COUNT(DISTINCT player_id) FROM batting WHERE team_id = ? AND year = ?",
            s.team_id(team, year),
            year,
        )
        return q(
            "rb-players-used",
            f"How many different players appeared in a game for the {team} in {year}?",
            "table",
            "aggregation",
            "number",
            n,
        )

    yield from _draw(rng, s.team_years, used, 2)
    pays = [(y, c) for y in YEARS for c in ("Venezuela", "Cuba", "Japan", "Mexico")]

    def average(pair: tuple[int, str]) -> dict[str, Any] | None:
        year, where = pair
        n, mean = s.rows(
            "SELECT COUNT(*), AVG(s.salary) FROM salaries s JOIN people p USING (player_id) "
            "WHERE s.year = ? AND p.birth_country = ?",
            year,
            where,
        )[0]
        if n < 5:
            return None
        return q(
            "rb-average-salary-by-country",
            f"What was the average salary in {year} of the players born in {_place(where)} "
            "who had a salary listed?",
            "table",
            "aggregation",
            "number",
            _r(mean),
        )

    yield from _draw(rng, pays, average, 2)


def _comparisons(s: Seasons, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Two teams or two players compared, in one table or across two."""
    pairs = [(a, b, y) for a in s.teams for b in s.teams if a < b for y in YEARS]
    pairs = [(a, b, y) for a, b, y in pairs if s.team_id(a, y) and s.team_id(b, y)]

    def more_wins(triple: tuple[str, str, int]) -> dict[str, Any] | None:
        a, b, year = triple
        won = {a: s.wins(a, year), b: s.wins(b, year)}
        if won[a] == won[b]:
            return None
        gold = max(won, key=lambda k: won[k])
        return q(
            "rb-more-wins",
            f"Who won more games in {year}, the {a} or the {b}?",
            "table",
            "comparison",
            "text",
            gold,
            universe=[t for t in (a, b) if t != gold],
        )

    yield from _draw(rng, pairs, more_wins, 3)

    def more_paid(triple: tuple[str, str, int]) -> dict[str, Any] | None:
        a, b, year = triple
        paid = {a: s.payroll(a, year), b: s.payroll(b, year)}
        if paid[a] == paid[b]:
            return None
        gold = max(paid, key=lambda k: paid[k])
        return q(
            "rb-bigger-payroll",
            f"Which team spent more on listed player salaries in {year}: the {a} or the {b}?",
            "table",
            "comparison",
            "text",
            gold,
            universe=[t for t in (a, b) if t != gold],
        )

    yield from _draw(rng, pairs, more_paid, 3)
    hitters = {
        y: [
            n
            for n in s.column(
                f"SELECT {PLAYER} FROM batting b JOIN people p USING (player_id) "
                "WHERE b.year = ? GROUP BY b.player_id HAVING SUM(b.hr) >= 20",
                y,
            )
            if n in s.named
        ]
        for y in YEARS
    }
    duels = [(a, b, y) for y in YEARS for a in hitters[y] for b in hitters[y] if a < b]

    def more_homers(triple: tuple[str, str, int]) -> dict[str, Any] | None:
        a, b, year = triple
        hit = {a: s.home_runs(a, year), b: s.home_runs(b, year)}
        if hit[a] == hit[b]:
            return None
        gold = max(hit, key=lambda k: hit[k])
        return q(
            "rb-more-home-runs",
            f"Who hit more home runs in {year}, {a} or {b}?",
            "table",
            "comparison",
            "text",
            gold,
            universe=[p for p in (a, b) if p != gold],
        )

    yield from _draw(rng, duels, more_homers, 2)


def _sets(s: Seasons, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Short lists: both of two awards, both of two seasons, either of two seasons."""

    def both_awards(year: int) -> dict[str, Any] | None:
        def winners(award: str) -> set[str]:
            return set(
                s.column(
                    f"SELECT {PLAYER} FROM awards a JOIN people p USING (player_id) "
                    "WHERE a.award = ? AND a.year = ?",
                    award,
                    year,
                )
            )

        glove, slugger = winners("Gold Glove"), winners("Silver Slugger")
        gold = sorted(glove & slugger)
        if not 2 <= len(gold) <= 6 or set(gold) & s.shared:
            return None
        if any("." in name for name in gold):  # "J. J. Hardy" is written "J.J." as often
            return None
        return q(
            "rb-glove-and-slugger",
            f"Which players won both a Gold Glove and a Silver Slugger in {year}?",
            "table",
            "set",
            "set",
            gold,
            universe=_others(glove | slugger, *gold),
        )

    yield from _draw(rng, YEARS, both_awards, 3)
    seasons = list(zip(YEARS, YEARS[1:], strict=False))

    def ninety_twice(pair: tuple[int, int]) -> dict[str, Any] | None:
        first, then = pair
        gold = sorted(
            set(s.column("SELECT name FROM teams WHERE year = ? AND w >= 90", first))
            & set(s.column("SELECT name FROM teams WHERE year = ? AND w >= 90", then))
        )
        if not 2 <= len(gold) <= 5:
            return None
        return q(
            "rb-ninety-wins-both-seasons",
            f"Which teams won at least 90 games in both {first} and {then}?",
            "table",
            "set",
            "set",
            gold,
            universe=_others(s.teams, *gold),
        )

    yield from _draw(rng, seasons, ninety_twice, 3)

    def pennants(pair: tuple[int, int]) -> dict[str, Any]:
        gold = s.column(
            "SELECT DISTINCT name FROM teams WHERE lg_win = 'Y' AND year IN (?, ?)", *pair
        )
        return q(
            "rb-pennant-either-season",
            f"Which teams won their league's pennant in {pair[0]} or {pair[1]}?",
            "table",
            "set",
            "set",
            gold,
            universe=_others(s.teams, *gold),
        )

    yield from _draw(rng, seasons, pennants, 2)


def _arithmetic(s: Seasons, rng: random.Random) -> Iterable[dict[str, Any]]:
    """A change between seasons, a percentage, a margin, the second of a ranking."""
    steps = [(t, y) for t, y in s.team_years if y + 1 in YEARS and s.team_id(t, y + 1)]

    def gain(pair: tuple[str, int]) -> dict[str, Any] | None:
        team, year = pair
        more = s.wins(team, year + 1) - s.wins(team, year)
        if more <= 0:
            return None
        return q(
            "rb-win-gain",
            f"How many more games did the {team} win in {year + 1} than in {year}?",
            "table",
            "post-processing",
            "number",
            more,
        )

    yield from _draw(rng, steps, gain, 2)

    def share(pair: tuple[str, int]) -> dict[str, Any]:
        team, year = pair
        w, g = s.rows("SELECT w, g FROM teams WHERE name = ? AND year = ?", team, year)[0]
        return q(
            "rb-win-percentage",
            f"What percentage of their games did the {team} win in {year}?",
            "table",
            "post-processing",
            "number",
            _r(100 * w / g),
        )

    yield from _draw(rng, s.team_years, share, 2)

    def second(year: int) -> dict[str, Any] | None:
        gold = _top(s.score("SELECT name, hr FROM teams WHERE year = ?", year), 2)
        if gold is None:
            return None
        return q(
            "rb-second-most-home-runs",
            f"Which team hit the second most home runs in {year}?",
            "table",
            "post-processing",
            "text",
            gold,
            universe=_others(s.teams, gold),
        )

    yield from _draw(rng, YEARS, second, 2)

    def margin(pair: tuple[str, int]) -> dict[str, Any] | None:
        team, year = pair
        n = s.one("SELECT r - ra FROM teams WHERE name = ? AND year = ?", team, year)
        if n <= 0:
            return None
        return q(
            "rb-run-margin",
            f"By how many runs did the {team} outscore their opponents over the {year} season?",
            "table",
            "post-processing",
            "number",
            n,
        )

    yield from _draw(rng, s.team_years, margin, 2)


def _through_keys(s: Seasons, rng: random.Random) -> Iterable[dict[str, Any]]:
    """An award winner's team or home runs, a team's best hitter's birth year: two tables."""
    races = [(y, lg) for y in YEARS for lg in ("AL", "NL")]

    def winner(award: str, year: int, league: str) -> str:
        return str(
            s.one(
                "SELECT player_id FROM awards WHERE award = ? AND year = ? AND league = ?",
                award,
                year,
                league,
            )
        )

    def named(league: str) -> str:
        return "American League" if league == "AL" else "National League"

    def cy_young(pair: tuple[int, str]) -> dict[str, Any] | None:
        year, league = pair
        teams = s.column(
            "SELECT t.name FROM pitching x JOIN teams t USING (year, team_id) "
            "WHERE x.player_id = ? AND x.year = ?",
            winner("Cy Young Award", year, league),
            year,
        )
        if len(teams) != 1:  # traded that season
            return None
        return q(
            "rb-team-of-cy-young-winner",
            f"Which team did the {named(league)}'s {year} Cy Young Award winner pitch for?",
            "table",
            "multi-hop",
            "text",
            teams[0],
            universe=_others(s.teams, teams[0]),
        )

    yield from _draw(rng, races, cy_young, 2)

    def mvp(pair: tuple[int, str]) -> dict[str, Any] | None:
        year, league = pair
        n = s.one(
            "SELECT SUM(hr) FROM batting WHERE player_id = ? AND year = ?",
            winner("Most Valuable Player", year, league),
            year,
        )
        if not n:  # a pitcher
            return None
        return q(
            "rb-home-runs-of-mvp",
            f"How many home runs did the {named(league)}'s {year} Most Valuable Player hit "
            "that season?",
            "table",
            "multi-hop",
            "number",
            n,
        )

    yield from _draw(rng, races, mvp, 2)

    def born(pair: tuple[str, int]) -> dict[str, Any] | None:
        team, year = pair
        hit = s.score(
            "SELECT player_id, hr FROM batting WHERE team_id = ? AND year = ?",
            s.team_id(team, year),
            year,
        )
        best = _top(hit)
        if best is None or not hit[best]:
            return None
        n = s.one("SELECT birth_year FROM people WHERE player_id = ?", best)
        return q(
            "rb-birth-year-of-top-hitter",
            f"In what year was the player who hit the most home runs for the {team} in {year} "
            "born?",
            "table",
            "multi-hop",
            "number",
            n,
        )

    yield from _draw(rng, s.team_years, born, 2)


def _across_notes(s: Seasons, rng: random.Random) -> Iterable[dict[str, Any]]:
    """A table and a note: a birth country's capital, a team or a country named by a note."""
    capitals = sorted(c for _, c in COUNTRIES.values())
    regulars = s.rows(
        f"SELECT DISTINCT {PLAYER}, p.birth_country FROM people p JOIN batting b "
        f"USING (player_id) WHERE b.ab >= 300 AND p.birth_country IN "
        f"({', '.join('?' * len(COUNTRIES))}) ORDER BY 1",
        *COUNTRIES,
    )

    def capital(row: tuple[str, str]) -> dict[str, Any] | None:
        name, where = row
        if name not in s.named:
            return None
        gold = COUNTRIES[where][1]
        return q(
            "rb-capital-of-birth-country",
            f"What is the capital of the country {name} was born in?",
            "both",
            "multi-hop",
            "text",
            gold,
            universe=_others(capitals, gold),
        )

    yield from _draw(rng, regulars, capital, 2)
    cities = [(c, y) for c in sorted(CITIES) for y in YEARS]

    def city_wins(pair: tuple[str, int]) -> dict[str, Any]:
        city, year = pair
        team, described = CITIES[city]
        return q(
            "rb-wins-of-team-by-city",
            f"How many games did the major-league team from {described} win in {year}?",
            "both",
            "multi-hop",
            "number",
            s.wins(team, year),
        )

    yield from _draw(rng, cities, city_wins, 2)
    by_capital = [(c, y) for c in sorted(COUNTRIES) for y in YEARS]

    def players_from(pair: tuple[str, int]) -> dict[str, Any]:
        where, year = pair
        n = s.one(
            "SELECT COUNT(DISTINCT b.player_id) FROM batting b JOIN people p USING (player_id) "
            "WHERE b.year = ? AND p.birth_country = ?",
            year,
            where,
        )
        return q(
            "rb-players-by-capital",
            f"How many players born in the country whose capital is {COUNTRIES[where][1]} "
            f"played in the majors in {year}?",
            "both",
            "multi-hop",
            "number",
            n,
        )

    yield from _draw(rng, by_capital, players_from, 2)


def _premises(s: Seasons) -> Iterable[dict[str, Any]]:
    """A player, teams and a season the data never had; a team in a league it had left."""
    for player in ABSENT["players"]:
        assert player not in s.named and player not in s.shared
    for team in ABSENT["teams"]:
        assert team not in s.teams
    assert s.one("SELECT MAX(year) FROM teams") < 2019
    ichiro = s.column(
        "SELECT t.name FROM batting b JOIN teams t USING (year, team_id) "
        "WHERE b.player_id = ? AND b.year = 2012",
        s.named["Ichiro Suzuki"],
    )
    assert "Chicago Cubs" not in ichiro
    assert s.one("SELECT league FROM teams WHERE name = 'Houston Astros' AND year = 2014") == "AL"
    asked = [
        f"How many home runs did {ABSENT['players'][0]} hit in 2012?",
        f"How many games did the {ABSENT['teams'][0]} win in 2013?",
        f"What was the {ABSENT['teams'][1]}' payroll in 2011?",
        "How many games did the Boston Red Sox win in 2019?",
        "How much did the Chicago Cubs pay Ichiro Suzuki in 2012?",
        "How many games did the Houston Astros win as a National League team in 2014?",
    ]
    for question in asked:
        yield q("rb-premise", question, "table", "false premise", "premise", "")


def build(wikipedia: Path | None = None) -> list[dict[str, Any]]:
    """Every question, with an id; all of them ``calibration``.

    With ``wikipedia`` (the vital articles' summaries) the notes are written from it first.
    """
    if wikipedia is not None:
        notes(wikipedia)
    seasons = Seasons()
    rng = random.Random(SEED)
    made = [
        *_simple(seasons, rng),
        *_conditions(seasons, rng),
        *_aggregations(seasons, rng),
        *_comparisons(seasons, rng),
        *_sets(seasons, rng),
        *_arithmetic(seasons, rng),
        *_through_keys(seasons, rng),
        *_across_notes(seasons, rng),
        *_premises(seasons),
    ]
    return _checked(numbered(made, "calibration"))


__all__ = ["FILES", "MODIFIED", "QUESTIONS", "build", "notes"]
