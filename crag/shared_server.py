"""The API server on PostgreSQL, with the page: what `crag serve` runs when threads are shared.

Stock langgraph-api on langgraph-runtime-pg 0.11.1.post1, with two shims for what that runtime
does not yet do with this project's langgraph.json (docs/deploy.md, "Threads that survive"):

- langgraph-api wraps a custom HTTP app (``http``) in a middleware that opens the server's store
  on every ASGI event, the lifespan's included, while the runtime's store exists only once its
  connection pool has started in that lifespan: the server stopped at start ("Store requires
  setup_store()/start_pool() first"). The pool is started first here (``start_pool`` does
  nothing the second time).
- With custom auth, a run's config holds the signed-in user, which the runtime's database
  engine could not write as JSON ("Object of type ProxyUser is not JSON serializable": every
  run a 500). Its engine is given langgraph-api's own JSON encoder, which can.
- The runtime reads a thread's state (``/threads/{id}/state``…) without asking the auth
  handlers, so one user could read another's (get, history, runs and search were filtered).
  Those requests are let through only when the same user may read the thread itself
  (``GET /threads/{id}``, answered by the same app with the same credentials); else 404.

Everything else is langgraph-api's app, unchanged. Only the server environment
(``make server-env``) can import this module.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import langgraph_runtime_pg.database as pg_database
from langgraph_api.serde import json_dumpb
from starlette.responses import JSONResponse

_create_engine = pg_database.create_async_engine


def _engine_writing_api_json(*args: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("json_serializer", lambda value: json_dumpb(value).decode())
    return _create_engine(*args, **kwargs)


pg_database.create_async_engine = _engine_writing_api_json

from langgraph_api.server import app as api_app  # noqa: E402 - after the engine is set up

_STATE = re.compile(r"^/threads/([^/]+)/state(/.*)?$")


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """langgraph-api's app, its pool started first, a thread's state only for its owner."""
    if scope["type"] == "lifespan":
        await pg_database.start_pool()
    elif scope["type"] == "http" and (found := _STATE.match(scope["path"])):
        if not await _may_read_thread(scope, found.group(1)):
            response = JSONResponse({"detail": f"Thread {found.group(1)} not found"}, 404)
            await response(scope, receive, send)
            return
    await api_app(scope, receive, send)


async def _may_read_thread(scope: dict[str, Any], thread_id: str) -> bool:
    """Whether the request's credentials may read thread ``thread_id`` (asked of this app)."""
    headers = {k.decode(): v.decode() for k, v in scope.get("headers", []) if k.lower() in _AUTH}
    transport = httpx.ASGITransport(app=api_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api", timeout=30) as api:
        reply = await api.get(f"/threads/{thread_id}", headers=headers)
    return reply.status_code == 200


_AUTH = {b"authorization", b"x-api-key", b"cookie"}
