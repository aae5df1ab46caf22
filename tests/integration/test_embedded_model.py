"""End to end with the real embedded model, real MiniLM embeddings, real Chroma and the
offline encyclopedia, over the bundled demo corpus. Slow (about a minute per question)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crag.ingest import ingest
from crag.run import run_question
from crag.services import knowledge_base
from graph.context import Context

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "corpus"


@pytest.fixture(scope="module")
def demo_kb(tmp_path_factory):
    data = tmp_path_factory.mktemp("integration-data")
    old = os.environ.get("CRAG_DATA_DIR")
    os.environ["CRAG_DATA_DIR"] = str(data)
    try:
        kb = knowledge_base("demo")
        report = ingest(kb, [str(DEMO)])
        assert len(report.added) == 3 and not report.failed
        yield data
    finally:
        if old is None:
            os.environ.pop("CRAG_DATA_DIR", None)
        else:
            os.environ["CRAG_DATA_DIR"] = old


@pytest.fixture(autouse=True)
def data_dir(demo_kb, monkeypatch):  # overrides the unit tests' per-test data dir
    monkeypatch.setenv("CRAG_DATA_DIR", str(demo_kb))
    return demo_kb


def test_answers_from_the_knowledge_base():
    result = run_question(
        "Which team won Super Bowl 50, and what was the final score?",
        Context(collection="demo"),
    )
    answer = result.state["answer"]
    assert "Broncos" in answer and "24" in answer, result.to_json()
    assert result.path[:4] == [
        "contextualize_question",
        "rewrite_query",
        "retrieve",
        "grade_documents",
    ]
    assert result.path[-1] == "finalize"
    assert "web_search" not in result.path
    assert any(s["source"].endswith("super_bowl_50.md") for s in result.state["sources"])


def test_falls_back_to_web_search_for_questions_outside_the_corpus():
    result = run_question("Who painted the Mona Lisa?", Context(collection="demo"))
    assert "web_search" in result.path and result.state["web_search_used"]
    assert "Leonardo" in result.state["answer"], result.to_json()
    assert any("wikipedia.org/wiki/Mona_Lisa" in s["source"] for s in result.state["sources"])


def test_cli_json_runs_the_whole_product(demo_kb):
    env = dict(os.environ, CRAG_DATA_DIR=str(demo_kb))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "crag.cli",
            "ask",
            "Who won Super Bowl 50?",
            "--collection",
            "demo",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert "Broncos" in out["answer"]
    assert out["path"][-1] == "finalize" and out["prompt_versions"]["generate"] == "v1"
    assert all(s["id"] and s["source"] for s in out["sources"])
