"""Fixtures for tests that run crag as users do: the CLI and the API server in subprocesses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.loopback import loopback, scripted_model

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ANSWER = "The Denver Broncos won Super Bowl 50."
SECRETS = {
    "CRAG_API_KEY": "sk-test-llm-secret-4c1d",
    "TAVILY_API_KEY": "tvly-test-secret-77ab",
    "LANGSMITH_API_KEY": "lsv2_test_secret_9e0f",
}


def base_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """A clean, offline environment for a crag subprocess (nothing inherited but PATH/HOME)."""
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": os.environ.get("HOME", str(data_dir)),
        "CRAG_DATA_DIR": str(data_dir),
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "PYTHONUNBUFFERED": "1",
    }
    return env | extra


def crag(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
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


def scripted_env(data_dir: Path, llm_url: str, **extra: Any) -> dict[str, str]:
    """Environment for runs on the scripted model, with secrets set to catch leaks."""
    return base_env(
        data_dir,
        CRAG_MODEL="openai-compatible:scripted",
        CRAG_BASE_URL=llm_url,
        **SECRETS,
        **extra,
    )


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def langgraph_dev(env: dict[str, str], workdir: Path, timeout_s: float = 180) -> Iterator[Server]:
    """Run ``make serve`` (``langgraph dev``) on a free loopback port until the block ends.

    The server runs in its own process group, which ``Server.stop`` signals by pid.
    """
    port = free_port()
    log_path = workdir / "langgraph-dev.log"
    started = time.perf_counter()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "serve", f"SERVE_PORT={port}"],
            cwd=ROOT,  # graph paths in langgraph.json are relative to the project root
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(f"http://127.0.0.1:{port}", proc, log_path, 0.0)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"langgraph dev exited {proc.returncode}:\n{server.log()}")
            try:
                with urllib.request.urlopen(f"{server.url}/ok", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"langgraph dev not up in {timeout_s}s:\n{server.log()}")
            time.sleep(0.5)
        server.start_seconds = time.perf_counter() - started
        yield server
    finally:
        server.stop()


@dataclass
class Server:
    """A running ``langgraph dev`` process."""

    url: str
    proc: subprocess.Popen
    log_path: Path
    start_seconds: float

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def stop(self) -> None:
        """Stop the server's process group: SIGTERM, then SIGKILL after 20 s."""
        if self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
