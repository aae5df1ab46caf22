"""The chat model: built once from the context's ``provider:model`` string, called two ways.

Every provider goes through ``ChatOpenAI``: the embedded model is served by llama.cpp's
OpenAI-compatible server, so local, OpenAI and any OpenAI-compatible server share one path.

``complete`` returns text. ``yes_probability`` asks a yes/no question for one token and
reads the answer's log-probabilities (OpenAI's ``logprobs``/``top_logprobs``, which
llama.cpp's server also implements) as a score, P(yes) / (P(yes) + P(no)); a provider that
returns no log-probabilities gets the plain reply's verdict as 1.0 or 0.0, and a log line
says so once. Every call keeps the question's deadline (``crag_core.runtime.deadline``): past
it, a call is the reply of a call not made.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.constants import TAG_NOSTREAM
from pydantic import SecretStr

from crag_core.clients import usage
from crag_core.errors import ConfigError
from crag_core.runtime import deadline, local_model, resident
from crag_core.runtime.model_pool import ModelPool
from crag_core.settings import settings
from prompts import RenderedPrompt

log = logging.getLogger(__name__)
TOP_LOGPROBS = 10
"""Alternatives asked for the verdict token: enough to see "yes", "Yes", "no", "No"."""
_warned_no_logprobs = False


NO_KEY = SecretStr("not-needed")
"""llama.cpp and many OpenAI-compatible servers need no key; the client library insists."""


def build_chat_model(
    model: str,
    *,
    base_url: str,
    temperature: float,
    max_tokens: int,
    timeout_s: float,
    max_retries: int,
) -> BaseChatModel:
    """Build the chat model named ``provider:model``.

    ``local`` uses a running ``crag model-server`` of that model if one is registered in the
    models folder; else, in a process that asked for it (`crag ask`), a resident server it
    starts with its first request; else the embedded server of this process, which its first
    request starts. With ``CRAG_MODEL_KEEP_ALIVE_S`` 0, always the process's own.
    Several base URLs (comma-separated) give a ``ModelPool`` spreading calls over them.
    """
    from langchain_openai import ChatOpenAI

    endpoints, key, name, ready = _endpoint(model, base_url)
    kwargs: dict[str, Any] = {"max_tokens": max_tokens}  # a field alias the stubs do not know
    if model.partition(":")[0] == "local":  # llama.cpp reports a streamed reply's usage too
        kwargs["stream_usage"] = True
    # The question's deadline bounds every request (``deadline``); this process's own server
    # is started by its first request, which waits for it.
    kwargs |= deadline.http_clients(*_waiting(ready)) if ready else deadline.http_clients()

    def one(endpoint: str | None) -> BaseChatModel:
        extra: dict[str, Any] = {"base_url": endpoint} if endpoint else {}
        return ChatOpenAI(
            model=name,
            api_key=key,
            temperature=temperature,
            timeout=timeout_s,
            max_retries=max_retries,
            **kwargs,
            **extra,
        )

    if len(endpoints) == 1:
        return one(endpoints[0])
    urls = [str(e) for e in endpoints]
    return ModelPool(members=[one(url) for url in urls], urls=urls)


def base_urls(value: str) -> list[str]:
    """The base URLs in ``value`` (comma-separated), each checked to be http(s)."""
    urls = [part.strip() for part in value.split(",") if part.strip()]
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"Model server URL {url!r} must start with http:// or https://.")
    return urls


Endpoint = tuple[list[str | None], SecretStr, str, Callable[[], str | None] | None]
"""Base URLs (``[None]``: OpenAI's), key, model name, and what a request must wait for (which
may name the server's URL, when it is known only once it runs)."""

RESIDENT_URL = "http://resident-model-server.invalid/v1"
"""The base URL a client of a resident server is built with: its requests go where the server
runs, known when the first one starts it."""


def _endpoint(model: str, base_url: str) -> Endpoint:
    """The ``Endpoint`` of ``provider:model``.

    ``local`` with base URLs is the embedded model served elsewhere (``crag model-server``),
    e.g. a pool of model servers shared by several crag processes; without, a registered
    model server, else this process's own, whose start its first request waits for.
    """
    provider, _, name = model.partition(":")
    env = settings()
    if provider == "local":
        if base_url:
            return list(base_urls(base_url)), NO_KEY, name or "local", None
        keep = env.model_keep_alive_s
        found = resident.running(name or None) if keep > 0 else None
        if found:
            return [found], NO_KEY, name or "local", None
        if keep > 0 and resident.preferred():
            return [RESIDENT_URL], NO_KEY, name or "local", lambda: resident.resident(name, keep)
        own = local_model.server(name or None)
        return [own.base_url], NO_KEY, name or "local", lambda: (own.wait(), None)[1]
    if provider == "openai":
        if env.openai_api_key is None:
            raise ConfigError(f"model {model!r} needs OPENAI_API_KEY in the environment.")
        if not name:
            raise ConfigError("Name the OpenAI model, e.g. 'openai:gpt-4o-mini'.")
        return [None], env.openai_api_key, name, None
    if provider == "openai-compatible":
        if not (base_url or env.openai_base_url):
            raise ConfigError(
                "'openai-compatible:<model>' needs base_url (context), CRAG_BASE_URL "
                "or OPENAI_BASE_URL."
            )
        urls = base_urls(base_url or env.openai_base_url)
        return list(urls), env.compatible_api_key or NO_KEY, name or "default", None
    raise ConfigError(
        f"Unknown model provider {provider!r} in {model!r}; "
        "use 'local', 'openai:<model>' or 'openai-compatible:<model>'."
    )


def _waiting(
    ready: Callable[[], str | None],
) -> tuple[httpx.BaseTransport, httpx.AsyncBaseTransport]:
    """HTTP transports whose requests first call ``ready()`` (which may block).

    When ``ready()`` names a base URL, the request goes there (a resident server's address is
    known only once it runs).
    """
    import asyncio

    def routed(request: httpx.Request, base: str | None) -> httpx.Request:
        if base:
            target = httpx.URL(base)
            request.url = request.url.copy_with(
                scheme=target.scheme, host=target.host, port=target.port
            )
            request.headers["Host"] = target.netloc.decode("ascii")
        return request

    class Waiting(httpx.BaseTransport):
        def __init__(self) -> None:
            self._inner = httpx.HTTPTransport()

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            return self._inner.handle_request(routed(request, ready()))

        def close(self) -> None:
            self._inner.close()

    class AsyncWaiting(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            base = await asyncio.to_thread(ready)
            return await self._inner.handle_async_request(routed(request, base))

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Waiting(), AsyncWaiting()


def _call_config(prompt: RenderedPrompt, streamed: bool = False) -> RunnableConfig:
    """Name the LLM run after its prompt; record the prompt version and its metadata.

    Calls not ``streamed`` are tagged so LangGraph's ``messages`` stream leaves them out:
    clients that stream the answer token by token see the answer, not the verdicts.
    """
    tags = [f"prompt:{prompt.name}:{prompt.version}"]
    return {
        "run_name": prompt.name,
        "metadata": {**prompt.metadata, "prompt": prompt.name, "prompt_version": prompt.version},
        "tags": tags if streamed else [*tags, TAG_NOSTREAM],
    }


def takes_grammar(model: str) -> bool:
    """Whether ``model``'s server constrains decoding by a GBNF grammar.

    The embedded model's llama.cpp does (its ``grammar`` field); OpenAI and unknown compatible
    servers may refuse the field.
    """
    return model.partition(":")[0] == "local"


def complete(
    llm: BaseChatModel,
    prompt: RenderedPrompt,
    *,
    streamed: bool = False,
    grammar: str = "",
    json_schema: Mapping[str, Any] | None = None,
    max_tokens: int | None = None,
) -> str:
    """Run ``prompt`` and return the reply's text, stripped.

    ``streamed``: the reply is generated token by token when the caller streams (LangGraph's
    ``messages`` mode); otherwise it is asked for in one response. ``grammar``: a GBNF grammar
    the reply must follow (llama.cpp servers only: see ``takes_grammar``). ``json_schema``: a
    JSON schema the reply must follow (OpenAI's ``response_format``, which llama.cpp's server
    turns into a grammar), named ``step``. ``max_tokens``: a tighter bound than the model's
    ``max_tokens`` for this reply. "" when the question's deadline passed first (``_ask``):
    every caller reads an empty reply as no answer.
    """
    options: dict[str, Any] = {} if streamed else {"stream": False}
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    if grammar:
        options["extra_body"] = {"grammar": grammar}
    if json_schema is not None:
        options["extra_body"] = {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "step", "schema": dict(json_schema)},
            }
        }
    reply = _ask(llm.bind(**options) if options else llm, prompt, streamed)
    return "" if reply is None else _text(reply).strip()


