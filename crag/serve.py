"""What `crag serve` runs: the API server and the page, checked before it starts.

``server_command`` refuses a server open to anyone (no sign-in, not loopback) unless told
``insecure``, gives runs a wall-clock budget (``CRAG_API_RUN_TIMEOUT_S``) and several
workers (``CRAG_API_RUN_WORKERS``, so one slow run holds up no other), and picks the server:
`langgraph dev` (threads in memory, in ``.langgraph_api/`` of the current folder), or, with
``CRAG_API_DATABASE_URL`` and ``CRAG_API_REDIS_URL``, langgraph-api on PostgreSQL
(``crag.shared_server``; the server environment of ``make server-env``), handed
langgraph.json's graphs, page and sign-in as the variables langgraph-api reads.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from crag.auth import access
from crag.threads import password_of
from crag_core.errors import ConfigError
from crag_core.settings import Settings, settings

LANGGRAPH_JSON = Path(__file__).resolve().parents[1] / "langgraph.json"


@dataclass(frozen=True)
class ServerCommand:
    """A server to exec: its argv, the environment it adds, and a warning to print first."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    warning: str = ""


def server_command(host: str, port: int, reload: bool, insecure: bool) -> ServerCommand:
    """The server for these options (``ConfigError`` for one that must not start)."""
    rules = access()  # a malformed token list stops here, with the reason
    warning = ""
    if rules.open and not _is_loopback(host):
        if not insecure:
            raise ConfigError(
                f"No sign-in is configured, so the server would be open to anyone reaching "
                f"{host}. Set CRAG_API_TOKENS or CRAG_API_TOKENS_FILE (docs/deploy.md), or "
                "pass --insecure."
            )
        warning = f"no sign-in; anyone reaching {host}:{port} can use it."
    env = settings()
    if env.api_database_url:
        return _shared(env, host, port, warning)
    argv = [str(Path(sys.executable).with_name("langgraph")), "dev", "--config"]
    argv += [str(LANGGRAPH_JSON), "--host", host, "--port", str(port), "--no-browser"]
    argv += ["--n-jobs-per-worker", str(env.api_run_workers)]
    argv += [] if reload else ["--no-reload"]
    return ServerCommand(argv, _run_budget(env), warning)


def _run_budget(env: Settings) -> dict[str, str]:
    """langgraph-api's run timeout: a run past ``CRAG_API_RUN_TIMEOUT_S`` is cancelled."""
    return {"BG_JOB_TIMEOUT_SECS": f"{env.api_run_timeout_s:g}"}


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _shared(env: Settings, host: str, port: int, warning: str) -> ServerCommand:
    """langgraph-api on PostgreSQL (langgraph-runtime-pg) through ``crag.shared_server``."""
    if importlib.util.find_spec("langgraph_runtime_pg") is None:
        raise ConfigError(
            "CRAG_API_DATABASE_URL needs the PostgreSQL runtime of the API server: run "
            "`make server-env` and start .venv-server/bin/crag serve."
        )
    if not env.api_redis_url:
        raise ConfigError(
            "CRAG_API_DATABASE_URL needs CRAG_API_REDIS_URL too (runs stream through Redis)."
        )
    config = json.loads(LANGGRAPH_JSON.read_text())
    database = env.api_database_url
    password = password_of(env.checkpoint_password_file)
    if password:  # into the URL langgraph-runtime-pg reads (it takes no separate password)
        parts = urlsplit(database)
        where = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
        netloc = f"{quote(parts.username or '', safe='')}:{quote(password, safe='')}@{where}"
        database = urlunsplit(parts._replace(netloc=netloc))
    added = {
        "LANGGRAPH_RUNTIME_EDITION": "pg",
        "DATABASE_URI": database,
        "REDIS_URI": env.api_redis_url,
        "LANGSERVE_GRAPHS": json.dumps(config["graphs"]),
        "LANGGRAPH_HTTP": json.dumps(config.get("http") or {}),
        "LANGGRAPH_AUTH": json.dumps(config.get("auth") or {}),
        "N_JOBS_PER_WORKER": str(env.api_run_workers),
    } | _run_budget(env)
    argv = [sys.executable, "-m", "uvicorn", "crag.shared_server:app", "--host", host]
    argv += ["--port", str(port), "--lifespan", "on", "--no-access-log"]
    return ServerCommand(argv, added, warning)
