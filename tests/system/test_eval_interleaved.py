"""`crag eval --pipeline naive,crag`: both pipelines in one run, each in its own process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.system.conftest import crag, scripted_env

pytestmark = pytest.mark.system

MIXED = {
    "kb": [
        {
            "title": "Super Bowl 50",
            "paragraphs": ["The Denver Broncos won Super Bowl 50, defeating the Panthers 24-10."],
        }
    ],
    "questions": [
        {"id": f"k{i}", "question": q, "answers": ["Denver Broncos"], "category": "in_kb"}
        for i, q in enumerate(["Who won Super Bowl 50?", "Which team won Super Bowl 50?"])
    ]
    + [{"id": "u1", "question": "Who sang the anthem?", "category": "unanswerable"}],
}


def test_both_pipelines_answer_every_question_in_their_own_processes(
    tmp_path: Path, scripted_llm: str
):
    dataset = tmp_path / "mixed.json"
    dataset.write_text(json.dumps(MIXED))
    out = tmp_path / "out"
    env = scripted_env(tmp_path / "data", scripted_llm, CRAG_WEB_SEARCH="off")
    args = ["eval", "--format", "mixed", "--dataset", str(dataset), "--out", str(out)]
    done = crag(*args, "--pipeline", "naive,crag", env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    for pipeline in ("naive", "crag"):
        records = [json.loads(line) for line in (out / pipeline / "predictions.jsonl").open()]
        assert sorted(r["id"] for r in records) == ["k0", "k1", "u1"]
        summary = json.loads((out / pipeline / "summary.json").read_text())
        assert summary["pipeline"] == pipeline and summary["overall"]["questions"] == 3
    naive_paths = {
        tuple(json.loads(line)["path"]) for line in (out / "naive" / "predictions.jsonl").open()
    }
    assert naive_paths == {("retrieve", "generate", "validate_citations", "finalize")}
    # Resumable: a second run finds everything done and starts no question again.
    again = crag(*args, "--pipeline", "naive,crag", env=env, timeout=600)
    assert again.returncode == 0 and "3 questions were already done" in again.stdout
    refused = crag(*args, "--pipeline", "naive,fancy", env=env)
    assert refused.returncode == 2
