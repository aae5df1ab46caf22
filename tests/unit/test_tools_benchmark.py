"""The tools benchmark's questions and judge (benchmarks/measurements/tools.py)."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from typing import Any

import pytest

from benchmarks.measurements import rjoins_questions, rnotes_questions
from benchmarks.measurements.tools import filter_match, judge
from benchmarks.measurements.tools_questions import QUESTIONS, rows
from crag.eval.records import read_records


def test_the_questions_are_many_labelled_split_and_computed_from_the_files():
    questions = read_records(QUESTIONS)
    assert len(questions) >= 200
    assert len({q["id"] for q in questions}) == len(questions)
    assert set(Counter(q["tool"] for q in questions)) == {"table", "catalog", "search"}
    assert {q["split"] for q in questions} == {"calibration", "test"}
    adelie_dream = next(
        q
        for q in questions
        if q["question"] == "How many Adelie penguins were recorded on the island Dream?"
    )
    data = rows("penguins.csv")
    assert adelie_dream["gold"] == sum(
        r["species"] == "Adelie" and r["island"] == "Dream" for r in data
    )


def test_the_table_and_text_set_crosses_from_a_note_to_a_table_and_back():
    questions = read_records(rnotes_questions.QUESTIONS)
    assert {q["tool"] for q in questions} == {"both"}
    assert {q["split"] for q in questions} == {"calibration"}
    notes = {n for n in rnotes_questions.FILES if n.endswith(".md")}
    assert "united_states.md" in notes and len(notes) >= 20
    tables = {n for n in rnotes_questions.FILES if n.endswith(".csv")}
    assert tables == set(rjoins_questions.FILES)
    for q in questions:
        capital = re.search(r"whose capital is (.+?)(?: place in \d+)?\?$", q["question"])
        named = capital[1] if capital else q["gold"]
        assert any(named in p.read_text() for n, p in rnotes_questions.FILES.items() if n in notes)
    oslo = next(
        q
        for q in questions
        if q["question"].startswith("Which supplier") and "Oslo" in q["question"]
    )
    assert oslo["gold"] == "Norske Meierier"


NUMBER = {"gold_kind": "number", "gold": 2550, "universe": []}
SET = {"gold_kind": "set", "gold": ["a.csv", "b.md"], "universe": ["a.csv", "b.md", "c.pdf"]}
NONE = {"gold_kind": "no-document", "gold": []}
NAME = {"gold_kind": "text", "gold": "Biscoe", "universe": ["Biscoe", "Dream", "Torgersen"]}
DAYS = {
    "gold_kind": "set",
    "gold": ["Friday", "Thursday"],
    "universe": ["Thursday", "Friday", "Sunday"],
}


SUMMARY = {"gold_kind": "summary-any", "gold": ["gpl", "gnu general public license"]}


@pytest.mark.parametrize(
    ("prediction", "row", "verdict"),
    [
        ("2,550", NUMBER, "right"),
        ("About 2551 units [S1].", NUMBER, "right"),  # within 1%
        ("2,600", NUMBER, "wrong"),
        ("I don't know.", NUMBER, "unknown"),
        ("None: the collection holds no document of type pdf.", {**NUMBER, "gold": 0}, "right"),
        ("a.csv, b.md", SET, "right"),
        ("a.csv", SET, "wrong"),
        ("a.csv, b.md, c.pdf", SET, "wrong"),
        ("Thur, Fri", DAYS, "right"),  # as the table holds them
        ("Thursday, Friday", DAYS, "right"),
        ("Thur, Fri, Sun", DAYS, "wrong"),
        ("Thur", DAYS, "wrong"),
        ("Biscoe", NAME, "right"),
        ("Biscoe and Dream", NAME, "wrong"),
        ("Brasilia.", {**NAME, "gold": "Brasília", "universe": ["Brasília", "Lima"]}, "right"),
        ("Denver Broncos", {"gold_kind": "squad", "gold": ["Denver Broncos"]}, "right"),
        (
            "No document in the collection matches what the question names (type=pdf).",
            NONE,
            "right",
        ),
        ("The Denver Broncos.", NONE, "wrong"),  # answered as if the PDFs were there
        ("I don't know.", NONE, "unknown"),
        ("The GNU General Public License, a copyleft licence.", SUMMARY, "right"),
        ("It is the GPL, version 3.", SUMMARY, "right"),  # one topic is enough
        ("A license: use at your own risk.", SUMMARY, "wrong"),  # names none of its topics
    ],
)
def test_the_judge_counts_as_a_user_would(prediction, row, verdict):
    assert judge(prediction, row) == verdict


def test_a_filter_is_right_when_it_is_the_one_the_question_means():
    row = {"where": "ingested>={today},ingested<{tomorrow}"}
    today = dt.date(2026, 11, 26)
    assert filter_match(row, "ingested>=2026-11-26,ingested<2026-11-27", today)["where_right"]
    assert not filter_match(row, "", today)["where_right"]
    assert filter_match({}, "type=pdf", today) == {}  # a question with no labelled filter
    labelled = [q for q in read_records(QUESTIONS) if "where" in q]
    assert {q["tool"] for q in labelled} == {"catalog", "search"} and len(labelled) >= 40


def test_the_table_confidence_takes_the_inputs_that_rank_answers_on_tables_left_out():
    from benchmarks.calibration.tool_confidence import select, source_of, table_model

    records = []
    for t in range(4):  # four tables; on each, a guessed column is wrong twice in three
        for i in range(12):
            guessed = float(i % 3 == 0)
            right = not guessed or i % 2 == 0
            records.append(
                {
                    "used": "table",
                    "verdict": "right" if right else "wrong",
                    "sql": [f'SELECT x FROM "table{t}" WHERE y = {i}'],
                    "tool_signals": {"guessed": guessed, "noise": float((i * 7 + t) % 5)},
                }
            )
    assert source_of(records[0]) == "table0"
    names, left_out_auc = select(records)
    assert names[0] == "guessed" and left_out_auc > 0.7
    model = table_model(records)
    assert model["features"][0] == "guessed" and model["weights"][0] < 0
    assert model["wrong"] == 8 and model["sources"] == ["table0", "table1", "table2", "table3"]


def test_the_catalog_confidence_is_fitted_leaving_a_folder_out_and_read_by_the_graph(tmp_path):
    import nodes.shared.confidence as confidence_module
    from benchmarks.calibration.tool_confidence import CATALOG, table_model

    records = []
    for folder in ("a", "b", "c"):  # in every folder, a word left unread is wrong 3 times in 4
        for i in range(12):
            unread = float(i % 3 == 0)
            right = not unread or i % 4 == 0
            records.append(
                {
                    "used": "catalog",
                    "source": folder,
                    "verdict": "right" if right else "wrong",
                    "tool_signals": {"unread": unread, "none": 0.0, "typed": float(i % 2)},
                }
            )
    records.append({"used": "table", "source": "a", "verdict": "wrong", "tool_signals": {}})
    model = table_model(records, CATALOG)
    assert model["features"][0] == "unread" and model["weights"][0] < 0
    assert model["sources"] == ["a", "b", "c"] and model["answers"] == 36
    assert model["auc_left_out_by_source"] > 0.7
    target = tmp_path / "tool_confidence.json"
    target.write_text(
        json.dumps({"kinds": {"catalog": {"answers": 36, "right": 27}}, "catalog_model": model})
    )
    clean = confidence_module.tool_confidence("catalog", {"unread": 0.0}, path=target)
    missed = confidence_module.tool_confidence("catalog", {"unread": 2.0}, path=target)
    assert clean is not None and missed is not None and missed < 0.5 < clean
    assert confidence_module.tool_confidence("catalog", path=target) == round(28 / 38, 3)


def test_the_risk_table_counts_given_and_wrong_answers_per_kind_at_each_threshold():
    from benchmarks.calibration.tool_confidence import risk_coverage
    from benchmarks.measurements.tools import risk

    answers = [
        {"used": "catalog", "verdict": v, "tool_signals": {"unread": 0.0}}
        for v in ("right", "right", "wrong")
    ]
    rows = risk_coverage(answers, [0.9, 0.5, 0.3])
    assert (rows[0]["given"], rows[0]["wrong"]) == (3, 1)  # min_confidence 0: all given
    assert (rows[4]["given"], rows[4]["right"], rows[4]["wrong"]) == (2, 2, 0)  # 0.4
    assert rows[9]["given"] == 1 and rows[9]["wrong_share"] == "0%"
    text = risk([*answers, {"used": "search", "verdict": "wrong"}], "test")
    assert "catalog answers (test): 3, 1 wrong" in text and "table answers" not in text
    held = "The answer 'x' is not given: its confidence 0.33 is under min_confidence 0.40."
    texts: list[dict[str, Any]] = [
        {"used": "search", "verdict": "right", "confidence": 0.8},
        {
            "used": "search",
            "verdict": "unknown",
            "withheld": "x",
            "withheld_verdict": "wrong",
            "warnings": [held],
        },  # a withheld text answer: its guess, at its warning's confidence
        {
            "used": "search",
            "verdict": "unknown",
            "withheld": "y",
            "withheld_verdict": "right",
            "withheld_confidence": 0.2,
        },
    ]
    text = risk([*answers, *texts], "test")
    assert "text answers (test): 3, 1 wrong; AUC 0.50" in text
    assert "all answers (test): 6, 2 wrong" in text
    shown = text.split("### text")[1].split("###")[0]
    assert "| 0.3 | 2 | 1 | 1 | 50% |" in shown and "| 0.4 | 1 | 1 | 0 | 0% |" in shown


def test_a_summarys_confidence_is_fitted_on_its_readings_signals_leaving_a_folder_out():
    from benchmarks.calibration.tool_confidence import DOCUMENT, table_model

    records = []
    for folder in ("a", "b", "c"):  # a summary naming none of the document's words is wrong
        for i in range(10):
            covered = (i % 5) / 4
            right = covered > 0 or i == 5
            records.append(
                {
                    "used": "document",
                    "source": folder,
                    "verdict": "right" if right else "wrong",
                    "tool_signals": {"covered": covered, "named": 0.0, "unread": 0.0},
                }
            )
    model = table_model(records, DOCUMENT)
    assert model["features"][0] == "covered" and model["weights"][0] > 0
    assert model["sources"] == ["a", "b", "c"] and model["auc_left_out_by_source"] > 0.7


def test_a_table_answer_is_left_out_with_its_collection_so_a_collections_trait_is_not_learnt():
    from benchmarks.calibration.tool_confidence import (
        SIGNS,
        Tool,
        collection_of,
        select,
        source_of,
        table_answers,
    )

    records = []
    for c, tables in (("a", 1.0), ("b", 6.0), ("c", 2.0), ("d", 3.0)):
        for i in range(16):  # one collection of many tables, and many wrong answers
            wrong = (i % 2 == 0) if c == "b" else (i % 8 == 3)
            judged = 0.8 + 0.05 * (not wrong) + 0.1 * ((i * 7) % 5) / 5
            records.append(
                {
                    "used": "table",
                    "collection": c,
                    "verdict": "wrong" if wrong else "right",
                    "sql": [f'SELECT x FROM "t{c}{i % 3}"'],
                    "tool_signals": {"tables": tables, "judged": judged},
                }
            )
    assert collection_of(records[0]) == "a" and collection_of({"sql": ["SELECT 1 FROM t"]}) == "t"
    by_table, _ = select(records, Tool(table_answers, source_of, SIGNS))
    assert "tables" not in by_table  # ranked within a table, a collection's trait ranks nothing
    assert select(records)[0] == ["judged"]


def test_left_out_answers_are_ranked_within_their_source_so_a_folds_offset_ranks_nothing():
    import numpy as np

    from benchmarks.calibration.confidence import auc
    from benchmarks.calibration.tool_confidence import within

    y = np.array([1, 0, 1, 0, 1, 0, 1, 1], dtype=float)
    sources = ["a"] * 4 + ["b"] * 4
    # each fold's model ranks its own answers right, but one scores on a higher scale
    scores = y * 0.1 + np.array([5.0] * 4 + [0.0] * 4)
    assert auc(scores, y) < 0.8 and within(scores, y, sources) == 1.0
    assert within(-scores, y, sources) == 0.0
    assert np.isnan(within(scores, np.ones(8), sources))  # no source holds a wrong answer


def test_the_flights_set_counts_through_keys_that_drop_rows():
    """Golds recounted from the CSV files without SQL: the set's joins say what they mean."""
    import csv

    from benchmarks.measurements import rflights_questions

    def rows(name: str) -> list[dict[str, str]]:
        with rflights_questions.FILES[name].open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))

    questions = read_records(rflights_questions.QUESTIONS)
    assert {q["split"] for q in questions} == {"calibration"} and len(questions) >= 70
    flights, planes = rows("flights.csv"), {p["tailnum"]: p for p in rows("planes.csv")}
    airports = {a["name"]: a["faa"] for a in rows("airports.csv")}
    assert any(f["dest"] not in airports.values() for f in flights)  # a key that drops rows
    made = [q for q in questions if q["template"] == "rf-flights-by-maker"]
    assert made
    for q in made:
        asked = re.match(
            r"How many flights out of (.+) were flown on planes made by (\w+)\?", q["question"]
        )
        assert asked, q["question"]
        origin, maker = asked.groups()
        made_by = rflights_questions.MAKERS[maker]
        assert q["gold"] == sum(
            f["origin"] == airports[origin]
            and planes.get(f["tailnum"], {}).get("manufacturer") == made_by
            for f in flights
        )


