"""The chat model: built once from the context's ``provider:model`` string, called two ways.

Every provider goes through ``ChatOpenAI``: the embedded model is served by llama.cpp's
OpenAI-compatible server, so local, OpenAI and any OpenAI-compatible server share one path.

``complete`` returns text. ``judge`` asks for JSON matching a Pydantic schema through the
OpenAI ``response_format={"type": "json_schema", ...}`` parameter (llama.cpp turns the schema
into a grammar) and parses it; if the reply is still unparsable (a server that ignores the
schema, a truncated reply) it returns ``None`` and the caller applies its documented fallback.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ValidationError

from crag.errors import ConfigError
from graph.context import Context
from prompts import RenderedPrompt

T = TypeVar("T", bound=BaseModel)


def build_chat_model(ctx: Context) -> BaseChatModel:
    """Build the chat model named by ``ctx.model`` (starting the embedded server if local)."""
    from langchain_openai import ChatOpenAI

    provider, _, name = ctx.model.partition(":")
    common: dict[str, Any] = {
        "temperature": ctx.temperature,
        "max_tokens": ctx.max_tokens,
        "timeout": ctx.llm_timeout_s,
        "max_retries": ctx.llm_max_retries,
    }
    if provider == "local":
        from crag import local_model

        srv = local_model.server(name or None)
        # llama.cpp needs no key; the client library insists on one.
        return ChatOpenAI(
            base_url=srv.base_url, api_key="not-needed", model=name or "local", **common
        )
    if provider == "openai":
        if not os.environ.get("OPENAI_API_KEY"):
            raise ConfigError(f"model {ctx.model!r} needs OPENAI_API_KEY in the environment.")
        if not name:
            raise ConfigError("Name the OpenAI model, e.g. 'openai:gpt-4o-mini'.")
        return ChatOpenAI(model=name, **common)
    if provider == "openai-compatible":
        base_url = ctx.base_url or os.environ.get("OPENAI_BASE_URL", "")
        if not base_url:
            raise ConfigError(
                "'openai-compatible:<model>' needs base_url (context) or CRAG_BASE_URL."
            )
        key = os.environ.get("CRAG_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"
        return ChatOpenAI(base_url=base_url, api_key=key, model=name or "default", **common)
    raise ConfigError(
        f"Unknown model provider {provider!r} in {ctx.model!r}; "
        "use 'local', 'openai:<model>' or 'openai-compatible:<model>'."
    )


def _call_config(prompt: RenderedPrompt) -> dict[str, Any]:
    """Name the LLM run after its prompt; record the prompt version and its metadata."""
    return {
        "run_name": prompt.name,
        "metadata": {**prompt.metadata, "prompt": prompt.name, "prompt_version": prompt.version},
        "tags": [f"prompt:{prompt.name}:{prompt.version}"],
    }


def complete(llm: BaseChatModel, prompt: RenderedPrompt) -> str:
    """Run ``prompt`` and return the reply's text, stripped."""
    reply = llm.invoke(prompt.messages, config=_call_config(prompt))
    return _text(reply).strip()


def judge(llm: BaseChatModel, prompt: RenderedPrompt, schema: type[T]) -> T | None:
    """Run ``prompt`` constrained to ``schema``; ``None`` if the reply cannot be parsed."""
    response_format = {
        "type": "json_schema",
        "json_schema": {
            "name": schema.__name__,
            "schema": schema.model_json_schema(),
            "strict": True,
        },
    }
    reply = llm.bind(response_format=response_format).invoke(
        prompt.messages, config=_call_config(prompt)
    )
    return parse_json_reply(_text(reply), schema)


def parse_json_reply(text: str, schema: type[T]) -> T | None:
    """Parse ``text`` as ``schema``: the whole reply, else its first JSON object, else None."""
    try:
        return schema.model_validate_json(text)
    except ValidationError:
        pass
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    if match:
        try:
            return schema.model_validate(json.loads(match.group(0)))
        except (ValueError, ValidationError):
            return None
    return None


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content
    )
