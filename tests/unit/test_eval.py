"""The evaluation harness on a tiny SQuAD file: metrics, both pipelines, resume, reports."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from typer.testing import CliRunner

from crag.cli import app
from crag.eval import harness
from crag.eval.metrics import best, exact_match, f1, normalize_answer, percentile
from crag.eval.records import read_records
from crag.eval.squad import load_squad
from crag_core.errors import ConfigError
from crag_core.schema.context import Context
from tests.fakes import FakeRetriever, doc, happy_responder, make_llm

TINY: dict[str, Any] = {
    "version": "1.1",
    "data": [
        {
            "title": "Super Bowl 50",
            "paragraphs": [
                {
                    "context": "The Denver Broncos defeated the Carolina Panthers 24–10.",
                    "qas": [
                        {
                            "id": "q1",
                            "question": "Who won Super Bowl 50?",
                            "answers": [{"text": "Denver Broncos", "answer_start": 4}],
                        },
                        {
                            "id": "q2",
                            "question": "Who lost Super Bowl 50?",
                            "answers": [{"text": "Carolina Panthers", "answer_start": 32}],
                        },
                    ],
                },
                {
                    "context": "The game was played at Levi's Stadium.",
                    "qas": [
                        {
                            "id": "q3",
                            "question": "Where was Super Bowl 50 played?",
                            "answers": [{"text": "Levi's Stadium", "answer_start": 23}],
                        },
                    ],
                },
            ],
        }
    ],
}


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump(TINY, fh)
    return path


def test_official_squad_normalisation_and_scores():
    assert normalize_answer("The  Denver Broncos!") == "denver broncos"
    assert exact_match("the Denver Broncos.", "Denver Broncos") == 1.0
    assert f1("Denver Broncos won", "Denver Broncos") == pytest.approx(0.8)
    assert f1("I don't know.", "Denver Broncos") == 0.0
    assert best(f1, "Panthers", ["Denver Broncos", "Carolina Panthers"]) == pytest.approx(2 / 3)
    assert percentile([1, 2, 3, 4], 50) == 2.5 and percentile([], 95) == 0.0


def test_load_squad_gives_stable_paragraph_ids(tiny):
    data = load_squad(tiny)
    assert [p.id for p in data.paragraphs] == ["super-bowl-50-p000", "super-bowl-50-p001"]
    assert data.questions[2].paragraph_id == "super-bowl-50-p001"
    assert [q.id for q in data.sample(2, seed=1)] == [q.id for q in data.sample(2, seed=1)]


def test_a_file_that_is_not_squad_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": []}')
    with pytest.raises(ConfigError, match="not SQuAD"):
        load_squad(bad)


def responder(prompt: str, text: str) -> Any:
    if prompt == "generate":
        return "Denver Broncos [S1]"
    return happy_responder(prompt, text)


@pytest.mark.parametrize("pipeline", ["naive", "crag"])
def test_eval_run_records_scores_and_resumes(fake_services, tiny, tmp_path, pipeline):
    docs = [doc("super-bowl-50-p000__c0000", TINY["data"][0]["paragraphs"][0]["context"])]
    fake_services(llm=make_llm(responder), retriever=FakeRetriever(docs))
    data = load_squad(tiny)
    run = harness.EvalRun(pipeline, data.questions, Context(), tmp_path / pipeline)
    run.run()
    records = read_records(run.predictions)
    assert [r["id"] for r in records] == ["q1", "q2", "q3"]
    q1 = records[0]
    assert q1["prediction"] == "Denver Broncos" and q1["exact_match"] == 1.0
    assert q1["retrieval_hit"] is True and records[2]["retrieval_hit"] is False
    assert q1["llm_calls"] >= 1 and q1["path"][-1] in ("generate", "finalize")
    assert q1["queries"] and q1["rejected_chunk_ids"] == []
    # The pass's scores, as its nodes gave them (not the None its start resets them to).
    graded = pipeline == "crag"
    assert (q1["retrieval_score"] is not None) == graded
    assert (q1["light_score"] is None) and q1["evidence_score"] is None  # no encoder; no web
    for key in (
        "retrieved_chunk_ids",
        "retries",
        "web_search_used",
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
        "gold_answers",
        "question",
    ):
        assert key in q1

    # Resumable: a torn last line is ignored, done questions are skipped.
    with run.predictions.open("a") as fh:
        fh.write('{"id": "q9", "predic')
    assert run.pending() == []
    summary = harness.write_summary(run)
    assert summary["questions"] == 3 and summary["exact_match"] == pytest.approx(33.3)
    # What the run was, as in the mixed summaries: a commit, the prompts used, the settings.
    assert summary["commit"] and summary["prompt_versions"]["generate"].startswith("v")
    assert summary["settings"]["top_k"] == run.ctx.top_k
    assert (run.out / "summary.md").read_text().startswith("| run | pipeline |")


def test_crag_records_name_the_search_queries_and_the_rejected_chunks(fake_services, tiny):
    gold = doc("super-bowl-50-p000__c0000", "The Denver Broncos defeated the Carolina Panthers.")
    other = doc("super-bowl-50-p001__c0000", "The game was played at Levi's Stadium.")
    fake_services(llm=make_llm(responder), retriever=FakeRetriever([gold, other]))
    q1 = load_squad(tiny).questions[0]
    # The evaluator rejects the knowledge base on the first pass and accepts the web, whose
    # documents do not hold the answer given: the grounding check fails and the run retries.
    grades: list[str] = []

    def reject_first(prompt: str, text: str) -> Any:
        if prompt == "grade_documents":
            grades.append(text)
            return "no" if len(grades) == 1 else "yes"
        return responder(prompt, text)

    fake_services(llm=make_llm(reject_first), retriever=FakeRetriever([gold, other]))
    record = harness.run_one("crag", q1, Context())
    assert record["queries"][:2] == [q1.question, "Super Bowl 50 winner"]  # the retry's rewrite
    assert record["retrieved_chunk_ids"] == [gold.metadata["id"], other.metadata["id"]]
    assert record["rejected_chunk_ids"] == [gold.metadata["id"], other.metadata["id"]]


def test_compare_uses_the_questions_both_runs_answered(tmp_path):
    def record(qid: str, f1_score: float) -> dict[str, Any]:
        return {
            "id": qid,
            "question": f"Question {qid}?",
            "prediction": f"answer with F1 {f1_score}",
            "gold_answers": ["a|b"],
            "exact_match": f1_score,
            "f1": f1_score,
            "retrieval_hit": True,
            "latency_s": 1.0,
            "llm_calls": 1,
            "prompt_tokens": 10,
            "completion_tokens": 2,
            "web_search_used": False,
            "retries": 0,
        }

    scores = {"naive": [0.5, 0.5, 0.5], "crag": [1.0, 0.5], "crag-lean": [0.0, 0.5, 1.0]}
    dirs = []
    for name, f1s in scores.items():
        d = tmp_path / name
        d.mkdir()
        recs = [record(f"q{i}", f1_score) for i, f1_score in enumerate(f1s, 1)]
        (d / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
        pipeline = "naive" if name == "naive" else "crag"
        summary = harness.summarize(recs, pipeline, "local")
        summary |= {"commit": f"c-{name}", "prompt_versions": {"generate": "v4"}}
        (d / "summary.json").write_text(json.dumps(summary))
        dirs.append(d)
    table = harness.compare(dirs, tmp_path / "report")
    # right / "I don't know" / wrong, truthfulness and right of answers come first
    assert "| naive | naive | 2 | 0 | 0 | 2 | -100.0 | 0.0 | 0 | 0 | 50.0 |" in table
    assert "| crag | crag | 2 | 0 | 0 | 2 | -100.0 | 0.0 | 0 | 0 | 75.0 |" in table
    assert "| crag-lean | crag | 2 | 0 | 0 | 2 | -100.0 | 0.0 | 0 | 0 | 25.0 |" in table
    report = (tmp_path / "report" / "comparison.md").read_text()
    assert "## crag vs naive: 1 wins, 0 losses, 1 ties" in report
    assert "| Question q1? | a\\|b | answer with F1 0.5 | answer with F1 1.0 | +0.50 |" in report
    # Differences are counted on every question both runs answered (here 3).
    assert "## crag-lean vs naive: 1 wins, 1 losses, 1 ties" in report
    assert '"commit": "c-crag-lean"' in report  # each run's provenance is carried over
    runs = json.loads((tmp_path / "report" / "comparison.json").read_text())
    assert [r["commit"] for r in runs] == ["c-naive", "c-crag", "c-crag-lean"]
    assert (tmp_path / "report" / "comparison.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_eval_end_to_end(hash_kb, fake_services, tiny, tmp_path):
    fake_services(llm=make_llm(responder))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["eval", "--dataset", str(tiny), "--pipeline", "naive", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert len(read_records(out / "predictions.jsonl")) == 3
    assert json.loads((out / "summary.json").read_text())["pipeline"] == "naive"
    again = CliRunner().invoke(
        app, ["eval", "--dataset", str(tiny), "--pipeline", "naive", "--out", str(out)]
    )
    assert "3 questions were already done" in again.output


def test_a_variant_names_its_pipeline_and_keeps_a_dict_setting_whole():
    from crag.eval.plan import parse_variant as _variant

    assert _variant("v5:pipeline=naive,prompt_versions=generate=v5,rewrite_query=v1,top_k=3") == (
        "v5",
        "naive",
        {"prompt_versions": "generate=v5,rewrite_query=v1", "top_k": "3"},
    )
    assert _variant("lean:max_retries=1") == ("lean", "crag", {"max_retries": "1"})


def test_cli_eval_refuses_bad_options(tmp_path):
    runner = CliRunner()
    assert runner.invoke(app, ["eval", "--pipeline", "fancy"]).exit_code == 2
    assert runner.invoke(app, ["eval", "--dataset", str(tmp_path / "nope.json")]).exit_code == 2
    assert runner.invoke(app, ["eval", "--limit", "0"]).exit_code == 2
    assert runner.invoke(app, ["eval-report", str(tmp_path)]).exit_code == 2
    refusals = {
        "tiered": "NAME:FIELD=VALUE",
        "tiered:grader_model": "NAME:FIELD=VALUE",
        "tiered:colour=red": "unknown setting colour",
        "crag:top_k=2": "own name",
        "small:top_k=zero": "top_k",
        "base:pipeline=fancy": "pipeline must be one of",
    }
    for spec, message in refusals.items():
        refused = runner.invoke(app, ["eval", "--variant", spec])
        assert refused.exit_code == 2 and message in refused.output, (spec, refused.output)
