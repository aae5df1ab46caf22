"""The LLM adapter: provider strings, structured output over the real OpenAI client, fallbacks."""

from __future__ import annotations

import time

import openai
import pytest

import prompts
from crag.errors import ConfigError
from crag.llm import build_chat_model, complete, judge, parse_json_reply
from graph.context import Context
from nodes.check_relevance import RelevanceVerdict
from tests.loopback import chat_completion, loopback


def test_parse_json_reply_fallbacks():
    assert parse_json_reply('{"answers_question": "yes", "reason": "r"}', RelevanceVerdict)
    wrapped = 'Sure:\n```json\n{"answers_question": "no", "reason": "r"}\n```'
    assert parse_json_reply(wrapped, RelevanceVerdict).answers_question == "no"
    assert (
        parse_json_reply('{"answers_question": "maybe", "reason": "r"}', RelevanceVerdict) is None
    )
    assert parse_json_reply("yes", RelevanceVerdict) is None
    assert parse_json_reply('{"answers_question": "yes"', RelevanceVerdict) is None  # truncated


def test_unknown_provider_and_missing_keys_are_config_errors(monkeypatch):
    with pytest.raises(ConfigError, match="Unknown model provider"):
        build_chat_model(Context(model="anthropic:claude"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_chat_model(Context(model="openai:gpt-4o-mini"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="base_url"):
        build_chat_model(Context(model="openai-compatible:llama3"))


def test_openai_provider_is_built_from_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm = build_chat_model(Context(model="openai:gpt-4o-mini", llm_timeout_s=9))
    assert llm.model_name == "gpt-4o-mini" and llm.request_timeout == 9


def rendered():
    return prompts.load("check_relevance").render(question="Who won?", answer="The Broncos")


def test_judge_sends_json_schema_to_an_openai_compatible_server():
    reply = '{"answers_question": "yes", "reason": "names the winner"}'
    with loopback(lambda m, p, b: (200, chat_completion(reply))) as (url, requests):
        llm = build_chat_model(Context(model="openai-compatible:test", base_url=url + "/v1"))
        verdict = judge(llm, rendered(), RelevanceVerdict)
    assert verdict == RelevanceVerdict(answers_question="yes", reason="names the winner")
    body = requests[0]["body"]
    assert requests[0]["path"] == "/v1/chat/completions"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["additionalProperties"] is False
    assert body["model"] == "test" and body["temperature"] == 0.0


def test_server_that_ignores_the_schema_gives_none_not_a_crash():
    with loopback(lambda m, p, b: (200, chat_completion("I think yes."))) as (url, _):
        llm = build_chat_model(Context(model="openai-compatible:t", base_url=url + "/v1"))
        assert judge(llm, rendered(), RelevanceVerdict) is None


def test_5xx_is_retried_then_raised_within_bounds():
    with loopback(lambda m, p, b: (503, {"error": {"message": "overloaded"}})) as (url, reqs):
        llm = build_chat_model(
            Context(model="openai-compatible:t", base_url=url + "/v1", llm_max_retries=1)
        )
        with pytest.raises(openai.InternalServerError):
            complete(llm, rendered())
    assert len(reqs) == 2  # one try plus one retry


def test_timeout_is_bounded():
    def slow(m, p, b):
        time.sleep(3)
        return 200, chat_completion("late")

    with loopback(slow) as (url, _):
        llm = build_chat_model(
            Context(
                model="openai-compatible:t",
                base_url=url + "/v1",
                llm_timeout_s=0.5,
                llm_max_retries=0,
            )
        )
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            complete(llm, rendered())
        assert time.monotonic() - started < 2.5
