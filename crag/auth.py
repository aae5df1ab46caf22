"""Who may use the API server, and what each user may see: LangGraph's ``Auth``.

langgraph.json names ``auth`` as the server's authentication; ``langgraph dev`` runs it for the
LangGraph API and (``enable_custom_route_auth``) for the page's routes under ``/crag/``. (Not
under ``/ui/``: langgraph-api lets every GET under /ui through unchecked, for its own UI assets;
the page's files live there, and hold no data.)

- **Sign-in**: a bearer token from ``CRAG_API_TOKENS`` (``user:token,user:token``) or
  ``CRAG_API_TOKENS_FILE`` (one ``user:token`` a line). Neither set: open local mode, every
  request is the user ``local`` (``crag serve`` then refuses to listen beyond loopback). The
  page's own files (HTML, scripts) are served to anyone: they hold no data, and the page asks
  for the token before its first call.
- **Each user's threads**: a thread and its runs carry their owner in the metadata; every read,
  search, stream and history is filtered by it, so another user's thread is a 404, as one that
  does not exist.
- **Collections**: ``CRAG_API_COLLECTIONS`` (``user:c1|c2,...``) limits a user to some; a run
  on another collection is refused (403, naming it), and so are the page's reads and changes.
- **What a run may ask**: its settings pass ``crag.policy`` (the operator's fields are the
  operator's, the others within bounds), in open mode too.
- **Limits**: what a run's input and command carry passes ``crag.limits`` (a question's
  length, messages, web pages, inline documents' characters and bytes; 413 past them: the
  thread routes that write state are held to the same in ``crag.gate``); a signed-in user
  with ``CRAG_API_MAX_RUNS_PER_USER`` runs pending or running, on any thread, gets 429 for the
  next (a batch of runs counts each of its runs, ``crag.gate``).
- Assistants, crons and the store are read-only or closed to users: an assistant made by a user
  could carry a collection in its context and run it past the check.

No token appears in a message, a log line or the page's settings.
"""

from __future__ import annotations

import asyncio
import hmac
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from langgraph_sdk import Auth

from crag.limits import check_writes, run_writes
from crag.policy import Refusal, check_config, check_context
from crag_core.errors import ConfigError
from crag_core.schema.context import Context
from crag_core.settings import settings

LOCAL_USER = "local"
"""Everyone, in open local mode (no tokens configured)."""
PAGE_VISITOR = "page-visitor"
"""Whoever loads the page's own files (no data in them)."""

auth = Auth()


@dataclass(frozen=True)
class Access:
    """The server's users (token -> user) and the collections each may use (None: all)."""

    tokens: dict[str, str] = field(default_factory=dict)
    collections: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def open(self) -> bool:
        """Whether no sign-in is configured (open local mode)."""
        return not self.tokens

    def user_of(self, token: str) -> str | None:
        """The user whose token this is (compared in constant time), or None."""
        found = None
        for known, user in self.tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                found = user
        return found

    def may_use(self, user: str, collection: str) -> bool:
        """Whether ``user`` may ask, read and change ``collection``."""
        allowed = self.collections.get(user)
        return allowed is None or collection in allowed


def _pairs(text: str, what: str) -> list[tuple[str, str]]:
    """``user:value`` items (commas or lines); a malformed item is named by position only."""
    items = [i.strip() for i in text.replace("\n", ",").split(",")]
    items = [i for i in items if i and not i.startswith("#")]
    pairs = []
    for n, item in enumerate(items, start=1):
        user, sep, value = item.partition(":")
        if not sep or not user.strip() or not value.strip():
            raise ConfigError(f"{what}: item {n} is not user:value.")  # never echo a token
        pairs.append((user.strip(), value.strip()))
    return pairs


@lru_cache(maxsize=1)
def access() -> Access:
    """The server's access rules, read once from the environment (a bad one: ``ConfigError``)."""
    env = settings()
    text = env.api_tokens.get_secret_value() if env.api_tokens else ""
    if env.api_tokens_file:
        try:
            text = env.api_tokens_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"CRAG_API_TOKENS_FILE {env.api_tokens_file} cannot be read ({exc.strerror})."
            ) from exc
    tokens: dict[str, str] = {}
    for user, token in _pairs(text, "CRAG_API_TOKENS"):
        if token in tokens:
            raise ConfigError(f"CRAG_API_TOKENS: two users share the token of {user!r}.")
        tokens[token] = user
    collections = {
        user: frozenset(c.strip() for c in names.split("|") if c.strip())
        for user, names in _pairs(env.api_collections, "CRAG_API_COLLECTIONS")
    }
    return Access(tokens, collections)


def _is_page_file(path: str) -> bool:
    """The page's own files (``/ui/``); langgraph-api serves every GET under /ui unchecked."""
    return path == "/ui" or path.startswith("/ui/")


