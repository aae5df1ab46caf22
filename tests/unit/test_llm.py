"""The LLM adapter: provider strings, scored yes/no verdicts over the real OpenAI client."""

from __future__ import annotations

import math
import time

import openai
import pytest
from langchain_openai import ChatOpenAI

import prompts
from crag_core.clients.llm import (
    call_tools,
    complete,
    score_from_logprobs,
    takes_grammar,
    yes_probability,
)
from crag_core.errors import ConfigError
from crag_core.runtime.deadline import until
from crag_core.schema.context import Context
from graph.factory import chat_model_for
from tests.loopback import chat_completion, loopback


def test_score_sums_every_spelling_of_yes_and_no():
    top = {"yes": math.log(0.5), "Yes": math.log(0.2), " no": math.log(0.2), "The": math.log(0.1)}
    logprobs = {
        "content": [
            {"token": "yes", "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top.items()]}
        ]
    }
    assert score_from_logprobs(logprobs) == pytest.approx(0.7 / 0.9)
    assert score_from_logprobs({"content": [{"token": "x", "top_logprobs": []}]}) is None
    assert score_from_logprobs(None) is None


def test_unknown_provider_and_missing_keys_are_config_errors(monkeypatch):
    with pytest.raises(ConfigError, match="Unknown model provider"):
        chat_model_for(Context(model="anthropic:claude"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        chat_model_for(Context(model="openai:gpt-4o-mini"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="base_url"):
        chat_model_for(Context(model="openai-compatible:llama3"))


def test_openai_provider_is_built_from_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm = chat_model_for(Context(model="openai:gpt-4o-mini", llm_timeout_s=9))
    assert isinstance(llm, ChatOpenAI)
    assert llm.model_name == "gpt-4o-mini" and llm.request_timeout == 9


def rendered():
    return prompts.load("check_relevance").render(answer="The Broncos")


def test_yes_probability_asks_one_token_with_logprobs_and_reads_the_score():
    reply = chat_completion("yes", top={"yes": math.log(0.6), "no": math.log(0.2)})
    with loopback(lambda m, p, b: (200, reply)) as (url, requests):
        llm = chat_model_for(Context(model="openai-compatible:test", base_url=url + "/v1"))
        score = yes_probability(llm, rendered())
    assert score == pytest.approx(0.75)
    body = requests[0]["body"]
    assert requests[0]["path"] == "/v1/chat/completions"
    assert (
        body["logprobs"] is True
        and body["top_logprobs"] == 10
        and body["max_completion_tokens"] == 1
    )
    assert body["model"] == "test" and body["temperature"] == 0.0


@pytest.mark.parametrize(("text", "expected"), [("Yes.", 1.0), ("no", 0.0), ("Maybe", None)])
def test_a_provider_without_logprobs_falls_back_to_the_word(text, expected):
    with loopback(lambda m, p, b: (200, chat_completion(text))) as (url, _):
        llm = chat_model_for(Context(model="openai-compatible:t", base_url=url + "/v1"))
        assert yes_probability(llm, rendered()) == expected


def test_5xx_is_retried_then_raised_within_bounds():
    with loopback(lambda m, p, b: (503, {"error": {"message": "overloaded"}})) as (url, reqs):
        llm = chat_model_for(
            Context(model="openai-compatible:t", base_url=url + "/v1", llm_max_retries=1)
        )
        with pytest.raises(openai.InternalServerError):
            complete(llm, rendered())
    assert len(reqs) == 2  # one try plus one retry


def slow(seconds: float):
    """A model server that answers "late" after ``seconds``."""

    def handler(m, p, b):
        time.sleep(seconds)
        return 200, chat_completion("late")

    return handler


def test_timeout_is_bounded():
    with loopback(slow(3)) as (url, _):
        llm = chat_model_for(
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


def test_past_the_questions_deadline_a_call_is_the_reply_of_a_call_not_made():
    with loopback(lambda m, p, b: (200, chat_completion("yes"))) as (url, requests):
        llm = chat_model_for(Context(model="openai-compatible:t", base_url=url + "/v1"))
        with until(-1) as kept:
            replies = (
                complete(llm, rendered()),
                yes_probability(llm, rendered()),
                call_tools(llm, rendered(), []),
            )
        assert complete(llm, rendered()) == "yes"  # outside the block: no deadline
    assert replies[0] == "" and replies[1] == 0.0 and replies[2].text == ""
    assert not replies[2].tool_calls
    assert kept.missed == ["check_relevance"] * 3 and len(requests) == 1


def test_a_call_in_flight_stops_at_the_questions_deadline_and_is_not_retried():
    with loopback(slow(5)) as (url, requests):
        llm = chat_model_for(
            Context(model="openai-compatible:t", base_url=url + "/v1", llm_max_retries=2)
        )
        started = time.monotonic()
        with until(0.5) as kept:
            reply = complete(llm, rendered())
        elapsed = time.monotonic() - started
    assert reply == "" and kept.missed == ["check_relevance"]
    assert len(requests) == 1 and elapsed < 3.0  # the deadline plus the client's backoff


def test_a_grammar_is_sent_in_the_request_body_and_only_when_given():
    with loopback(lambda m, p, b: (200, chat_completion("SELECT 1"))) as (url, requests):
        llm = chat_model_for(Context(model="openai-compatible:t", base_url=url + "/v1"))
        assert complete(llm, rendered(), grammar='root ::= "SELECT 1"') == "SELECT 1"
        complete(llm, rendered())
    assert requests[0]["body"]["grammar"] == 'root ::= "SELECT 1"'
    assert "grammar" not in requests[1]["body"]


@pytest.mark.parametrize(
    ("model", "takes"),
    [
        ("local", True),
        ("local:small", True),
        ("openai:gpt-4o-mini", False),
        ("openai-compatible:llama3", False),
    ],
)
def test_only_the_embedded_models_server_is_sent_a_grammar(model, takes):
    assert takes_grammar(model) is takes
