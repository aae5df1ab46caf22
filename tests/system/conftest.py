"""Fixtures for tests that run crag as users do: the CLI and the API server in subprocesses."""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import ROOT
from benchmarks.fixtures.serve import Server, clean_env, langgraph_dev
from tests.loopback import loopback, scripted_model

BIN = Path(sys.executable).parent
ANSWER = "The Denver Broncos won Super Bowl 50."
SECRETS = {
    "CRAG_API_KEY": "sk-test-llm-secret-4c1d",
    "TAVILY_API_KEY": "tvly-test-secret-77ab",
    "LANGSMITH_API_KEY": "lsv2_test_secret_9e0f",
}


base_env = clean_env
"""A clean, offline environment for a crag subprocess."""


def crag(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the ``crag`` CLI."""
    return subprocess.run(
        [str(BIN / "crag"), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="package")
def scripted_llm() -> Iterator[str]:
    """Base URL of a loopback OpenAI-compatible model that answers like a good CRAG model."""
    scripted = scripted_model(f"{ANSWER} [S1]", "What was the score of Super Bowl 50?")
    with loopback(scripted) as (url, _):
        yield f"{url}/v1"


@pytest.fixture(scope="package")
def sb50_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose 'crag' collection holds one Super Bowl 50 document (real MiniLM)."""
    data = tmp_path_factory.mktemp("sb50")
    corpus = data / "corpus"
    corpus.mkdir()
    (corpus / "sb50.md").write_text(
        "Super Bowl 50 was played on February 7, 2016. "
        f"{ANSWER} They defeated the Carolina Panthers 24-10.\n"
    )
    done = crag("ingest", str(corpus), env=base_env(data))
    assert done.returncode == 0, done.stderr
    return data


@pytest.fixture(scope="package")
def server(sb50_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``make serve`` on a free loopback port, over the Super Bowl 50 knowledge base.

    Secrets are set (to catch leaks into the server's log); web search stays offline. Runs
    choose their model through the run context: the operator leaves those fields to callers
    (``CRAG_API_CALLER_FIELDS``), as on a machine whose only user is the operator.
    """
    env = base_env(
        sb50_data_dir,
        CRAG_WEB_SEARCH="encyclopedia",
        CRAG_API_CALLER_FIELDS="model,base_url",
        **SECRETS,
    )
    with langgraph_dev(env, tmp_path_factory.mktemp("server")) as srv:
        print(f"langgraph dev answered /ok {srv.start_seconds:.1f}s after launch")
        yield srv
    # After every test that used it: it stopped by its pid, and no secret reached its log.
    assert srv.proc.returncode is not None
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{srv.url}/ok", timeout=2)
    log = srv.log_path.read_text(errors="replace")
    for name, secret in SECRETS.items():
        assert secret not in log, f"{name} leaked into the server log"


def scripted_env(data_dir: Path, llm_url: str, **extra: Any) -> dict[str, str]:
    """Environment for runs on the scripted model, with secrets set to catch leaks."""
    return base_env(
        data_dir,
        CRAG_MODEL="openai-compatible:scripted",
        CRAG_BASE_URL=llm_url,
        **SECRETS,
        **extra,
    )