def call_tools(llm: BaseChatModel, prompt: RenderedPrompt, tools: Sequence[BaseTool]) -> AIMessage:
    """The model's reply to ``prompt`` with ``tools`` offered natively (OpenAI's ``tools``).

    The reply's ``tool_calls`` are the tools it asks for; none means its text is its answer.
    The tools go in the request as OpenAI function schemas, so any chat model that passes
    request fields on (a pool, a lazily built client) offers them; with none, a plain call.
    An empty reply with no tool call when the question's deadline passed first (``_ask``).
    """
    options: dict[str, Any] = {"stream": False}
    if tools:
        options["tools"] = [convert_to_openai_tool(t) for t in tools]
    reply = _ask(llm.bind(**options), prompt)
    if reply is None:
        return AIMessage(content="")
    if not isinstance(reply, AIMessage):
        return AIMessage(content=_text(reply))
    return reply


def yes_probability(llm: BaseChatModel, prompt: RenderedPrompt) -> float | None:
    """P(yes) of a one-word yes/no reply to ``prompt``; ``None`` if the reply is neither.

    Read from the first token's top log-probabilities (every casing and spacing of "yes" and
    "no" counts); without log-probabilities, from the reply's text (1.0 or 0.0). Never
    streamed: the log-probabilities come in the one response. 0.0 when the question's deadline
    passed first (``_ask``): what no judge confirmed in time counts as not confirmed.
    """
    scorer = llm.bind(logprobs=True, top_logprobs=TOP_LOGPROBS, max_tokens=1, stream=False)
    reply = _ask(scorer, prompt)
    if reply is None:
        return 0.0
    score = score_from_logprobs(reply.response_metadata.get("logprobs"))
    if score is not None:
        return score
    global _warned_no_logprobs
    if not _warned_no_logprobs:
        _warned_no_logprobs = True
        log.warning("The model returned no log-probabilities; verdicts are read as plain yes/no.")
    word = _text(reply).strip().strip(".\"'").lower()
    return 1.0 if word.startswith("yes") else 0.0 if word.startswith("no") else None


def _ask(
    model: Runnable[Any, BaseMessage], prompt: RenderedPrompt, streamed: bool = False
) -> BaseMessage | None:
    """The model's reply to ``prompt``, counted in the node's meter.

    None when the question's deadline passed before it came (``deadline``): the call is not
    made past it, a call in flight stops at it, and the prompt is named as missed.
    """
    if deadline.passed():
        deadline.missed(prompt.name)
        return None
    started = time.perf_counter()
    try:
        reply = model.invoke(prompt.messages, config=_call_config(prompt, streamed))
    except Exception:
        if not deadline.passed():
            raise
        deadline.missed(prompt.name)
        return None
    usage.record(reply, time.perf_counter() - started)
    return reply


def score_from_logprobs(logprobs: Any) -> float | None:
    """P(yes) / (P(yes) + P(no)) over the first token's alternatives; ``None`` if neither."""
    content = (logprobs or {}).get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    mass = {"yes": 0.0, "no": 0.0}
    for alt in content[0].get("top_logprobs") or []:
        word = str(alt.get("token", "")).strip().lower()
        if word in mass:
            mass[word] += math.exp(float(alt.get("logprob", -math.inf)))
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else None


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content
    )
