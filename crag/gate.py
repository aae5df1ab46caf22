"""The server's front door: what a request must be before the API or the page sees it.

``Gate`` is ASGI middleware on the page's app (``crag.web``); langgraph-api runs a custom app's
middleware around all of its routes, so every request to ``crag serve`` (or ``langgraph dev``
on langgraph.json) passes it first. A browser on the user's machine can reach a server on
loopback from any web page it shows; the gate is what keeps such a page out:

- **Host** must name this server: loopback, the address the request arrived at, or a name in
  ``CRAG_API_HOSTS`` (in open local mode always; with sign-in when that is set). A page on
  another site whose name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own
  name, and is refused.
- **Origin**, when a browser sends one, must be this server's own (the page) or one of
  ``CRAG_API_ORIGINS`` (LangGraph Studio's by default). The replies' CORS headers name that
  origin, never ``*``.
- **JSON only**: a POST or PATCH with a body must say ``application/json`` (a ``text/plain``
  body is the one a page may send elsewhere without asking first).
- **No token in the address**: a query parameter that carries a token is refused before
  anything logs the address.
- **Signed in for everything with data**: with sign-in on, ``/metrics``, ``/docs``,
  ``/openapi.json`` and ``/info`` need a valid token too (``/ok`` stays open for health
  checks), and nothing but GET reaches the page's files under ``/ui``.
- **Batches within the limit**: ``POST /runs/batch`` counts each of its runs against the
  user's ``CRAG_API_MAX_RUNS_PER_USER``.
- **State written directly within a run's limits**: ``POST /threads/{id}/state`` and a new
  thread's ``supersteps`` are held to the limits of a run's input (``crag.limits``: 413).
- Every reply says ``nosniff``, may not be framed by another site, and sends no referrer; the
  page's own files carry a content security policy (its own scripts and styles only).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse

from crag import auth, limits
from crag.policy import Refusal
from crag_core.settings import settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
SIGNED_IN_META = frozenset({"/metrics", "/docs", "/openapi.json", "/info"})
"""langgraph-api's own routes that skip its authentication; the gate asks for a token."""
TOKEN_PARAMETERS = frozenset(
    {"token", "access_token", "id_token", "api_key", "apikey", "api-key", "auth"}
    | {"authorization", "bearer", "password", "passwd", "secret"}
)
"""Query parameters whose value is a credential (the store's ``key`` is not one)."""
MAX_BATCH_BODY = 64 * 1024 * 1024
"""The largest ``/runs/batch`` body read to count its runs."""
PAGE_POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
"""The page's content security policy: its own scripts, styles and calls, never framed."""


class Gate:
    """ASGI middleware: refuses what no legitimate client sends; see the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request, or pass it on with the reply's headers made safe."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        rules = await asyncio.to_thread(auth.access)
        refusal = _refused(scope, headers, rules)
        if refusal is None and _is_batch(scope) and not rules.open:
            receive, refusal = await _batch_within_limit(headers, receive, rules)
        elif refusal is None and _writes_state(scope):
            receive, refusal = await _state_within_limits(scope, receive)
        if refusal is not None:
            status, detail = refusal
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})
            else:
                await JSONResponse({"detail": detail}, status_code=status)(scope, receive, send)
            return
        origin = headers.get("origin")
        page = scope.get("path", "").startswith("/ui")

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                _secure(MutableHeaders(scope=message), origin, page)
            await send(message)

        await self.app(scope, receive, guarded)


def _refused(scope: Scope, headers: Headers, rules: auth.Access) -> tuple[int, str] | None:
    """The status and reason to refuse the request with, or None."""
    path = scope.get("path", "")
    host = headers.get("host", "")
    named = {h.strip().lower() for h in settings().api_hosts.split(",") if h.strip()}
    if (rules.open or named) and not _is_ours(host, scope, named):
        return 403, (
            f"This server does not answer to the host {host[:100]!r}. Use its address, or "
            "name the host in CRAG_API_HOSTS."
        )
    origin = headers.get("origin")
    if origin is not None and not _allowed_origin(origin, host):
        return 403, (
            f"Requests from pages of {origin[:100]!r} are not accepted (CRAG_API_ORIGINS "
            "names the origins that are)."
        )
    if _token_in_query(scope, rules):
        return 400, (
            "Send the token as Authorization: Bearer <token>, never in the address "
            "(addresses are logged)."
        )
    method = scope.get("method", "GET")
    if method in ("POST", "PATCH") and _has_body(headers) and not _is_json(headers):
        return 415, "Send the body as JSON (Content-Type: application/json)."
    if not rules.open:
        if path in SIGNED_IN_META and _user(headers, rules) is None:
            return 401, "Sign in: send Authorization: Bearer <token>."
        if (path == "/ui" or path.startswith("/ui/")) and method not in ("GET", "HEAD"):
            return 405, "The page's files are only read."
    return None


def _is_ours(host: str, scope: Scope, named: set[str]) -> bool:
    """Whether the Host header names this server (loopback, its own address, or a named host)."""
    name = urlsplit(f"//{host}").hostname or ""
    server = scope.get("server") or ("", 0)
    return name in LOOPBACK_NAMES or name == str(server[0]).lower() or name in named


def _allowed_origin(origin: str, host: str) -> bool:
    """Whether a page of ``origin`` may call: this server's own page, or an allowed origin."""
    if urlsplit(origin).netloc.lower() == host.lower() and host:
        return True
    return origin.rstrip("/").lower() in allowed_origins()


