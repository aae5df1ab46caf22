"""An answer's confidence: its signals, the fitted model, the gate, and where it is shown."""

from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

import numpy as np
import pytest
from langgraph.runtime import Runtime

import nodes.shared.confidence as confidence_module
from benchmarks.calibration import confidence as bench
from benchmarks.calibration import tool_confidence as tool_confidence_fit
from benchmarks.measurements import tools, tools_questions
from crag.eval.metrics import truthfulness
from crag.eval.records import read_records
from crag.run import run_question
from crag_core.clients.answer_cache import AnswerCache
from crag_core.schema.context import Context
from crag_core.text.answer_text import NO_ANSWER
from graph.graph import build_graph
from nodes.parts.collect_part import combined_confidence
from nodes.shared.confidence import confidence, features, gate, held_back, signals
from nodes.turn.chat import earlier_turns, turn_messages
from nodes.turn.finalize import finalize
from tests.fakes import KB_DOCS, WEB_DOCS, make_services

MODEL = {
    "features": ["copied", "subject_overlap", "subject_overlap:missing"],
    "weights": [1.0, 2.0, -1.0],
    "intercept": -1.0,
    "min_confidence": 0.5,
}


@pytest.fixture
def model(monkeypatch):
    """A fixed model instead of the fitted one, so the tests read its arithmetic."""
    monkeypatch.setattr(confidence_module, "_fit", lambda: MODEL)
    return MODEL


def sigmoid(z: float) -> float:
    return round(1 / (1 + math.exp(-z)), 3)


def test_signals_say_where_the_answer_was_found_and_what_was_measured():
    state: Any = {
        "question": "Who won Super Bowl 50?",
        "relevant_documents": [KB_DOCS[0], *WEB_DOCS],
        "retrieval_score": 0.5,
        "web_searched": True,
        "evidence_score": 0.7,
    }
    found = signals(state, "Denver Broncos")
    assert found["in_kb"] == 1.0 and found["in_web"] == 0.0 and found["agree"] == 0.0
    assert found["web"] == 1.0 and found["grounding_score"] is None
    assert found["subject_overlap"] == 0.75  # super, bowl, 50 of won, super, bowl, 50
    nowhere = signals(state, "Green Bay Packers")
    assert nowhere["copied"] == 0.0 and nowhere["subject_overlap"] is None


def test_signals_say_the_answers_kind_its_documents_rank_and_whether_the_judges_agree():
    state: Any = {
        "question": "Who won Super Bowl 50?",
        "relevant_documents": [*WEB_DOCS, KB_DOCS[0]],
        "retrieval_score": 0.8,
        "support_score": 0.9,
    }
    found = signals(state, "Denver Broncos")
    assert found["type_fits"] == 1.0  # a name for "who"
    assert found["rank"] == float(len(WEB_DOCS))  # the first document holding it
    assert found["judges_agree"] == 1.0
    state["support_score"] = 0.2
    assert signals(state, "Denver Broncos")["judges_agree"] == 0.0
    state["question"] = "How many points did the Broncos score?"
    wrong_kind = signals(state, "Denver Broncos")
    assert wrong_kind["type_fits"] == 0.0
    state["question"] = "What did the Broncos win?"
    assert signals(state, "Denver Broncos")["type_fits"] is None  # "what" sets no kind
    del state["support_score"]
    missing = signals(state, "Green Bay Packers")
    assert missing["rank"] is None and missing["judges_agree"] is None


def test_features_read_a_missing_signal_as_a_flag():
    measured = {"subject_overlap": None, "copied": 1.0}
    names = ["copied", "subject_overlap", "subject_overlap:missing"]
    assert features(measured, names) == [1.0, 0.0, 1.0]


def test_confidence_is_the_fitted_logistic_and_none_for_i_dont_know(model):
    state: Any = {"question": "Which team won Super Bowl 50?", "relevant_documents": KB_DOCS}
    # copied, and its sentence holds super, bowl, 50 of the terms team, won, super, bowl, 50
    assert confidence(state, "Denver Broncos") == sigmoid(-1.0 + 1.0 + 2.0 * 0.6)
    assert confidence(state, "Green Bay") == sigmoid(-1.0 - 1.0)  # in no document
    assert confidence(state, NO_ANSWER) is None


