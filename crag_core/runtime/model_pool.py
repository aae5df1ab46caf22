"""Several OpenAI-compatible model servers behind one chat model: prefix affinity, failover.

Given several base URLs (``CRAG_BASE_URL=http://a/v1,http://b/v1``), each call goes to the
server chosen by a hash of the prompt's first message, so the calls of one pass — which all
start with the same evidence message — reach the same server and reuse its prompt cache, while
different questions spread over the servers. A server that refuses the connection or times out
is skipped for ``cooldown_s`` with a warning and the call goes to the next one; when every
server is down the last error is raised (the caller's message names the model server). A call
the question's deadline cut (``crag_core.runtime.deadline``) marks no server down.
A streamed call fails over only before its first token.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, PrivateAttr

from crag_core.runtime import deadline

log = logging.getLogger(__name__)

AFFINITY_CHARS = 4000
"""How much of the first message picks the server (the evidence message's documents)."""


def unreachable() -> tuple[type[Exception], ...]:
    """Errors that mean the server itself is gone or stuck (a 4xx/5xx reply is the model's).

    openai is imported here, on the first call, not with the module (0.5 s of start-up).
    """
    import openai

    return (openai.APIConnectionError, openai.APITimeoutError)


def affinity(messages: Sequence[BaseMessage]) -> int:
    """A stable number for the start of the prompt's first message (the shared prefix)."""
    prefix = str(messages[0].content)[:AFFINITY_CHARS] if messages else ""
    return int.from_bytes(hashlib.sha1(prefix.encode()).digest()[:8], "big")


class ModelPool(BaseChatModel):
    """Chat models of the same model on several servers, called as one."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    members: list[BaseChatModel]
    urls: list[str]
    cooldown_s: float = 30.0
    _down_until: dict[int, float] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "crag-model-pool"

    def order(self, messages: Sequence[BaseMessage]) -> list[int]:
        """Members to try, in order: the prompt's own server first, servers marked down last."""
        n = len(self.members)
        start = affinity(messages) % n
        ring = [(start + i) % n for i in range(n)]
        now = time.monotonic()
        with self._lock:
            up = [i for i in ring if self._down_until.get(i, 0.0) <= now]
        return up + [i for i in ring if i not in up]

    def _mark_down(self, index: int, exc: BaseException) -> None:
        with self._lock:
            self._down_until[index] = time.monotonic() + self.cooldown_s
        log.warning(
            "Model server %s unreachable (%s); skipping it for %.0fs.",
            self.urls[index],
            type(exc).__name__,
            self.cooldown_s,
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last: BaseException | None = None
        for index in self.order(messages):
            try:
                result: ChatResult = self.members[index]._generate(  # noqa: SLF001
                    messages, stop=stop, run_manager=run_manager, **kwargs
                )
                return result
            except unreachable() as exc:
                if deadline.passed():  # the question's time, not the server, ended the call
                    raise
                self._mark_down(index, exc)
                last = exc
        assert last is not None
        raise last

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        last: BaseException | None = None
        for index in self.order(messages):
            chunks = self.members[index]._stream(  # noqa: SLF001
                messages, stop=stop, run_manager=run_manager, **kwargs
            )
            try:
                first = next(chunks)
            except StopIteration:
                return
            except unreachable() as exc:
                if deadline.passed():
                    raise
                self._mark_down(index, exc)
                last = exc
                continue
            yield first
            yield from chunks
            return
        assert last is not None
        raise last


class LazyChatModel(BaseChatModel):
    """A chat model built by its first call, so a run that never calls it never pays for it.

    Building the real one imports its client library (half a second for langchain-openai) and
    may find or prepare a model server; a question answered from the cache needs none of it.
    Calls go to the built model's own ``_generate`` and ``_stream`` with this run's callbacks,
    as ``ModelPool`` does.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    build: Callable[[], BaseChatModel]
    _built: BaseChatModel | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "crag-lazy"

    @property
    def model(self) -> BaseChatModel:
        """The chat model, built now if it is not yet."""
        with self._lock:
            if self._built is None:
                self._built = self.build()
            return self._built

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        result: ChatResult = self.model._generate(  # noqa: SLF001
            messages, stop=stop, run_manager=run_manager, **kwargs
        )
        return result

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        yield from self.model._stream(  # noqa: SLF001
            messages, stop=stop, run_manager=run_manager, **kwargs
        )
