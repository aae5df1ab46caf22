"""The mixed benchmark on a tiny dataset: the format, the per-category metrics, both pipelines,
the report, the CLI, the evidence probe and the replay that chooses the thresholds."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from typer.testing import CliRunner

from crag.cli import app
from crag.eval import harness, report
from crag.eval.mixed import load_mixed
from crag_core.errors import ConfigError
from crag_core.schema.context import Context
from tests.fakes import FakeRetriever, FakeWebSearch, doc, make_llm

TINY = {
    "kb": [{"title": "Super Bowl 50", "paragraphs": ["The Denver Broncos won Super Bowl 50."]}],
    "questions": [
        {
            "id": "k1",
            "question": "Who won Super Bowl 50?",
            "answers": ["Denver Broncos"],
            "category": "in_kb",
        },
        {
            "id": "w1",
            "question": "Who painted the Mona Lisa?",
            "answers": ["Leonardo da Vinci"],
            "category": "web_only",
        },
        {
            "id": "u1",
            "question": "Who sang the anthem?",
            "answers": ["Lady Gaga"],
            "category": "unanswerable",
        },
        {"id": "u2", "question": "What did the coach eat?", "category": "unanswerable"},
    ],
}
KB = [doc("super-bowl-50-p000__c0000", "The Denver Broncos won Super Bowl 50.")]
WEB = [
    doc(
        "web:Mona_Lisa",
        "The Mona Lisa was painted by Leonardo da Vinci.",
        source="https://en.wikipedia.org/wiki/Mona_Lisa",
    )
]


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(TINY))
    return path


def responder(prompt: str, text: str) -> Any:
    """A model that knows which evidence answers which question."""
    asked = text.split("Question:")[-1]
    if prompt == "grade_documents":
        answers = ("Broncos" in text and "Super Bowl" in asked) or (
            "Leonardo" in text and "Mona" in asked
        )
        return "yes" if answers else "no"
    if prompt == "generate":
        if "Mona" in asked:
            return "Leonardo da Vinci [S1]"
        return "Denver Broncos [S1]"
    return "yes"


def test_load_mixed_reads_the_format_and_refuses_bad_files(tiny, tmp_path):
    data = load_mixed(tiny)
    assert [p.id for p in data.paragraphs] == ["super-bowl-50-p000"]
    assert [q.category for q in data.questions] == ["in_kb", "web_only", "unanswerable"] + [
        "unanswerable"
    ]
    assert data.questions[3].answers == ()
    for bad, message in [
        ({"kb": [], "questions": TINY["questions"]}, "non-empty"),
        (
            {"kb": TINY["kb"], "questions": [{"id": "x", "question": "q", "category": "maybe"}]},
            "category",
        ),
        (
            {"kb": TINY["kb"], "questions": [{"id": "x", "question": "q", "category": "in_kb"}]},
            "gold answers",
        ),
        ([1, 2], "not the mixed format"),
    ]:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(ConfigError, match=message):
            load_mixed(path)


def test_per_category_sampling_keeps_file_order(tiny):
    questions = load_mixed(tiny).sample(None, 0, per_category=1)
    assert [q.id for q in questions] == ["k1", "w1", "u1"]


@pytest.mark.parametrize("pipeline", ["naive", "crag"])
def test_records_carry_category_abstention_sources_and_costs(fake_services, tiny, pipeline):
    fake_services(llm=make_llm(responder), retriever=FakeRetriever(KB), web=FakeWebSearch(WEB))
    records = {q.id: harness.run_one(pipeline, q, Context()) for q in load_mixed(tiny).questions}
    k1, u1 = records["k1"], records["u1"]
    assert k1["category"] == "in_kb" and k1["prediction"] == "Denver Broncos" and k1["f1"] == 1.0
    assert k1["sources"] == [
        {"id": KB[0].metadata["id"], "source": KB[0].metadata["source"], "text": KB[0].page_content}
    ]
    assert k1["citation_ok"] is True and k1["abstained"] is False
    for key in (
        "path",
        "retries",
        "web_search_used",
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "cached_prompt_tokens",
        "latency_s",
    ):
        assert key in k1
    assert u1["f1"] is None and u1["exact_match"] is None  # not scored as SQuAD
    if pipeline == "crag":
        # The knowledge base and the web both fail the evaluator: CRAG says so.
        assert u1["abstained"] is True and u1["citation_ok"] is None
        assert (
            records["w1"]["prediction"] == "Leonardo da Vinci" and records["w1"]["web_search_used"]
        )
    else:  # naive answers from whatever it retrieved
        assert u1["abstained"] is False and u1["path"] == [
            "retrieve",
            "generate",
            "validate_citations",
            "choose_answer",
            "finalize",
        ]


def record(
    category: str,
    f1: float | None,
    abstained: bool,
    cited: bool | None,
    calls: int,
    latency: float,
    unique: bool = True,
) -> dict[str, Any]:
    return {
        "id": f"{category}-{f1}-{latency}" if unique else category,
        "category": category,
        "prediction": "I don't know." if abstained else "Paris" if f1 else "Lyon",
        "gold_answers": ["Paris"] if category != "unanswerable" else [],
        "exact_match": f1,
        "f1": f1,
        "abstained": abstained,
        "citation_ok": cited,
        "web_search_used": category != "in_kb",
        "llm_calls": calls,
        "prompt_tokens": 100 * calls,
        "cached_prompt_tokens": 50,
        "completion_tokens": 5,
        "latency_s": latency,
        "retries": 0,
    }


def test_group_metrics_score_each_kind_of_question_as_it_should_be():
    rows = [
        record("in_kb", 1.0, False, True, 3, 10.0),
        record("in_kb", 0.0, True, None, 2, 20.0),
        record("unanswerable", None, True, None, 2, 8.0),
        record("unanswerable", None, False, False, 3, 12.0),
    ]
    m = report.group_metrics(rows)
    assert m["f1"] == 50.0 and m["exact_match"] == 50.0  # answerable questions only
    assert m["false_abstention"] == 50.0 and m["abstention"] == 50.0
    assert m["citation_precision"] == 50.0  # of the two answers that cite
    assert m["llm_calls_median"] == 2.5 and m["total_s"] == 50.0 and m["latency_p50_s"] == 11.0
    # right (Paris), unknown (in_kb, abstained), unknown (unanswerable), wrong (answered)
    assert (m["right"], m["unknown"], m["wrong"], m["truthfulness"]) == (1, 2, 1, 0.0)
    assert m["right_of_answers"] == 50.0
    summary = report.summarize_mixed(rows, run="r", pipeline="crag", settings={"model": "local"})
    assert set(summary["by_category"]) == {"in_kb", "unanswerable"}
    assert summary["by_category"]["unanswerable"]["f1"] is None
    assert summary["commit"] and summary["model"] == "local"


def test_report_compares_runs_per_category_with_ratios(tmp_path):
    naive = [
        record("in_kb", 0.5, False, True, 1, 10.0, unique=False),
        record("unanswerable", None, False, True, 1, 10.0, unique=False),
    ]
    crag = [
        record("in_kb", 1.0, False, True, 3, 12.0, unique=False),
        record("unanswerable", None, True, None, 2, 15.0, unique=False),
    ]
    dirs = []
    for name, rows in (("naive", naive), ("crag", crag)):
        d = tmp_path / name
        d.mkdir()
        (d / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        summary = report.summarize_mixed(rows, run=name, pipeline=name, settings={"model": "m"})
        (d / "summary.json").write_text(json.dumps(summary))
        dirs.append(d)
    table = report.compare_mixed(dirs, tmp_path / "out")
    assert "| crag | in_kb | 1 | 1 | 0 | 0 | 100.0 | 100.0 | 0 | 0 | 100.0 | 100.0 |" in table
    text = (tmp_path / "out" / "comparison.md").read_text()
    assert "| in_kb | 50.0 | 1.2 | 1.2 | 3.0 |" in text  # F1 gap, p50 and total time ratios
    assert "| all |" in text and '"commit"' in text
    assert (tmp_path / "out" / "comparison.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_eval_mixed_end_to_end(hash_kb, fake_services, tiny, tmp_path):
    fake_services(llm=make_llm(responder), retriever=FakeRetriever(KB), web=FakeWebSearch(WEB))
    out = tmp_path / "out"
    args = ["eval", "--format", "mixed", "--dataset", str(tiny), "--pipeline", "crag"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["by_category"]["unanswerable"]["abstention"] == 100.0
    assert summary["by_category"]["web_only"]["f1"] == 100.0
    assert "| out | web_only |" in result.output  # the run is named after its directory
    missing = CliRunner().invoke(app, ["eval", "--format", "mixed"])
    assert missing.exit_code == 2 and "--dataset" in missing.output
    assert CliRunner().invoke(app, ["eval", "--format", "tsv"]).exit_code == 2


# The evidence probe and the decision replay (benchmarks/calibration/) ----


def probe_responder(prompt: str, text: str) -> Any:
    """Scores the evidence by what it holds; answers from whichever document has the answer."""
    evidence = text.split("Question:")[0]
    if prompt == "grade_documents":
        return 0.9 if "Broncos" in evidence else 0.6 if "Leonardo" in evidence else 0.1
    if prompt == "generate":
        if "Broncos" in evidence and "Super Bowl" in text.split("Question:")[1]:
            return "Denver Broncos [S1]"
        if "Leonardo" in evidence and "Broncos" in evidence:
            return "Leonardo da Vinci [S2]"
        if "Leonardo" in evidence:  # the web alone: a key that names nothing, then corrected
            corrected = "not a document id" in text
            return "Leonardo da Vinci [S1]" if corrected else "Leonardo [S7]"
        return "I don't know."
    return 0.9


def test_the_probe_scores_answers_and_checks_each_evidence_set(
    hash_kb, fake_services, tiny, tmp_path
):
    from benchmarks.calibration.evidence_probe import run

    fake_services(
        llm=make_llm(probe_responder), retriever=FakeRetriever(KB), web=FakeWebSearch(WEB)
    )
    path = run(tiny, tmp_path / "probe")
    records = {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}
    k1 = records["k1"]
    assert k1["kb"]["ids"] == [KB[0].metadata["id"]] and k1["kb"]["score"] == pytest.approx(0.9)
    assert k1["kb"]["answer"] == "Denver Broncos" and k1["kb"]["f1"] == 1.0
    assert k1["kb"]["gold_in"] and k1["kb"]["grounded"] == "yes"
    assert k1["kb"]["answer_score"] == pytest.approx(0.9)  # asked although the check is off
    assert k1["union"]["ids"] == [KB[0].metadata["id"], "web:Mona_Lisa"]
    assert k1["web"]["ids"] == ["web:Mona_Lisa"] and k1["web"]["score"] == pytest.approx(0.6)
    assert not k1["web"]["gold_in"] and k1["web"]["f1"] == 0.0
    w1 = records["w1"]["web"]
    assert w1["first_answer"] == "Leonardo" and w1["answer"] == "Leonardo da Vinci"
    assert w1["copied"] and w1["f1"] == 1.0  # corrected as validate_citations asks
    assert records["u2"]["web"]["f1"] is None  # nothing to score against
    u2 = records["u2"]["kb"]
    assert u2["abstained"] and u2["answer_score"] is None  # no answer, nothing to check
    again = run(tiny, tmp_path / "probe")  # resumes: nothing left to probe
    assert len(again.read_text().splitlines()) == len(cast(list[Any], TINY["questions"]))


def test_a_reprobe_copies_what_its_chunks_cannot_change(hash_kb, fake_services, tiny, tmp_path):
    from benchmarks.calibration.evidence_probe import run

    fake_services(
        llm=make_llm(probe_responder), retriever=FakeRetriever(KB), web=FakeWebSearch(WEB)
    )
    earlier = {
        r["id"]: r for r in map(json.loads, run(tiny, tmp_path / "a").read_text().splitlines())
    }
    earlier["k1"]["kb"]["ids"] = ["another-chunk"]  # as if the floor had kept other chunks
    earlier["k1"]["web"]["marker"] = earlier["w1"]["marker"] = "from the earlier probe"
    reuse = tmp_path / "earlier.jsonl"
    reuse.write_text("".join(json.dumps(r) + "\n" for r in earlier.values()))
    path = run(tiny, tmp_path / "b", floor=False, reuse=reuse)
    records = {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}
    assert records["w1"] == earlier["w1"]  # same chunks: copied whole
    k1 = records["k1"]  # other chunks: kb and union probed again, web copied
    assert k1["kb"]["ids"] == [KB[0].metadata["id"]] and k1["kb"]["answer"] == "Denver Broncos"
    assert k1["web"]["marker"] == "from the earlier probe"


def probed(category: str, kb_score: float | None, union_score: float, web_score: float, **answers):
    """A probe record; ``answers`` maps an evidence set to (f1, abstained, grounded)."""
    record: dict[str, Any] = {"category": category}
    for name, score in (("kb", kb_score), ("union", union_score), ("web", web_score)):
        f1_, abstained, grounded = answers.get(name, (0.0, True, "yes"))
        record[name] = {"score": score, "f1": f1_, "abstained": abstained, "grounded": grounded}
    return record


def test_the_replay_applies_the_three_thresholds_as_the_graph_does():
    from benchmarks.calibration.decisions import Rule, outcome

    rule = Rule(correct_threshold=0.6, incorrect_threshold=0.4, evidence_threshold=0.5)
    right = (1.0, False, "yes")
    assert outcome(rule, probed("in_kb", 0.7, 0.1, 0.1, kb=right)) == (1.0, False, False)
    # Ambiguous: both together, answered only if they reach the evidence threshold.
    assert outcome(rule, probed("in_kb", 0.45, 0.55, 0.1, union=right)) == (1.0, False, True)
    assert outcome(rule, probed("in_kb", 0.45, 0.45, 0.9, union=right)) == (0.0, True, True)
    # Incorrect, or nothing retrieved: the web alone.
    assert outcome(rule, probed("web_only", 0.2, 0.9, 0.5, web=right)) == (1.0, False, True)
    assert outcome(rule, probed("web_only", None, 0.9, 0.5, web=right)) == (1.0, False, True)
    # An answer that failed its grounding check is no answer.
    ungrounded = (1.0, False, "no")
    assert outcome(rule, probed("in_kb", 0.7, 0.1, 0.1, kb=ungrounded)) == (0.0, True, False)
    # So is one the answer check refuses, when it is on.
    checked = probed("in_kb", 0.7, 0.1, 0.1, kb=right)
    checked["kb"]["answer_score"] = 0.3
    assert outcome(rule, checked) == (1.0, False, False)
    strict = Rule(0.6, 0.4, 0.5, answer_threshold=0.4)
    assert outcome(strict, checked) == (0.0, True, False)
    # With the fallback, ambiguous documents the web lowered are answered from alone.
    lowered = probed("in_kb", 0.45, 0.42, 0.1, kb=right, union=right)
    assert outcome(rule, lowered) == (0.0, True, True)
    fallback = Rule(0.6, 0.4, 0.5, kb_fallback=True)
    assert outcome(fallback, lowered) == (1.0, False, True)
    raised = probed("in_kb", 0.45, 0.48, 0.1, kb=right, union=right)  # the web helped, a bit
    assert outcome(fallback, raised) == (0.0, True, True)


def test_the_replay_chooses_the_best_rule_that_keeps_abstaining():
    from benchmarks.calibration.decisions import MIN_ABSTENTION, choose

    right = (1.0, False, "yes")
    said = (0.0, False, "yes")  # an answer to a question nobody can answer
    records = (
        [probed("in_kb", 0.8, 0.8, 0.2, kb=right) for _ in range(9)]
        + [probed("in_kb", 0.35, 0.45, 0.2, union=right)]  # a knowledge-base answer scored low
        + [probed("web_only", 0.2, 0.6, 0.7, web=right) for _ in range(5)]
        + [probed("unanswerable", 0.2, 0.5, 0.3, web=said, union=said) for _ in range(8)]
        + [probed("unanswerable", 0.35, 0.6, 0.6, web=said, union=said) for _ in range(2)]
    )
    chosen, ranked = choose(records)
    assert chosen is not None and chosen["abstention"] >= MIN_ABSTENTION
    assert chosen["in_kb_f1"] == 100.0 and chosen["web_only_f1"] == 100.0
    # The low knowledge-base answer is kept by the ambiguous band (knowledge base plus web),
    # while web evidence as weak as the unanswerable questions' is still refused.
    assert chosen["incorrect_threshold"] <= 0.35 < chosen["correct_threshold"]
    assert 0.3 < chosen["evidence_threshold"] <= 0.45
    assert chosen["answer_threshold"] == 0.0  # no answer check was probed: it stays off
    assert chosen["copied"] is None  # nor whether the answers were copied
    nobody = [probed("unanswerable", 0.9, 0.9, 0.9, kb=said) for _ in range(3)]
    assert choose(records + nobody)[0] is None  # no rule abstains enough


def test_the_replay_turns_the_answer_check_on_only_where_it_separates(tmp_path, monkeypatch):
    from benchmarks.calibration import decisions

    right, said = (1.0, False, "yes"), (0.0, False, "yes")
    records = [probed("in_kb", 0.8, 0.8, 0.2, kb=right) for _ in range(10)] + [
        probed("unanswerable", 0.8, 0.8, 0.2, kb=said) for _ in range(10)
    ]  # the evaluator cannot tell them apart; the answer check can
    for r in records:
        r["kb"]["answer_score"] = 0.7 if r["category"] == "in_kb" else 0.2
    chosen, _ = decisions.choose(records)
    assert chosen is not None and 0.2 < chosen["answer_threshold"] <= 0.7
    path = tmp_path / "probe.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    monkeypatch.setattr("sys.argv", ["decisions", str(path), "--settings"])
    printed: list[str] = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: printed.append(" ".join(map(str, a))))
    decisions.main()
    assert printed[0].startswith("correct_threshold=") and "answer_threshold=" in printed[0]


def test_the_replay_compares_actions_the_graph_does_not_take():
    from benchmarks.calibration.decisions import (
        AnswerFirstRule,
        KbFloorRule,
        WebFirstRule,
        alternatives,
        outcome,
    )

    right, wrong = (1.0, False, "yes"), (0.0, False, "yes")
    # Web first in the band: the web alone when it reaches the evidence threshold ...
    band = probed("web_only", 0.45, 0.4, 0.6, web=right, union=wrong)
    assert outcome(WebFirstRule(0.6, 0.4, 0.5), band) == (1.0, False, True)
    # ... and the knowledge base (with the fallback) when the web scored lower than it.
    low_web = probed("in_kb", 0.45, 0.48, 0.2, kb=right)
    assert outcome(WebFirstRule(0.6, 0.4, 0.5, kb_fallback=True), low_web) == (1.0, False, True)
    # A floor: a failed web search falls back to documents that scored at least the floor,
    # even under the lower threshold, where the graph says "I don't know".
    under = probed("in_kb", 0.37, 0.4, 0.15, kb=right)
    assert outcome(KbFloorRule(0.6, 0.4, 0.45, kb_floor=0.35), under) == (1.0, False, True)
    assert outcome(KbFloorRule(0.6, 0.4, 0.45, kb_floor=0.4), under) == (0.0, True, True)
    # Answer first: a grounded knowledge-base answer is given without any web search ...
    first = AnswerFirstRule(0.9, 0.3, 0.5)
    assert outcome(first, probed("in_kb", 0.35, 0.1, 0.1, kb=right)) == (1.0, False, False)
    # ... and "I don't know" from the knowledge base sends the run to the web.
    assert outcome(first, probed("web_only", 0.5, 0.1, 0.6, web=right)) == (1.0, False, True)
    records = [probed("in_kb", 0.8, 0.8, 0.2, kb=right) for _ in range(5)] + [
        probed("unanswerable", 0.2, 0.2, 0.2) for _ in range(5)
    ]
    families = [row["family"] for row in alternatives(records)]
    assert sorted(families) == [
        "answer first",
        "knowledge base above a floor",
        "web first in the band",
    ]