def test_an_answer_under_min_confidence_is_withheld_with_its_guess(model):
    services = make_services()
    graph = build_graph(services=lambda _: services)
    sure_run = run_question(
        "Which team won Super Bowl 50?", Context(answer_cache=False, min_confidence=0), graph=graph
    )
    sure = sure_run.state
    given = sure["confidence"]
    assert 0 < given < 1 and sure["answer"] != NO_ANSWER and sure_run.pass_state["withheld"] is None
    assert sure["messages"][-1].additional_kwargs["confidence"] == given
    ctx = Context(answer_cache=False, min_confidence=min(1.0, given + 0.01))
    held_run = run_question("Which team won Super Bowl 50?", ctx, graph=graph)
    held = held_run.state
    assert held["answer"] == NO_ANSWER and held["sources"] == [] and held["confidence"] is None
    assert held_run.pass_state["withheld"] == {"answer": sure["answer"], "confidence": given}
    assert any("min_confidence" in w and sure["answer"] in w for w in held["warnings"])


def test_a_part_keeps_its_confidence_and_the_reply_takes_the_weakest_or_the_chain():
    parts = [
        {"index": 0, "answer": "Carolina Panthers", "confidence": 0.8},
        {"index": 1, "answer": "Ron Rivera", "confidence": 0.5},
    ]
    state: Any = {"parts": parts, "subquestions": ["a?", "b?"]}
    assert combined_confidence(state, "lines") == 0.5
    state["nested"] = True  # both steps must be right
    assert combined_confidence(state, "Ron Rivera") == 0.4
    assert combined_confidence(state, NO_ANSWER) is None


@pytest.mark.parametrize(
    ("route_answer", "confidence", "given"),
    [
        ("Ron Rivera\n\nSteps: …", 0.3, False),  # combined parts (a chain's product)
        ("Broncos", 0.35, False),  # a cached answer stored under a lower min_confidence
        ("report.pdf, notes.md", 0.9, True),  # a catalog's answer
        ("A summary of report.pdf. [S1]", None, True),  # a whole document read: none measured
        (NO_ANSWER, 0.1, True),  # "I don't know" is said as it is
    ],
)
def test_every_routes_answer_passes_the_one_gate(route_answer, confidence, given):
    state: Any = {
        "question": "q?",
        "answer": route_answer,
        "sources": [{"id": "S1", "source": "report.pdf"}],
        "confidence": confidence,
        "warnings": [],
    }
    out = finalize(state, Runtime(context=Context(min_confidence=0.4)))
    if given:
        assert out["answer"] == route_answer and out["confidence"] == confidence
        assert out["warnings"] == []
    else:
        assert out["answer"] == NO_ANSWER and out["sources"] == [] and out["confidence"] is None
        said = held_back({"answer": route_answer, "confidence": confidence}, 0.4)
        assert out["warnings"] == [said]
        assert out["messages"][-1].content == NO_ANSWER  # the thread keeps what was said


def test_one_gate_compares_every_answer_with_min_confidence():
    assert gate("Broncos", 0.39, 0.4) == {"answer": "Broncos", "confidence": 0.39}
    assert gate("Broncos", 0.4, 0.4) is None  # at the threshold: given
    assert gate("Broncos", None, 0.4) is None  # no confidence measured: given as it is
    assert gate(NO_ANSWER, 0.1, 0.4) is None


def test_a_thread_and_the_cache_give_the_confidence_back(tmp_path):
    messages = turn_messages({"question": "Who won?"}, "Broncos", [], 0.72)
    assert earlier_turns(messages)[0]["confidence"] == 0.72
    cache = AnswerCache(tmp_path / "answers.sqlite")
    cache.store("s", "Who won?", [1.0, 0.0], "Broncos", [], 0.72)
    hit = cache.lookup("s", "Who won?", [1.0, 0.0], 0.9)
    assert hit is not None and hit.confidence == 0.72


def test_a_cache_file_from_before_confidence_gets_the_column(tmp_path):
    path = tmp_path / "answers.sqlite"
    with sqlite3.connect(path) as old:
        old.execute(
            "CREATE TABLE answers (scope TEXT NOT NULL, question TEXT NOT NULL, normalized TEXT"
            " NOT NULL, embedding TEXT NOT NULL, answer TEXT NOT NULL, sources TEXT NOT NULL,"
            " created REAL NOT NULL, PRIMARY KEY (scope, normalized))"
        )
        old.execute("INSERT INTO answers VALUES ('s', 'Q?', 'q', '[1.0]', 'A', '[]', 0)")
    hit = AnswerCache(path).lookup("s", "Q?", [1.0], 0.9)
    assert hit is not None and hit.answer == "A" and hit.confidence is None


