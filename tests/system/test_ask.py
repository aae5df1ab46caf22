"""`crag ask` in a terminal: the answer is printed as the model writes it, then checked."""

from __future__ import annotations

from tests.loopback import loopback, scripted_model
from tests.system.conftest import ANSWER, crag, scripted_env


def test_the_cli_prints_the_draft_as_it_streams_then_the_checked_answer(sb50_data_dir):
    with loopback(scripted_model(f"{ANSWER} [S1]")) as (url, requests):
        env = scripted_env(sb50_data_dir, f"{url}/v1", CRAG_WEB_SEARCH="off")
        done = crag("ask", "Which team won Super Bowl 50?", "--no-cache", env=env)
        assert done.returncode == 0, done.stderr
        streamed = [r["body"] for r in requests if r["body"].get("stream")]
        whole = [r["body"] for r in requests if r["body"].get("stream") is False]
        as_json = crag("ask", "Which team won Super Bowl 50?", "--json", "--no-cache", env=env)
    # Only the generator streams; every verdict was asked for in one response.
    assert len(streamed) == 1 and whole and all(b.get("logprobs") for b in whole)
    lines = done.stdout.splitlines()
    draft = next(n for n, line in enumerate(lines) if "draft:" in line)
    assert lines[draft].endswith(f"draft: {ANSWER} [S1]")
    assert lines[draft + 1].startswith("generate")  # the draft came before the node finished
    answer = lines.index(next(line for line in lines if "Answer" in line and "─" in line))
    assert lines[answer + 1] == ANSWER  # after the checks: citation resolved into sources
    assert as_json.returncode == 0 and "draft:" not in as_json.stdout
