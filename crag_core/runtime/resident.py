"""Model servers that outlive a command: registered in the models folder, found by every process.

``crag model-server`` serves the embedded model until stopped; `crag ask` finds such a server,
or starts a **resident** one of its own in the background (``resident``) when a question needs
the model and none answers, so the model is loaded once, not by every question. A resident
server exits after ``CRAG_MODEL_KEEP_ALIVE_S`` without a request (``IdleWatch``, reading
llama.cpp's own counters), like the keep-alive of local model runners.

Each server writes a record, ``<models folder>/servers/<model>.json`` (its URL, pid, how long it
stays up idle), when it is ready, and removes it when it stops. A record whose process is gone
is removed by whoever reads it; a server that does not answer its health check is passed over,
and so is one whose port is not held by the record's own process: a record outlives a crash,
its pid and port can be taken by others, and whatever answers there would be sent the user's
questions and documents (``_holds_port``, read from ``/proc``).
Starting one is done under a file lock, so two commands at once start one server, not two.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crag_core.errors import ModelError
from crag_core.runtime.local_model import EmbeddedModel, LocalServer, get_model
from crag_core.settings import models_dir

_preferred = False


def prefer() -> None:
    """Ask for a resident server in this process (`crag ask`).

    Short-lived commands then load the model once for all of them, not each. Long-lived
    processes (the API server, notebooks) and measurements (each pipeline its own prompt cache)
    keep a server of their own.
    """
    global _preferred
    _preferred = True


def preferred() -> bool:
    """Whether this process asked for a resident server."""
    return _preferred


HEALTH_TIMEOUT_S = 1.0
"""How long a registered server has to answer before a command starts its own."""
START_TIMEOUT_S = 180.0
"""How long a command waits for the resident server it started to load the model."""


def servers_dir() -> Path:
    """Where servers register: the models folder's ``servers/`` (one for every data dir)."""
    return models_dir() / "servers"


def _record_path(model: EmbeddedModel) -> Path:
    return servers_dir() / f"{model.name}.json"


def register(srv: LocalServer, model: EmbeddedModel, idle_s: float = 0.0) -> Path:
    """Record a server of this process for other processes to find (``idle_s``: 0 never)."""
    path = _record_path(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "url": srv.base_url,
        "pid": os.getpid(),
        "model": model.name,
        "idle_exit_s": idle_s,
        "started": time.time(),
    }
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)
    return path


def unregister(path: Path) -> None:
    """Remove this process's record (one another server wrote since is left alone)."""
    try:
        if int(json.loads(path.read_text())["pid"]) == os.getpid():
            path.unlink(missing_ok=True)
    except (OSError, ValueError, KeyError, TypeError):
        pass


@dataclass(frozen=True)
class Registered:
    """A registered server: its record, and whether it answers now."""

    model: str
    url: str
    pid: int
    idle_exit_s: float
    started: float
    answers: bool


