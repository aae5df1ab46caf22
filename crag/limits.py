"""How much one run's input may carry: one set of limits, whichever door the input comes in by.

A graph's state can be written through several doors of the API server: a run's ``input``, its
``command`` (``update``, and the ``input`` of each ``Send`` in ``goto``), a thread's state
update (``POST /threads/{id}/state``), the updates a new thread is made with
(``POST /threads`` ``supersteps``), and the runs MCP and A2A make (which come back in through
the run routes). ``state_writes`` finds every state-shaped value a request carries, and
``check_writes`` holds them, together, to the same limits:

- a question (``question``, or a message's text) at most ``CRAG_API_MAX_QUESTION_CHARS``;
- at most ``MAX_MESSAGES`` messages;
- at most ``MAX_URLS_PER_RUN`` web pages for the indexer;
- inline documents (the indexer's ``docs``) of at most ``MAX_DOC_CHARS`` characters each and
  ``MAX_RUN_CHARS`` in all, and at most ``MAX_FILE_BYTES`` of text (an upload's limits).

The indexer's own first step checks its state again (``check_index``): whatever door a value
came in by, nothing past these limits is read, fetched or embedded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from crag.policy import Refusal
from crag_core.formats.extract import MAX_FILE_BYTES, MAX_TEXT_CHARS

MAX_URLS_PER_RUN = 20
"""Web pages one indexer run may fetch (each may take 30 s and 20 MiB)."""
MAX_MESSAGES = 200
"""Messages a run's input may carry (a chat client that keeps the conversation itself)."""
MAX_DOC_CHARS = MAX_TEXT_CHARS
"""The most characters one inline document may have: an uploaded file's text cap."""
MAX_RUN_CHARS = MAX_TEXT_CHARS
"""The most characters the inline documents of one run may have together."""


def run_writes(kwargs: Mapping[str, Any]) -> list[Any]:
    """The state-shaped values a run carries: its input, its command's update and Sends."""
    writes = [kwargs.get("input")]
    command = kwargs.get("command")
    if isinstance(command, Mapping):
        writes.append(_as_values(command.get("update")))
        goto = command.get("goto")
        for target in goto if isinstance(goto, list) else [goto]:
            if isinstance(target, Mapping):
                writes.append(target.get("input"))
    return [w for w in writes if w is not None]


def state_writes(path: str, body: Any) -> list[Any]:
    """The state-shaped values a request to a thread route writes (``[]``: none).

    ``POST /threads/{id}/state`` writes ``values``; ``POST /threads`` the ``values`` of each
    update of each of its ``supersteps``.
    """
    route = state_route(path)
    if not isinstance(body, Mapping) or route is None:
        return []
    if route == "state":
        return [_as_values(body.get("values"))]
    steps = body.get("supersteps")
    return [
        _as_values(update.get("values"))
        for step in (steps if isinstance(steps, list) else [])
        if isinstance(step, Mapping)
        for update in _listed(step, "updates")
        if isinstance(update, Mapping)
    ]


def state_route(path: str) -> str | None:
    """``"state"`` for ``/threads/{id}/state``, ``"threads"`` for ``/threads``, else None.

    The two routes whose POST writes a thread's state.
    """
    parts = path.strip("/").split("/")
    if len(parts) == 3 and parts[0] == "threads" and parts[2] == "state":
        return "state"
    return "threads" if parts == ["threads"] else None


def check_writes(writes: Iterable[Any], question_chars: int) -> None:
    """``Refusal`` (413) when the values ``writes`` hold, taken together, pass a limit."""
    values = [w for w in writes if isinstance(w, Mapping)]
    for value in values:
        if len(question := _question(value)) > question_chars:
            raise Refusal(
                413,
                f"The question is {len(question)} characters long; the limit is {question_chars}.",
            )
    messages = [m for v in values for m in _listed(v, "messages")]
    longest = max((len(_text(m)) for m in messages), default=0)
    if len(messages) > MAX_MESSAGES or longest > question_chars:
        raise Refusal(
            413,
            f"A conversation may hold {MAX_MESSAGES} messages of at most {question_chars} "
            "characters each.",
        )
    check_index([d for v in values for d in _listed(v, "docs")], _all(values, "urls"))


def check_index(docs: list[Any], urls: list[Any]) -> None:
    """``Refusal`` (413) when an indexer run's documents or addresses pass their limits."""
    if len(urls) > MAX_URLS_PER_RUN:
        raise Refusal(413, f"{len(urls)} web pages in one run; the limit is {MAX_URLS_PER_RUN}.")
    texts = [_page_content(d) for d in docs]
    longest = max((len(t) for t in texts), default=0)
    if longest > MAX_DOC_CHARS:
        raise Refusal(
            413,
            f"A document sent is {longest:,} characters long; the limit is {MAX_DOC_CHARS:,} a "
            "document (an uploaded file's).",
        )
    chars = sum(len(t) for t in texts)
    size = sum(len(t.encode()) for t in texts)
    if chars > MAX_RUN_CHARS or size > MAX_FILE_BYTES:
        raise Refusal(
            413,
            f"The documents sent are {chars:,} characters ({size >> 20} MiB); the limit is "
            f"{MAX_RUN_CHARS:,} characters and {MAX_FILE_BYTES >> 20} MiB a run (send them in "
            "several runs).",
        )


def _as_values(update: Any) -> Any:
    """A command's or a state update's values as a mapping (a list of pairs becomes one).

    Pairs of one key are gathered: ``[["docs", [a]], ["docs", [b]]]`` carries both.
    """
    if not isinstance(update, list):
        return update
    gathered: dict[str, list[Any]] = {}
    for pair in update:
        if isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str):
            value = pair[1]
            gathered.setdefault(pair[0], []).extend(value if isinstance(value, list) else [value])
    return gathered


def _listed(given: Any, key: str) -> list[Any]:
    found = given.get(key) if isinstance(given, Mapping) else None
    return found if isinstance(found, list) else []


def _all(values: list[Mapping[str, Any]], key: str) -> list[Any]:
    return [item for value in values for item in _listed(value, key)]


def _page_content(doc: Any) -> str:
    if isinstance(doc, Mapping):
        text = doc.get("page_content", "")
    else:
        text = getattr(doc, "page_content", "")
    return text if isinstance(text, str) else str(text)


def _text(message: Any) -> str:
    content = message.get("content", "") if isinstance(message, Mapping) else ""
    return content if isinstance(content, str) else str(content)


def _question(given: Mapping[str, Any]) -> str:
    """The question a value carries (``question``, or the newest message's text)."""
    if isinstance(given.get("question"), str):
        return str(given["question"])
    messages = _listed(given, "messages")
    return _text(messages[-1]) if messages else ""