def records_where_overlap_decides(n: int = 60) -> list[dict[str, Any]]:
    """Answers that are right when their sentence shares the question's words, else wrong."""
    rows = []
    for i in range(n):
        overlap = (i % 10) / 10
        right = overlap >= 0.5
        rows.append(
            {
                "id": str(i),
                "category": "in_kb",
                "prediction": "Paris" if right else "Lyon",
                "gold_answers": ["Paris"],
                "signals": {"subject_overlap": overlap, "copied": 1.0, "words": 1.0},
            }
        )
    rows.append(
        {
            "id": "idk",
            "category": "in_kb",
            "prediction": NO_ANSWER,
            "gold_answers": ["Paris"],
            "signals": {},
        }
    )
    return rows


def test_the_fit_learns_a_signal_that_separates_and_the_rule_picks_its_threshold():
    records = records_where_overlap_decides()
    x, y, kept = bench.examples(records)
    assert len(kept) == 60 and y.sum() == 30  # "I don't know" is no example
    weights, intercept = bench.fit(x, y)
    overlap = bench.FEATURES.index("subject_overlap")
    assert weights[overlap] > 0
    p = bench.predict(x, weights, intercept)
    assert p[y == 1].min() > p[y == 0].max()  # every right answer above every wrong one
    cv = dict(zip(kept, bench.cross_validated(x, y).tolist(), strict=True))
    threshold = bench.choose_threshold(records, cv)
    scores = {t: truthfulness(bench.gated(records, cv, t)) for t in bench.GRID}
    assert scores[threshold] == max(scores.values()) > scores[0.0]  # the gate pays
    assert all(scores[t] < scores[threshold] for t in bench.GRID if t < threshold)  # lowest


def test_auc_is_the_share_of_right_over_wrong_pairs():
    labels = np.array([1, 1, 0, 0])
    assert bench.auc(np.array([0.9, 0.8, 0.2, 0.1]), labels) == 1.0
    assert bench.auc(np.array([0.1, 0.2, 0.8, 0.9]), labels) == 0.0
    assert bench.auc(np.array([0.5, 0.5, 0.5, 0.5]), labels) == 0.5


def test_select_takes_a_new_signal_only_when_it_separates_better():
    records = records_where_overlap_decides()
    for r in records:  # the shipped inputs see nothing; the kind of the answer decides
        right = r["prediction"] == "Paris"
        r["signals"] = {**r["signals"], "subject_overlap": 0.5, "type_fits": float(right)}
    chosen, rows = bench.select(records)
    by_set = {r["set"]: r for r in rows}
    assert chosen == "+ type" and by_set["+ type"]["auc"] == 1.0
    assert by_set["shipped"]["auc"] <= 0.5 + 1e-9
    for r in records:  # now it carries nothing either: the shipped inputs stay
        r["signals"]["type_fits"] = 1.0
    assert bench.select(records)[0] == "shipped"


def test_the_fit_writes_a_model_the_graph_reads(tmp_path):
    predictions = tmp_path / "predictions.jsonl"
    records = records_where_overlap_decides()
    predictions.write_text("".join(json.dumps(r) + "\n" for r in records))
    model_path = tmp_path / "confidence.json"
    report = bench.fit_command(predictions, tmp_path / "report", model_path)
    assert "Reliability" in report and "Risk and coverage" in report
    model = json.loads(model_path.read_text())
    assert model["features"] == bench.FEATURES and len(model["weights"]) == len(bench.FEATURES)
    x, _, _ = bench.examples(records)
    raw = bench.predict(x, np.array(model["weights"]), model["intercept"])
    assert raw.min() < 0.5 < raw.max()


def test_the_default_min_confidence_is_the_one_the_calibration_chose():
    assert Context().min_confidence == confidence_module._fit()["min_confidence"]


def test_a_tool_answer_carries_its_kinds_share_right_on_calibration(tmp_path):
    calibration = [
        r for r in read_records(tools_questions.QUESTIONS) if r["split"] == "calibration"
    ]
    verdicts = ["right"] * 8 + ["wrong"] * 2 + ["unknown"] * 3  # "I don't know" is no answer
    records = [
        {"id": q["id"], "used": "table", "verdict": v}
        for q, v in zip(calibration, verdicts, strict=False)
    ]
    records.append({"id": calibration[20]["id"], "used": "search", "verdict": "wrong"})
    made = tmp_path / "crag.jsonl"
    made.write_text("".join(json.dumps(r) + "\n" for r in records))
    target = tmp_path / "tool_confidence.json"
    tools.fit([made], target)
    assert json.loads(target.read_text())["kinds"] == {"table": {"answers": 10, "right": 8}}
    assert confidence_module.tool_confidence("table", path=target) == round(9 / 12, 3)
    assert confidence_module.tool_confidence("catalog", path=target) is None  # never measured


