"""LangSmith tracing with the real client against a loopback LangSmith endpoint."""

from __future__ import annotations

import json

from tests.loopback import langsmith_recorder, traced_runs
from tests.system.conftest import ANSWER, SECRETS, crag, scripted_env


def test_a_traced_question_posts_one_root_run_with_node_and_llm_children(
    sb50_data_dir, scripted_llm
):
    with langsmith_recorder() as (url, requests):
        env = scripted_env(
            sb50_data_dir,
            scripted_llm,
            LANGSMITH_TRACING="true",
            LANGSMITH_ENDPOINT=url,
            LANGSMITH_PROJECT="crag-tests",
        )
        done = crag(
            "ask", "Which team won Super Bowl 50?", "--json", "--thread", "t-secrets", env=env
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
    runs = traced_runs(requests)
    assert runs, f"nothing traced: {[(r['method'], r['path']) for r in requests]}"

    roots = [r for r in runs.values() if not r.get("parent_run_id")]
    assert [r["name"] for r in roots] == ["crag"]
    root = roots[0]
    assert root["outputs"]["answer"] == out["answer"]
    meta = root["extra"]["metadata"]
    assert meta["provider"] == "openai-compatible" and meta["model"] == "scripted"
    assert meta["collection"] == "crag"
    assert root["session_name"] == "crag-tests"

    # the turn's cost ledger is in the root run's outputs, as crag ask --json gives it
    ledger = out["cost"]["ledger"]
    assert root["outputs"]["cost"] == ledger and out["cost"]["calls"] >= 2
    assert sum(e["calls"] for e in ledger) == out["cost"]["calls"]

    names = {r["name"] for r in runs.values()}
    assert set(out["path"]) <= names  # a child run per node that ran, named after it

    llm_runs = [r for r in runs.values() if r.get("run_type") == "llm"]
    # Every prompt that ran is an LLM run, except the evidence message that starts the others.
    assert {r["name"] for r in llm_runs} == set(out["prompt_versions"]) - {"evidence"}
    for run in llm_runs:
        m = run["extra"]["metadata"]
        assert m["langgraph_node"] in {e["node"] for e in ledger}  # each call's node
        assert m["prompt_version"] == out["prompt_versions"][m["prompt"]]
        assert m["retry_count"] == 0 and m["web_search_used"] is False
        assert m["collection"] == "crag" and m["model"] == "scripted"

    payload = b"".join(r["raw"] for r in requests)
    # The thread's saved state (every checkpoint) and everything else crag wrote.
    written = b"".join(
        p.read_bytes() for p in sb50_data_dir.rglob("*") if p.is_file() and "models" not in p.parts
    )
    assert b"t-secrets" in (sb50_data_dir / "threads.sqlite").read_bytes()
    for name, secret in SECRETS.items():
        assert secret.encode() not in payload, f"{name} leaked into a trace"
        assert secret not in done.stdout + done.stderr, f"{name} leaked into CLI output"
        assert secret.encode() not in written, f"{name} leaked into the data dir"


def test_the_loops_tool_calls_are_tool_runs_under_their_node(sb50_data_dir, scripted_llm):
    with langsmith_recorder() as (url, requests):
        env = scripted_env(
            sb50_data_dir,
            scripted_llm,
            CRAG_PLANNER="loop",
            CRAG_ANSWER_CACHE="false",
            LANGSMITH_TRACING="true",
            LANGSMITH_ENDPOINT=url,
            LANGSMITH_PROJECT="crag-tests",
        )
        done = crag("ask", "Which team won Super Bowl 50?", "--json", env=env)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
    shown = crag("ask", "Which team won Super Bowl 50?", env=env | {"LANGSMITH_TRACING": "false"})
    assert out["answer"] == ANSWER and out["sources"]
    assert out["path"][3:7] == ["choose_tool", "agent", "run_tools", "agent"]
    runs = traced_runs(requests)
    (tool,) = [r for r in runs.values() if r.get("run_type") == "tool"]
    assert tool["name"] == "search" and "Super Bowl 50" in json.dumps(tool["inputs"])
    assert runs[tool["parent_run_id"]]["name"] == "run_tools"
    agent_calls = [r for r in runs.values() if r.get("run_type") == "llm" and r["name"] == "agent"]
    assert len(agent_calls) == 2  # the tool call, then the answer
    agent_entries = [e for e in out["cost"]["ledger"] if e["node"] == "agent"]
    assert [e["calls"] for e in agent_entries] == [1, 1]  # the ledger counts the loop's calls
    # crag ask's node lines show the call and what it returned
    assert "search(query='Which team won Super Bowl 50?')" in shown.stderr + shown.stdout


def test_tracing_unset_sends_nothing(sb50_data_dir, scripted_llm):
    with langsmith_recorder() as (url, requests):
        env = scripted_env(sb50_data_dir, scripted_llm, LANGSMITH_ENDPOINT=url)
        env.pop("LANGSMITH_API_KEY")
        done = crag("ask", "Which team won Super Bowl 50?", "--json", env=env)
        assert done.returncode == 0, done.stderr
    assert requests == []
