"""``make serve`` (``langgraph dev``) in a subprocess on a free loopback port, stopped by pid.

Used by the system tests and by the page benchmark, which both drive the server as users do.
"""

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

ROOT = Path(__file__).resolve().parents[1]


def clean_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """A clean, offline environment for a crag subprocess.

    Nothing is inherited but PATH and where the user's models are (HOME, XDG_DATA_HOME). Each
    command loads the model itself (no resident server outlives it, none of the user's is
    used), so measured pipelines never share a prompt cache.
    """
    bin_dir = Path(sys.executable).parent
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": os.environ.get("HOME", str(data_dir)),
        **{k: os.environ[k] for k in ("XDG_DATA_HOME",) if k in os.environ},
        "CRAG_DATA_DIR": str(data_dir),
        "CRAG_MODEL_KEEP_ALIVE_S": "0",
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "PYTHONUNBUFFERED": "1",
    }
    return env | extra


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def langgraph_dev(
    env: dict[str, str], workdir: Path, timeout_s: float = 180, isolated: bool = False
) -> Iterator[Server]:
    """Run ``make serve`` (``langgraph dev``) on a free loopback port until the block ends.

    The server runs in its own process group, which ``Server.stop`` signals by pid.
    Its threads and runs (``.langgraph_api/``) are kept in ``workdir``. ``isolated``: run
    ``langgraph dev --no-reload`` itself instead of ``make serve``, so a file change never
    restarts it and cancels runs (several such servers share nothing but their stores).
    """
    port = free_port()
    log_path = workdir / "langgraph-dev.log"
    started = time.perf_counter()
    # The server's threads and runs (``.langgraph_api/``) are kept in ``workdir``, never in
    # the project's, which is what ``make serve`` shows the user.
    command = ["make", "--no-print-directory", "-C", str(ROOT), "serve", f"SERVE_PORT={port}"]
    command.append(f"SERVE_DIR={workdir}")
    if isolated:
        command = [str(Path(sys.executable).parent / "langgraph"), "dev", "--host", "127.0.0.1"]
        command += ["--config", str(ROOT / "langgraph.json"), "--port", str(port)]
        command += ["--no-browser", "--no-reload"]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            command,
            cwd=workdir,
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
        """The end of the server's log."""
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
