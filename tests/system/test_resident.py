"""The model loaded once: `crag ask` starts (or finds) a resident model server, which every
command shares, which is replaced when killed, and which leaves when idle.

On the embedded model, with a models folder of the test's own (a link to the verified file),
so its servers are the test's alone: the user's are neither used nor stopped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from benchmarks.fixtures.shared_services import private_models
from crag_core.runtime import local_model
from tests.system.conftest import BIN, base_env, crag

KEEP_ALIVE_S = 15
QUESTION = "Which team won Super Bowl 50?"


@pytest.fixture(scope="module")
def env(sb50_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    local_model.assemble(local_model.get_model(None))  # the user's verified file, or a clear error
    models = private_models(tmp_path_factory.mktemp("models"))
    return base_env(
        sb50_data_dir,
        CRAG_MODELS_DIR=str(models),
        CRAG_MODEL_KEEP_ALIVE_S=str(KEEP_ALIVE_S),
        CRAG_WEB_SEARCH="off",
        CRAG_ANSWER_CACHE="false",
    )


def status(env: dict[str, str]) -> int | None:
    """The running model server's pid, or None."""
    done = crag("model-server", "--status", env=env, timeout=60)
    if done.returncode == 1:
        assert "No model server is running" in done.stdout
        return None
    assert done.returncode == 0 and "answers" in done.stdout, done.stdout + done.stderr
    return int(done.stdout.split("pid ")[1].split(",")[0])


def gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.5)
    return False


def test_commands_share_one_resident_server_replaced_when_killed_gone_when_idle(env):
    assert status(env) is None
    asks = [
        subprocess.Popen(
            [str(BIN / "crag"), "ask", QUESTION, "-q"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)  # two commands at once start one server between them
    ]
    for ask in asks:
        out, errors = ask.communicate(timeout=600)
        assert ask.returncode == 0 and "Broncos" in out, out + errors
    first = status(env)
    log = Path(env["CRAG_MODELS_DIR"]) / "servers" / "qwen2.5-coder-1.5b.log"
    assert first is not None and log.read_text().count(" at http://") == 1

    again = crag("ask", QUESTION, "-q", env=env)
    assert again.returncode == 0 and status(env) == first  # no second load

    os.kill(first, signal.SIGKILL)
    assert gone(first, 10)
    replaced = crag("ask", QUESTION, "-q", env=env)
    assert replaced.returncode == 0 and "Broncos" in replaced.stdout, replaced.stderr
    second = status(env)
    assert second is not None and second != first

    assert gone(second, KEEP_ALIVE_S + 30)  # no request for KEEP_ALIVE_S: it leaves
    assert status(env) is None


def test_a_model_server_is_seen_and_stopped_by_another_command(env):
    server = subprocess.Popen(
        [str(BIN / "crag"), "model-server", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while (pid := status(env)) is None:
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(1)
        assert pid == server.pid
        stopped = crag("model-server", "--stop", env=env)
        assert stopped.returncode == 0 and f"pid {pid}" in stopped.stdout
        assert server.wait(timeout=30) == 0 and status(env) is None
    finally:
        server.kill()