def test_a_table_answer_in_two_pools_counts_once_in_the_tool_fit(tmp_path):
    calibration = [
        r for r in read_records(tools_questions.QUESTIONS) if r["split"] == "calibration"
    ]
    runs = tmp_path / "crag.jsonl"
    runs.write_text("")
    answers = [
        {"id": q["id"], "used": "table", "verdict": "right", "sql": f"SELECT {i}"}
        for i, q in enumerate(calibration[:6])
    ]
    pooled, sampled = tmp_path / "pooled.jsonl", tmp_path / "sampled.jsonl"
    pooled.write_text("".join(json.dumps(r) + "\n" for r in answers))
    again = answers[:2] + [answers[2] | {"sql": "SELECT 2 "}, answers[3] | {"sql": "SELECT 9"}]
    sampled.write_text("".join(json.dumps(r) + "\n" for r in again))
    made = tools.fit([runs], tmp_path / "tool_confidence.json", [pooled, sampled])
    assert made["kinds"] == {"table": {"answers": 7, "right": 7}}  # 6, and SELECT 9 besides


def test_the_tool_fit_refuses_the_test_split(tmp_path):
    tested = next(r for r in read_records(tools_questions.QUESTIONS) if r["split"] == "test")
    made = tmp_path / "crag.jsonl"
    made.write_text(json.dumps({"id": tested["id"], "used": "table", "verdict": "right"}) + "\n")
    with pytest.raises(SystemExit, match="not of the calibration split"):
        tools.fit([made], tmp_path / "tool_confidence.json")


def test_a_table_answers_confidence_reads_the_judge_only_where_its_fit_takes_it(tmp_path):
    fitted = tmp_path / "tool_confidence.json"
    model = {"features": ["judged"], "weights": [6.0], "intercept": -3.0}
    fitted.write_text(json.dumps({"kinds": {}, "table_model": model}))
    assert confidence_module.judges_tables(fitted)
    sure = confidence_module.tool_confidence("table:value:1", {"judged": 0.95}, path=fitted)
    doubt = confidence_module.tool_confidence("table:value:1", {"judged": 0.2}, path=fitted)
    assert sure is not None and doubt is not None and doubt < 0.5 < sure
    fitted.write_text(json.dumps({"kinds": {}, "table_model": model | {"features": ["retry"]}}))
    confidence_module._fit.cache_clear()
    assert not confidence_module.judges_tables(fitted)


def test_a_table_answer_the_judge_never_read_keeps_its_kinds_share(tmp_path):
    fitted = tmp_path / "tool_confidence.json"
    model = {"features": ["judged"], "weights": [6.0], "intercept": -3.0}
    kinds = {"table": {"answers": 20, "right": 16}, "table:premise:1": {"answers": 6, "right": 3}}
    fitted.write_text(json.dumps({"kinds": kinds, "table_model": model}))
    premise = confidence_module.tool_confidence("table:premise:1", {"judged": None}, fitted)
    # not the model at a verdict of 0 (0.047): the premise's own share, pulled toward the tool's
    assert premise == round((3 + 4 * 17 / 22) / (6 + 4), 3)


def test_the_table_model_is_fitted_on_the_answers_that_measured_its_inputs():
    def answer(judged: float | None, right: bool, collection: str) -> dict[str, object]:
        kind = "table:value:1" if judged is not None else "table:premise:1"
        return {
            "used": "table",
            "answer_kind": kind,
            "verdict": "right" if right else "wrong",
            "collection": collection,
            "tool_signals": {"judged": judged, "premise": float(judged is None)},
        }

    judged = [
        answer(0.7 + 0.01 * i, right=i >= 6 or i == 3, collection=f"c{i % 3}") for i in range(24)
    ]
    premises = [answer(None, right=i % 2 == 0, collection=f"c{i % 3}") for i in range(12)]
    alone = tool_confidence_fit.table_model(judged)
    pooled = tool_confidence_fit.table_model(judged + premises)
    assert pooled["features"] == ["judged"]
    # the premises, half right at a "verdict" that was never asked, do not flatten the model
    assert pooled["weights"] == alone["weights"] and pooled["intercept"] == alone["intercept"]
    assert (pooled["answers"], pooled["measured"]) == (36, 24)
