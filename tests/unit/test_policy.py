"""What an API caller may ask of a run: the operator's fields, the bounds, the config."""

from __future__ import annotations

from typing import Any

import pytest

from crag.policy import (
    CALLER_MAXIMA,
    OPERATOR_FIELDS,
    Refusal,
    check_config,
    check_context,
    locked_fields,
    outbound,
)
from crag_core.errors import ConfigError


def refusal(given: dict[str, Any], config: bool = False) -> Refusal:
    with pytest.raises(Refusal) as refused:
        (check_config if config else check_context)(given)
    return refused.value


@pytest.mark.parametrize(
    "given",
    [
        {"model": "openai-compatible:x", "base_url": "http://127.0.0.1:9/v1"},
        {"grader_model": "openai:gpt-4o"},
        {"base_url": "http://127.0.0.1:9/v1"},
        {"web_search": "tavily"},
        {"prompt_versions": {"generate": "v4"}},
        {"llm_timeout_s": 100000},
        {"llm_max_retries": 5},
        {"web_timeout_s": 600},
    ],
)
def test_the_operators_fields_are_refused_with_their_name(given):
    refused = refusal(given)
    assert refused.status == 403 and next(iter(given)) in refused.message
    assert "CRAG_API_CALLER_FIELDS" in refused.message


def test_the_servers_own_value_may_be_sent_and_the_operator_may_open_a_field(monkeypatch):
    check_context({"model": "local", "web_search": "auto", "llm_timeout_s": 120})
    monkeypatch.setenv("CRAG_API_CALLER_FIELDS", "model, grader_model")
    check_context({"model": "openai:gpt-4o-mini"})
    assert "model" not in locked_fields() and "base_url" in locked_fields()
    assert refusal({"base_url": "http://x/v1"}).status == 403
    monkeypatch.setenv("CRAG_API_CALLER_FIELDS", "top_k")
    with pytest.raises(ConfigError, match="takes some of"):
        check_context({"top_k": 3})


def test_numbers_are_bounded_for_callers_and_the_servers_own_value_is_not(monkeypatch):
    check_context({"top_k": 8, "context_tokens": 3000, "max_tokens": 512})
    for name, bound in CALLER_MAXIMA.items():
        refused = refusal({name: bound + 1})
        assert refused.status == 422 and f"{name} may be at most {bound}" in refused.message
    monkeypatch.setenv("CRAG_TOP_K", "30")  # the operator's own choice stands
    check_context({"top_k": 30})
    assert "at most 30" in refusal({"top_k": 31}).message


def test_the_cache_threshold_may_be_raised_not_lowered():
    check_context({"cache_threshold": 0.99})
    refused = refusal({"cache_threshold": 0})
    assert refused.status == 422 and "below this server's 0.95" in refused.message


def test_a_value_the_context_cannot_take_is_422_naming_it():
    refused = refusal({"top_k": "many"})
    assert refused.status == 422 and "top_k" in refused.message
    assert refusal([1, 2]).status == 422  # type: ignore[arg-type]
    check_context({"not_a_field": 1, "thread_id": "t"})  # the server's own keys pass


def test_the_config_is_bounded_and_its_configurable_is_a_context():
    check_config({"recursion_limit": 50, "max_concurrency": 4, "tags": ["x"]})
    assert "recursion_limit" in refusal({"recursion_limit": 10**6}, config=True).message
    assert "max_concurrency" in refusal({"max_concurrency": 1000}, config=True).message
    refused = refusal({"configurable": {"base_url": "http://127.0.0.1:9/v1"}}, config=True)
    assert refused.status == 403 and "base_url" in refused.message


def test_every_operator_field_is_a_context_field_and_says_why():
    from crag_core.schema.context import FIELD_NAMES

    assert set(OPERATOR_FIELDS) <= FIELD_NAMES and set(CALLER_MAXIMA) <= FIELD_NAMES
    assert all(reason.startswith("it ") for reason in OPERATOR_FIELDS.values())


A_CHOICE: dict[str, Any] = {
    "model": "openai:gpt-4o-mini",
    "grader_model": "local:qwen2.5-0.5b",
    "base_url": "http://127.0.0.1:9/v1",
    "temperature": 0.7,
    "max_tokens": 1000,
    "llm_timeout_s": 30,
    "llm_max_retries": 0,
    "collection": "mine",
    "retrieval_mode": "keyword",
    "where": "type=pdf",
    "top_k": 12,
    "tools": False,
    "read_around": True,
    "context_tokens": 5000,
    "min_similarity": 0.5,
    "keyword_min_similarity": 0.5,
    "correct_threshold": 0.9,
    "incorrect_threshold": 0.05,
    "evidence_threshold": 0.6,
    "kb_fallback": False,
    "light_correct": 0.9,
    "light_incorrect": 0.1,
    "light_grey": "ambiguous",
    "answer_threshold": 0.6,
    "min_confidence": 0.0,
    "refine": False,
    "refine_top_strips": 9,
    "web_search": "off",
    "web_results": 9,
    "web_timeout_s": 3,
    "max_retries": 3,
    "max_citation_corrections": 2,
    "answer_seconds": 120.0,
    "max_subquestions": 2,
    "history_threshold": 0.9,
    "answer_cache": False,
    "cache_threshold": 0.99,
    "planner": "loop",
    "max_tool_calls": 3,
    "loop_tokens": 2000,
    "loop_seconds": 60.0,
    "prompt_versions": {"generate": "v4"},
}
"""A value of each field other than the server's, within any caller's bound."""


def test_every_setting_declares_what_a_caller_may_do_and_the_policy_follows_it():
    """A new field of the context fails here until it declares a rule and the test a value."""
    from dataclasses import fields

    from crag_core.schema.context import Caller, Context, caller_rule

    declared = {f.name: f.metadata.get("caller") for f in fields(Context)}
    assert set(A_CHOICE) == set(declared)
    assert all(isinstance(rule, Caller) for rule in declared.values())
    server = Context()
    for name, value in A_CHOICE.items():
        assert value != getattr(server, name), name
        rule = caller_rule(name)
        if rule.may_set:
            check_context({name: value})
            assert name not in locked_fields()
        else:
            refused = refusal({name: value})
            assert refused.status == 403 and rule.why in refused.message
            assert name in locked_fields()


def test_an_undeclared_setting_is_the_operators():
    from crag_core.schema.context import Caller

    assert not Caller().may_set and Caller().why.startswith("it ")


def test_the_fetch_allow_list_is_read_from_the_environment(monkeypatch):
    assert outbound().allowed == ()
    monkeypatch.setenv("CRAG_API_FETCH_ALLOW", "wiki.internal, 10.0.0.0/8")
    assert [a.host or str(a.network) for a in outbound().allowed] == ["wiki.internal", "10.0.0.0/8"]
    monkeypatch.setenv("CRAG_API_FETCH_ALLOW", "a/b/c")
    with pytest.raises(ConfigError, match="CRAG_API_FETCH_ALLOW"):
        outbound()