def registered(name: str | None = None) -> Registered | None:
    """The registered server of model ``name`` (None: none, or its process is gone)."""
    model = get_model(name)
    path = _record_path(model)
    try:
        record: dict[str, Any] = json.loads(path.read_text())
        pid, url = int(record["pid"]), str(record["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        path.unlink(missing_ok=True)
        return None
    except PermissionError:
        pass  # alive, another user's
    return Registered(
        model.name,
        url,
        pid,
        float(record.get("idle_exit_s") or 0),
        float(record.get("started") or 0),
        _holds_port(pid, url) and _healthy(url),
    )


def running(name: str | None = None) -> str | None:
    """The base URL of a registered server of ``name`` that answers now, else None."""
    found = registered(name)
    return found.url if found and found.answers else None


def _holds_port(pid: int, url: str) -> bool:
    """Whether process ``pid`` is the one listening on ``url``'s port (Linux's ``/proc``).

    The listening sockets on the port are read from ``/proc/net/tcp`` and ``tcp6``, and one of
    them must be among the process's open files. A process of another user cannot be looked
    into: not ours, not used. Where there is no ``/proc`` the health check alone decides.
    """
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].exists():
        return True
    port = urllib.parse.urlsplit(url).port
    if port is None:
        return False
    listening = set()
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if (
                len(fields) > 9
                and fields[3] == "0A"
                and int(fields[1].rsplit(":", 1)[1], 16) == port
            ):
                listening.add(f"socket:[{fields[9]}]")
    try:
        files = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:  # gone, or another user's
        return False
    for file in files:
        try:
            if os.readlink(file) in listening:
                return True
        except OSError:  # closed since it was listed
            continue
    return False


def _healthy(url: str) -> bool:
    try:
        health = url.removesuffix("/v1") + "/health"
        with urllib.request.urlopen(health, timeout=HEALTH_TIMEOUT_S) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@contextmanager
def _starting(model: EmbeddedModel) -> Iterator[None]:
    """Hold the lock that one command at a time takes to start a resident server."""
    lock = servers_dir() / f"{model.name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def resident(name: str | None, idle_s: float) -> str:
    """The base URL of a server of model ``name``: a registered one, else one started now.

    The server started is ``crag model-server --idle-exit idle_s`` in its own session, logging
    to ``servers/<model>.log``; this waits for it to load (``ModelError`` with the end of its
    log if it cannot).
    """
    model = get_model(name)
    with _starting(model):
        found = running(model.name)
        if found:
            return found
        log = servers_dir() / f"{model.name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                _command(model, idle_s),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # not stopped with the command that started it
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while (url := running(model.name)) is None:
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace").strip().splitlines()[-3:]
                proc.kill()
                raise ModelError(
                    f"The resident model server did not start: {' '.join(tail) or 'no output'}"
                )
            time.sleep(0.1)
        return url


def _command(model: EmbeddedModel, idle_s: float) -> list[str]:
    """``crag model-server`` for ``model`` on a free loopback port, exiting when idle."""
    return [
        sys.executable,
        "-m",
        "crag.cli",
        "model-server",
        "--name",
        model.name,
        "--port",
        "0",
        "--idle-exit",
        f"{idle_s:g}",
    ]


def stop(name: str | None = None, timeout_s: float = 20.0) -> Registered | None:
    """Stop the registered server of ``name`` (SIGTERM, then SIGKILL); what was stopped."""
    found = registered(name)
    if found is None:
        return None
    os.kill(found.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while registered(name) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    if registered(name) is not None:
        os.kill(found.pid, signal.SIGKILL)
        _record_path(get_model(name)).unlink(missing_ok=True)
    return found


class IdleWatch:
    """Tells when a llama.cpp server has had no request for ``idle_s`` seconds.

    Reads the server's own counters (``/metrics``: requests under way or waiting, and the
    decode calls made), so a request is seen however it came.
    """

    def __init__(self, base_url: str, idle_s: float) -> None:
        self.url = base_url.removesuffix("/v1") + "/metrics"
        self.idle_s = idle_s
        self._decoded: float | None = None
        self._since = time.monotonic()

    def _counters(self) -> dict[str, float]:
        """llama.cpp's counters (empty when it does not answer: it is busy, or going)."""
        try:
            with urllib.request.urlopen(self.url, timeout=5) as reply:
                text = reply.read().decode()
        except OSError:
            return {}
        values = {}
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name.startswith("llamacpp:"):
                values[name.removeprefix("llamacpp:")] = float(value)
        return values

    def busy(self) -> bool:
        """Whether a request came or is under way since the last look (and note the time)."""
        now = self._counters()
        decoded = now.get("n_decode_total")
        waiting = now.get("requests_processing", 0) + now.get("requests_deferred", 0)
        busy = not now or decoded != self._decoded or waiting > 0
        self._decoded = decoded
        if busy:
            self._since = time.monotonic()
        return busy

    def wait(self, stop: threading.Event) -> None:
        """Return when ``stop`` is set or the server has been idle for ``idle_s``."""
        step = max(0.2, min(2.0, self.idle_s / 5))
        self.busy()
        while not stop.wait(step):
            self.busy()
            if time.monotonic() - self._since >= self.idle_s:
                return