def allowed_origins() -> set[str]:
    """``CRAG_API_ORIGINS``: the origins besides the server's own whose pages may call it."""
    given = settings().api_origins.strip()
    if given.lower() == "none":
        return set()
    return {o.strip().rstrip("/").lower() for o in given.split(",") if o.strip()}


def _token_in_query(scope: Scope, rules: auth.Access) -> bool:
    raw = scope.get("query_string", b"").decode("latin-1")
    if not raw:
        return False
    pairs = parse_qsl(raw, keep_blank_values=True)
    return any(k.lower() in TOKEN_PARAMETERS or v in rules.tokens for k, v in pairs)


def _has_body(headers: Headers) -> bool:
    length = headers.get("content-length")
    return bool(headers.get("transfer-encoding")) or (length is not None and length != "0")


def _is_json(headers: Headers) -> bool:
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _user(headers: Headers, rules: auth.Access) -> str | None:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return rules.user_of(token.strip()) if scheme.lower() == "bearer" else None


def _is_batch(scope: Scope) -> bool:
    return (
        scope["type"] == "http"
        and scope.get("method") == "POST"
        and (scope.get("path", "").rstrip("/") == "/runs/batch")
    )


async def _read_body(receive: Receive) -> tuple[Receive, bytes | None]:
    """The request's body (``None`` past ``MAX_BATCH_BODY``) and a ``receive`` that replays it."""
    body = bytearray()
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_BATCH_BODY:
            return receive, None
        if not message.get("more_body"):
            break
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": bytes(body), "more_body": False}

    return replay, bytes(body)


async def _batch_within_limit(
    headers: Headers, receive: Receive, rules: auth.Access
) -> tuple[Receive, tuple[int, str] | None]:
    """Read a ``/runs/batch`` body and refuse it when its runs would pass the user's limit.

    Returns the ``receive`` that hands the app the body read here, and the refusal if any.
    """
    replay, body = await _read_body(receive)
    if body is None:
        return replay, (413, f"A batch of runs may be at most {MAX_BATCH_BODY >> 20} MiB.")
    user = _user(headers, rules)
    try:
        runs = json.loads(body or b"[]")
    except ValueError:
        return replay, None  # the API answers a malformed body itself
    if user is None or not isinstance(runs, list):
        return replay, None
    limit = settings().api_max_runs_per_user
    busy = await auth.runs_under_way(user)
    if busy + len(runs) > limit:
        return replay, (
            429,
            f"This batch has {len(runs)} runs and {busy} of yours are under way; the limit "
            f"is {limit} at once.",
        )
    return replay, None


def _writes_state(scope: Scope) -> bool:
    """A request that writes a thread's state: its update, or a new thread's ``supersteps``."""
    if scope["type"] != "http" or scope.get("method") != "POST":
        return False
    return limits.state_route(scope.get("path", "")) is not None


async def _state_within_limits(
    scope: Scope, receive: Receive
) -> tuple[Receive, tuple[int, str] | None]:
    """Read a state-writing body and refuse it past the limits a run's input has (413).

    The API's run routes check a run's input and command (``crag.auth``); a thread's state
    written directly is held to the same limits here (``crag.limits``).
    """
    replay, body = await _read_body(receive)
    if body is None:
        return replay, (413, f"A request may be at most {MAX_BATCH_BODY >> 20} MiB.")
    try:
        given = json.loads(body or b"{}")
    except ValueError:
        return replay, None  # the API answers a malformed body itself
    try:
        limits.check_writes(
            limits.state_writes(scope.get("path", ""), given), settings().api_max_question_chars
        )
    except Refusal as refused:
        return replay, (refused.status, refused.message)
    return replay, None


def _secure(headers: MutableHeaders, origin: str | None, page: bool) -> None:
    """The reply's headers: CORS naming the allowed origin (never ``*``); no sniffing or framing."""
    if headers.get("access-control-allow-origin"):
        if origin:
            headers["access-control-allow-origin"] = origin
            headers.add_vary_header("Origin")
        else:
            del headers["access-control-allow-origin"]
    headers["x-content-type-options"] = "nosniff"
    headers["x-frame-options"] = "DENY"
    headers["referrer-policy"] = "no-referrer"
    if page:
        headers["content-security-policy"] = PAGE_POLICY