@auth.authenticate
async def authenticate(authorization: str | None, path: str) -> Auth.types.MinimalUserDict:
    """The user a request comes from: its bearer token's, or ``local`` in open mode."""
    rules = await asyncio.to_thread(access)  # the first call may read the tokens file
    if rules.open:
        return {"identity": LOCAL_USER, "is_authenticated": True}
    if _is_page_file(path):
        return {"identity": PAGE_VISITOR, "is_authenticated": False}
    scheme, _, token = (authorization or "").partition(" ")
    user = rules.user_of(token.strip()) if scheme.lower() == "bearer" else None
    if user is None:
        detail = "Sign in: send Authorization: Bearer <token>."
        if authorization:
            detail = "The token is not valid."
        raise Auth.exceptions.HTTPException(status_code=401, detail=detail)
    return {"identity": user, "is_authenticated": True}


def _owner(ctx: Auth.types.AuthContext) -> dict[str, str]:
    return {"owner": ctx.user.identity}


@auth.on.threads
async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """A user's threads are theirs: new ones get the owner, every access is filtered by it.

    An update keeps the owner too: a user cannot hand a thread to another user's list.
    """
    if ctx.action in ("create", "update"):
        if not isinstance(value.get("metadata"), dict):
            value["metadata"] = {}
        value["metadata"].update(_owner(ctx))
    return _owner(ctx)


@auth.on.threads.create_run
async def run_within_limits(
    ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate
) -> dict[str, str]:
    """A run: on the user's own thread, a collection they may use, within the limits.

    Its context and config are checked by ``crag.policy`` (the operator's fields, the bounds).
    """
    kwargs = value.get("kwargs") or {}
    if kwargs.get("webhook"):  # the server would POST the run's output where it points
        raise Auth.exceptions.HTTPException(
            403, detail="Webhooks are not offered by this server; poll or stream the run."
        )
    await _within_policy(kwargs)
    collection = str((kwargs.get("context") or {}).get("collection") or Context().collection)
    user = ctx.user.identity
    rules = await asyncio.to_thread(access)
    if not rules.may_use(user, collection):
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"You may not use collection {collection!r}."
        )
    try:  # the input and the command's update and Sends, held to one set of limits
        check_writes(run_writes(kwargs), settings().api_max_question_chars)
    except Refusal as refused:
        raise Auth.exceptions.HTTPException(refused.status, detail=refused.message) from None
    if not rules.open:
        await _check_runs_under_way(user)
    value.setdefault("metadata", {}).update(_owner(ctx))
    return _owner(ctx)


async def _check_runs_under_way(user: str) -> None:
    """429 when ``user`` already has ``CRAG_API_MAX_RUNS_PER_USER`` runs pending or running."""
    limit = settings().api_max_runs_per_user
    runs = await runs_under_way(user)
    if runs >= limit:
        raise Auth.exceptions.HTTPException(
            status_code=429,
            detail=f"{runs} runs of yours are under way; wait for one to end (limit {limit}).",
        )


RUN_STATES_COUNTED = ("pending", "running")
"""A run counts against its user's limit from the moment it is accepted until it ends."""


async def runs_under_way(user: str) -> int:
    """How many of ``user``'s runs are pending or running, on any thread (counted up to the limit).

    Runs, not threads: a thread holds one running run and any number queued behind it
    (``multitask_strategy="enqueue"``), and each counts. Every route that starts a run (a
    thread's, a stateless one, a batch, MCP, A2A) makes it on a thread the user owns, whose
    status is busy while it has runs; so the user's busy threads are searched, and their
    pending and running runs counted.
    """
    from langgraph_runtime.database import connect
    from langgraph_runtime.ops import Runs, Threads

    limit = settings().api_max_runs_per_user
    counted = 0
    async with connect() as conn:
        found, _ = await Threads.search(
            conn, metadata={"owner": user}, values=None, status="busy", limit=limit, offset=0
        )
        threads = [t async for t in found]
        for thread in threads:
            for state in RUN_STATES_COUNTED:
                runs = await Runs.search(conn, thread["thread_id"], status=state, limit=limit)
                counted += len([r async for r in runs])
            if counted >= limit:
                break
    return counted


@auth.on.assistants
async def read_only_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Users run the server's assistants; making or changing one is the operator's.

    In open local mode anyone may make one, within the same policy as a run's settings (an
    assistant's context is every one of its runs' context).
    """
    if ctx.action in ("read", "search"):
        return True
    if not access().open:
        return False
    await _within_policy(value or {})
    return True


async def _within_policy(given: Any) -> None:
    """403/422 naming the field unless ``crag.policy`` allows ``given``'s context and config.

    Checked off the event loop: making the server's context reads the prompt files.
    """

    def check() -> None:
        check_context(given.get("context"))
        check_config(given.get("config"))

    try:
        await asyncio.to_thread(check)
    except Refusal as refused:
        raise Auth.exceptions.HTTPException(refused.status, detail=refused.message) from None


@auth.on.crons
async def no_crons(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Scheduled runs are not offered: the scheduler starts them with nobody's sign-in."""
    return False


@auth.on.store
async def no_store(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """The server's store is not used by crag; users may not use it either."""
    return access().open


def user_of_request(scope: Any) -> str | None:
    """The signed-in user of a request to the page's routes (None: not signed in).

    Without the server's authentication in front (a test client, a plain mount) a request is
    the local user in open mode, and nobody otherwise.
    """
    identity = getattr(scope.get("user"), "identity", None)
    if identity is None:
        return LOCAL_USER if access().open else None
    return None if identity == PAGE_VISITOR else str(identity)
