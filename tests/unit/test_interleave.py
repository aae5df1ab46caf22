"""crag.eval.interleave: every pipeline in its own process, question by question."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from crag.eval import interleave


def toy_answerer(job: dict[str, Any]):
    """An answerer a job names by "module:function": it records which process answered."""
    records = Path(job["records"])

    def answer(question_id: str) -> None:
        with records.open("a") as fh:
            fh.write(json.dumps({"id": question_id, "pid": os.getpid(), "job": job["name"]}) + "\n")

    return answer


def test_a_job_with_its_own_answerer_runs_in_its_own_process_alternating_first(tmp_path):
    jobs = [
        {
            "name": name,
            "answerer": "tests.unit.test_interleave:toy_answerer",
            "out": str(tmp_path / name),
            "records": str(tmp_path / f"{name}.jsonl"),
        }
        for name in ("a", "b")
    ]
    order: list[tuple[str, str]] = []
    interleave.run(jobs, ["q1", "q2", "q3"], lambda name, qid: order.append((name, qid)))
    assert order == [("a", "q1"), ("b", "q1"), ("b", "q2"), ("a", "q2"), ("a", "q3"), ("b", "q3")]
    pids = set()
    for name in ("a", "b"):
        rows = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
        assert [r["id"] for r in rows] == ["q1", "q2", "q3"]
        assert {r["job"] for r in rows} == {name}
        pids |= {r["pid"] for r in rows}
    assert len(pids) == 2 and os.getpid() not in pids
