"""A model server killed in the middle of a run: the run fails over, or ends with a clear error."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from benchmarks import ROOT
from benchmarks.fixtures.serve import free_port
from tests.system.conftest import ANSWER, BIN, base_env


@contextmanager
def model_server(
    workdir: Path, delay_s: float
) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """The scripted model in its own process; yields its base URL, process and request log."""
    port = free_port()
    log = workdir / f"model-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.scripted_server", str(port), str(delay_s)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while "ready" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/v1", proc, log
    finally:
        proc.kill()
        proc.wait(timeout=10)


def requests_served(log: Path) -> int:
    return log.read_text().count("request ")


def ask_while_killing(sb50_data_dir: Path, tmp_path: Path, servers: int) -> tuple[int, str, str]:
    """Ask through ``servers`` model servers; kill the first one to receive a request."""
    with ExitStack() as stack:
        running = [stack.enter_context(model_server(tmp_path, 0.4)) for _ in range(servers)]
        env = base_env(
            sb50_data_dir,
            CRAG_BASE_URL=",".join(url for url, _, _ in running),  # model 'local', served there
            CRAG_WEB_SEARCH="off",
            CRAG_LLM_MAX_RETRIES="1",
            CRAG_LLM_TIMEOUT_S="5",
        )
        ask = subprocess.Popen(
            [str(BIN / "crag"), "ask", "Who won Super Bowl 50?", "--json", "--no-cache"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while not any(requests_served(log) for _, _, log in running):
            assert ask.poll() is None, ask.communicate()
            assert time.monotonic() < deadline, "no model request"
            time.sleep(0.02)
        victim = next(proc for _, proc, log in running if requests_served(log))
        victim.kill()  # mid-request: the client sees the connection drop
        stdout, stderr = ask.communicate(timeout=120)  # never hangs
        return ask.returncode, stdout, stderr


def test_a_killed_model_server_fails_over_to_the_other(sb50_data_dir, tmp_path):
    code, stdout, stderr = ask_while_killing(sb50_data_dir, tmp_path, servers=2)
    assert code == 0, stderr
    assert ANSWER in json.loads(stdout)["answer"]
    assert "unreachable" in stderr  # the warning naming the server skipped


def test_the_only_model_server_killed_is_a_clear_error(sb50_data_dir, tmp_path):
    code, stdout, stderr = ask_while_killing(sb50_data_dir, tmp_path, servers=1)
    assert code == 3
    assert "Cannot reach the LLM endpoint" in stderr
    assert "Traceback" not in stderr
