"""Several model servers as one chat model: prefix affinity, failover, streaming, verdicts."""

from __future__ import annotations

import logging
import math
import time

import openai
import pytest
from langchain_core.messages import HumanMessage

import prompts
from benchmarks.fixtures.serve import free_port
from crag_core.clients.llm import complete, yes_probability
from crag_core.errors import ConfigError
from crag_core.runtime.deadline import until
from crag_core.runtime.model_pool import ModelPool, affinity
from crag_core.schema.context import Context
from graph.factory import chat_model_for
from tests.loopback import chat_completion, loopback, streamed_completion


def answering(name: str):
    def handler(method, path, body):
        if body.get("logprobs"):
            top = {"yes": math.log(0.8), "no": math.log(0.2)}
            return 200, chat_completion("yes", top=top)
        if body.get("stream"):
            return 200, streamed_completion(f"from {name}")
        return 200, chat_completion(f"from {name}")

    return handler


def pool(*urls: str, **ctx) -> ModelPool:
    model = chat_model_for(
        Context(base_url=",".join(urls), llm_max_retries=0, llm_timeout_s=5, **ctx)
    )
    assert isinstance(model, ModelPool)
    return model


def ask(model, *texts: str) -> str:
    reply = model.bind(stream=False).invoke([HumanMessage(t) for t in texts])
    return str(reply.content)


def test_several_base_urls_make_a_pool_and_a_bad_one_is_a_config_error():
    assert len(pool("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1").members) == 2
    with pytest.raises(ConfigError, match="must start with http"):
        chat_model_for(Context(base_url="http://127.0.0.1:1/v1,ftp://x"))


def test_calls_sharing_a_prefix_go_to_one_server_and_questions_spread_over_all():
    with loopback(answering("a")) as (a, got_a), loopback(answering("b")) as (b, got_b):
        model = pool(f"{a}/v1", f"{b}/v1")
        evidence = "Documents: [S1] The Broncos won Super Bowl 50. Question: Who won?"
        first = ask(model, evidence, "Task: answer.")
        assert {ask(model, evidence, f"Task: check {i}.") for i in range(5)} == {first}
        servers = {ask(model, f"Question number {i}?") for i in range(24)}
    assert servers == {"from a", "from b"}
    assert len(got_a) + len(got_b) == 30


def test_a_dead_server_is_skipped_with_a_warning_and_stays_skipped(caplog):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with loopback(answering("alive")) as (alive, got):
        model = pool(dead, f"{alive}/v1")
        prompt = next(  # a prompt whose own server is the dead one
            f"q{i}" for i in range(100) if affinity([HumanMessage(f"q{i}")]) % 2 == 0
        )
        with caplog.at_level(logging.WARNING, logger="crag_core.runtime.model_pool"):
            assert ask(model, prompt) == "from alive"
        assert "unreachable" in caplog.text and dead in caplog.text
        assert model.order([HumanMessage(prompt)]) == [1, 0]  # down: tried last
        caplog.clear()
        assert ask(model, prompt) == "from alive"
        assert caplog.text == ""  # not tried again while cooling down
    assert len(got) == 2


def test_every_server_down_is_the_connection_error_within_the_timeouts():
    urls = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    model = pool(*urls)
    started = time.perf_counter()
    with pytest.raises(openai.APIConnectionError):
        ask(model, "Anyone there?")
    assert time.perf_counter() - started < 10


def test_streamed_answers_and_scored_verdicts_pass_through_the_pool():
    with loopback(answering("a")) as (a, _), loopback(answering("b")) as (b, _):
        model = pool(f"{a}/v1", f"{b}/v1")
        verdict = prompts.RenderedPrompt("t", "v1", [HumanMessage("[S1] The Broncos won. Yes?")])
        assert yes_probability(model, verdict) == pytest.approx(0.8)
        chunks = [str(c.content) for c in model.stream([HumanMessage("Stream it")])]
        assert "".join(chunks).startswith("from ")
        assert len(chunks) > 1


def test_a_server_that_hangs_times_out_and_the_call_fails_over():
    def hanging(method, path, body):
        time.sleep(3)
        return 200, chat_completion("too late")

    with loopback(hanging) as (slow, _), loopback(answering("alive")) as (alive, _):
        model = chat_model_for(
            Context(base_url=f"{slow}/v1,{alive}/v1", llm_max_retries=0, llm_timeout_s=1)
        )
        prompt = next(f"h{i}" for i in range(100) if affinity([HumanMessage(f"h{i}")]) % 2 == 0)
        started = time.perf_counter()
        reply = complete(model, prompts.RenderedPrompt("t", "v1", [HumanMessage(prompt)]))
        assert reply == "from alive"
        assert time.perf_counter() - started < 3


def test_a_call_the_questions_deadline_cut_marks_no_server_down(caplog):
    def hanging(method, path, body):
        time.sleep(3)
        return 200, chat_completion("too late")

    with loopback(hanging) as (slow, _), loopback(answering("alive")) as (alive, got):
        model = pool(f"{slow}/v1", f"{alive}/v1")  # each request 5 s, the question 0.5
        prompt = next(f"h{i}" for i in range(100) if affinity([HumanMessage(f"h{i}")]) % 2 == 0)
        asked = prompts.RenderedPrompt("t", "v1", [HumanMessage(prompt)])
        with until(0.5) as kept:
            assert complete(model, asked) == ""  # the reply of a call not made
        assert kept.missed == ["t"] and not got  # not failed over past the deadline
        assert not model._down_until and "unreachable" not in caplog.text