def test_the_baseball_set_crosses_notes_and_tables_and_counts_a_traded_player_once():
    """Golds recounted from the CSV files and the notes without SQL, and the shapes' mix."""
    import csv

    from benchmarks.measurements import rbaseball_questions

    def rows(name: str) -> list[dict[str, str]]:
        with rbaseball_questions.FILES[name].open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))

    questions = read_records(rbaseball_questions.QUESTIONS)
    assert {q["split"] for q in questions} == {"calibration"} and len(questions) >= 60
    kinds = Counter(q["type"] for q in questions)
    assert set(kinds) == {
        "simple",
        "condition",
        "aggregation",
        "comparison",
        "set",
        "post-processing",
        "multi-hop",
        "false premise",
    }
    assert kinds["multi-hop"] >= 12 and kinds["false premise"] >= 6
    assert {q["tool"] for q in questions} == {"table", "text", "both"}
    assert {q["type"] for q in questions if q["tool"] == "both"} == {"multi-hop"}
    assert all(q["gold_kind"] == "premise" for q in questions if q["type"] == "false premise")
    notes = {
        p.read_text(encoding="utf-8").splitlines()[0].removeprefix("# "): p.read_text("utf-8")
        for n, p in rbaseball_questions.FILES.items()
        if n.endswith(".md")
    }
    assert len(notes) >= 4
    spelt = {"Dominican Republic": "D.R."}  # as people.csv writes it
    batting, people = rows("batting.csv"), {p["player_id"]: p for p in rows("people.csv")}
    assert len({(b["player_id"], b["year"]) for b in batting}) < len(batting)  # traded players
    crossed = [q for q in questions if q["template"] == "rb-players-by-capital"]
    assert crossed
    for q in crossed:
        asked = re.search(r"capital is (.+) played in the majors in (\d+)", q["question"])
        assert asked, q["question"]
        capital, year = asked.groups()
        (title,) = [t for t, text in notes.items() if capital in text]
        born = spelt.get(title, title)
        assert q["gold"] == len(
            {
                b["player_id"]
                for b in batting
                if b["year"] == year and people[b["player_id"]]["birth_country"] == born
            }
        )
    by_city = [q for q in questions if q["template"] == "rb-wins-of-team-by-city"]
    assert by_city
    for q in by_city:
        asked = re.search(r"team from the (.+) win in (\d+)\?", q["question"])
        assert asked, q["question"]
        said, year = asked.groups()
        (city,) = [t for t, text in notes.items() if f"{t} is the {said}" in text]
        (won,) = [
            t["w"] for t in rows("teams.csv") if t["name"].startswith(city) and t["year"] == year
        ]
        assert q["gold"] == int(won)
    sluggers = [q for q in questions if q["template"] == "rb-sluggers-count"]
    assert sluggers
    for q in sluggers:
        asked = re.search(r"at least (\d+) home runs in (\d+)", q["question"])
        assert asked, q["question"]
        at_least, year = map(int, asked.groups())
        hit: Counter[str] = Counter()
        for b in batting:
            if int(b["year"]) == year:
                hit[b["player_id"]] += int(b["hr"])
        assert q["gold"] == sum(n >= at_least for n in hit.values())


def test_a_recorded_query_is_checked_against_the_question_it_was_asked_with():
    """The loop's call pairs a query with its question; a nested answer's step says its own."""
    from benchmarks.measurements.tools import asked_as

    sql = "SELECT count(*) FROM customers WHERE country = 'Belgium'"
    looped = {
        "question": "How many customers are in the country whose capital is Brussels?",
        "tried": "read_document(name='belgium.md'); "
        f"query_table(question='How many customers are in Belgium?', sql={sql!r})",
    }
    assert asked_as(looped, sql, "2") == "How many customers are in Belgium?"
    nested = {
        "question": looped["question"],
        "prediction": "2 [1, 2]\n\nSteps:\nWhich country's capital is Brussels? Belgium [1]\n"
        "How many customers does the shop have in Belgium? 2 [2]",
    }
    assert asked_as(nested, sql, "2") == "How many customers does the shop have in Belgium?"
    assert asked_as(nested, sql, "3") == looped["question"]  # no step gave this answer
    assert asked_as({"question": "q?"}, sql, "2") == "q?"
