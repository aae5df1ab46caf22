"""`crag eval --pipeline naive,crag --variant ...`: several runs at once, one process each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.loopback import loopback, scripted_model
from tests.system.conftest import ANSWER, crag, scripted_env

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


def test_every_run_answers_every_question_in_its_own_process(tmp_path: Path):
    """naive, crag and a CRAG variant whose grader is another model, in one run."""
    dataset = tmp_path / "mixed.json"
    dataset.write_text(json.dumps(MIXED))
    out = tmp_path / "out"
    variant = "tiered:grader_model=openai-compatible:grader,answer_threshold=0.5"
    with loopback(scripted_model(f"{ANSWER} [S1]")) as (url, requests):
        env = scripted_env(tmp_path / "data", f"{url}/v1", CRAG_WEB_SEARCH="off")
        args = ["eval", "--format", "mixed", "--dataset", str(dataset), "--out", str(out)]
        args += ["--pipeline", "naive,crag", "--variant", variant]
        done = crag(*args, env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        for run, pipeline in (("naive", "naive"), ("crag", "crag"), ("tiered", "crag")):
            records = [json.loads(line) for line in (out / run / "predictions.jsonl").open()]
            assert sorted(r["id"] for r in records) == ["k0", "k1", "u1"]
            summary = json.loads((out / run / "summary.json").read_text())
            assert summary["pipeline"] == pipeline and summary["overall"]["questions"] == 3
        tiered = json.loads((out / "tiered" / "summary.json").read_text())
        assert tiered["settings"]["grader_model"] == "openai-compatible:grader"
        naive_paths = {
            tuple(json.loads(line)["path"]) for line in (out / "naive" / "predictions.jsonl").open()
        }
        naive = ("retrieve", "generate", "validate_citations", "choose_answer", "finalize")
        assert naive_paths == {naive}
        by_model: dict[str, list[dict[str, Any]]] = {}
        for r in requests:
            by_model.setdefault(r["body"].get("model"), []).append(r["body"])
        # The variant's grader scored documents and answers (one token, log-probabilities) and
        # wrote nothing; the main model wrote the answers.
        graded = by_model.get("grader", [])
        assert graded and all(b.get("logprobs") and one_token(b) for b in graded)
        assert any(not b.get("logprobs") for b in by_model["scripted"])
        # Resumable: a second run finds everything done and starts no question again.
        again = crag(*args, env=env, timeout=600)
        assert again.returncode == 0 and "3 questions were already done" in again.stdout
        refused = crag(*args[:-4], "--pipeline", "naive,fancy", env=env)
        assert "Unknown pipeline" in refused.stderr
        assert refused.returncode == 2


def one_token(body: dict[str, Any]) -> bool:
    """Whether a chat-completions request asks for a single token."""
    return (body.get("max_completion_tokens") or body.get("max_tokens")) == 1
