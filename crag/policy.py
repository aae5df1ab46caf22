"""What an API caller may ask of a run: the server's policy, applied before the graph sees it.

The CLI and Python callers are the operator: they set any field of the run's ``Context``. A
caller of the API server (signed in, or anyone reaching it in open local mode) is not, and its
run's ``context`` (or ``config.configurable``, which the server reads as the context when no
context is sent) is checked here by ``crag.auth`` when the run is created:

Each field of the context declares what a caller may do with it (``Caller`` in its metadata:
``crag_core.schema.context``); a field that declares nothing is the operator's, so a new
setting is closed to callers until its declaration opens it.

- **The operator's fields** (``OPERATOR_FIELDS``: where the server connects, what it sends
  there and what it reads, and any undeclared field): a caller may leave them out or send the
  server's own value, nothing else (403 naming the field and why), unless the operator lists
  the field in ``CRAG_API_CALLER_FIELDS``.
- **Bounded fields** (``CALLER_MAXIMA``) may be set up to a bound (or the server's own value,
  if higher): more is 422 naming the field and the bound. ``cache_threshold`` may be raised,
  not lowered: a low one would serve another question's stored answer.
- A value the context cannot take is 422 with the field's own message; ``config`` may set the
  recursion limit and concurrency only within the graph's own needs.

Nothing is changed silently: a run either gets exactly what it asked for or is refused.
Web pages fetched for API callers go where ``outbound()`` allows (public addresses, and the
internal hosts of ``CRAG_API_FETCH_ALLOW``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crag_core.errors import ConfigError
from crag_core.formats.outbound import Outbound, parse_allowed
from crag_core.schema.context import FIELD_NAMES, Context, caller_rule, validated
from crag_core.settings import settings

OPERATOR_FIELDS: dict[str, str] = {
    name: rule.why for name in sorted(FIELD_NAMES) if not (rule := caller_rule(name)).may_set
}
"""Fields an API caller may not choose (unless ``CRAG_API_CALLER_FIELDS`` names them), and why:
every field whose declaration (``crag_core.schema.context.Caller``) does not open it."""

CALLER_MAXIMA: dict[str, int] = {
    name: rule.at_most
    for name in sorted(FIELD_NAMES)
    if (rule := caller_rule(name)).may_set and rule.at_most is not None
}
"""The most an API caller may ask of each field (or the server's own value, if higher)."""

NOT_BELOW_SERVER = frozenset(n for n in FIELD_NAMES if caller_rule(n).not_below_server)
"""Fields an API caller may raise above the server's value but not lower."""

MAX_CONCURRENCY = 8
"""The most parallel branches (``config.max_concurrency``) an API caller may ask for."""


class Refusal(Exception):
    """A run the policy refuses: the HTTP status and the message (which names the field)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def caller_fields() -> frozenset[str]:
    """The operator's fields the operator leaves to API callers (``CRAG_API_CALLER_FIELDS``)."""
    named = {f.strip() for f in settings().api_caller_fields.split(",") if f.strip()}
    unknown = sorted(named - set(OPERATOR_FIELDS))
    if unknown:
        raise ConfigError(
            f"CRAG_API_CALLER_FIELDS names {', '.join(unknown)}; it takes some of "
            f"{', '.join(OPERATOR_FIELDS)} (every other field is the caller's already)."
        )
    return frozenset(named)


def locked_fields() -> list[str]:
    """The fields an API caller may not change on this server (the page greys them out)."""
    return sorted(set(OPERATOR_FIELDS) - caller_fields())


def check_context(given: Any) -> None:
    """``Refusal`` unless an API caller may run with ``given`` (its context or configurable).

    Keys that are not fields of the context are left to the server (which drops them).
    """
    if not given:
        return
    if not isinstance(given, Mapping):
        raise Refusal(422, "The run's context must be an object of settings.")
    server = Context()
    open_fields = caller_fields()
    for name, raw in given.items():
        if name not in FIELD_NAMES:
            continue
        try:
            value = validated(name, raw)
        except ConfigError as exc:
            raise Refusal(422, str(exc)) from exc
        ours = getattr(server, name)
        if value == ours or name in open_fields:
            continue
        if name in OPERATOR_FIELDS:
            raise Refusal(
                403,
                f"{name} is set by the server's operator ({OPERATOR_FIELDS[name]}): leave it "
                f"out of the run's context. The operator may open it with CRAG_API_CALLER_FIELDS.",
            )
        bound = CALLER_MAXIMA.get(name)
        if bound is not None and value > max(bound, ours):
            raise Refusal(422, f"{name} may be at most {max(bound, ours)} on this server.")
        if name in NOT_BELOW_SERVER and value < ours:
            raise Refusal(422, f"{name} may not be set below this server's {ours}.")


def check_config(config: Any) -> None:
    """``Refusal`` unless an API caller may run with ``config`` (a ``RunnableConfig``)."""
    if not config:
        return
    if not isinstance(config, Mapping):
        raise Refusal(422, "The run's config must be an object.")
    from crag_core.schema.context import MAX_RETRIES_LIMIT
    from graph.graph import step_limit

    limit = step_limit(MAX_RETRIES_LIMIT)
    recursion = config.get("recursion_limit")
    if recursion is not None and (not isinstance(recursion, int) or not 0 < recursion <= limit):
        raise Refusal(422, f"recursion_limit may be at most {limit} (the graph's own bound).")
    concurrency = config.get("max_concurrency")
    if concurrency is not None and (
        not isinstance(concurrency, int) or not 0 < concurrency <= MAX_CONCURRENCY
    ):
        raise Refusal(422, f"max_concurrency may be at most {MAX_CONCURRENCY}.")
    check_context(config.get("configurable"))


def outbound() -> Outbound:
    """Where the server may fetch web pages for an API caller.

    Public addresses, and the internal hosts and networks of ``CRAG_API_FETCH_ALLOW``.
    """
    try:
        return Outbound(parse_allowed(settings().api_fetch_allow))
    except ValueError as exc:
        raise ConfigError(f"CRAG_API_FETCH_ALLOW: {exc}.") from exc
