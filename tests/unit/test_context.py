"""The runtime context: defaults, env fallbacks, validation."""

from __future__ import annotations

from typing import Any

import pytest

from crag_core.errors import ConfigError
from crag_core.schema.context import Context


def test_defaults_run_offline():
    ctx = Context()
    assert ctx.model == "local" and ctx.web_search == "auto" and ctx.max_retries == 1


def test_env_fallbacks_apply_to_defaults_only(monkeypatch):
    monkeypatch.setenv("CRAG_TOP_K", "7")
    monkeypatch.setenv("CRAG_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("CRAG_PROMPT_VERSIONS", "generate=v4, rewrite_query=v1")
    ctx = Context()
    assert ctx.top_k == 7 and ctx.model == "openai:gpt-4o-mini"
    assert ctx.prompt_versions == {"generate": "v4", "rewrite_query": "v1"}
    assert Context(top_k=3).top_k == 3  # an explicit value wins over the environment


def test_dict_context_is_accepted_by_the_graph_runtime():
    sent: dict[str, Any] = {"top_k": 2, "web_search": "off"}  # as JSON from a request
    assert Context(**sent).web_search == "off"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"top_k": 0},
        {"max_retries": -1},
        {"max_retries": 11},
        {"web_search": "bing"},
        {"llm_timeout_s": 0},
        {"min_similarity": 2.0},
        {"keyword_min_similarity": -1.5},
        {"correct_threshold": 1.5},
        {"correct_threshold": 0.2, "incorrect_threshold": 0.4},
        {"max_citation_corrections": 4},
    ],
)
def test_invalid_values_are_refused(kwargs):
    with pytest.raises(ConfigError):
        Context(**kwargs)


def test_bad_env_value_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("CRAG_TOP_K", "many")
    with pytest.raises(ConfigError, match="CRAG_TOP_K"):
        Context()


def test_process_settings_come_from_the_environment_in_one_typed_place(monkeypatch, tmp_path):
    from crag_core.settings import data_dir, settings

    monkeypatch.setenv("CRAG_DATA_DIR", str(tmp_path / "d"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    assert data_dir() == tmp_path / "d" and data_dir().is_dir()
    assert str(settings().compatible_api_key) != "sk-openai"  # a secret, never printed
    assert (key := settings().compatible_api_key) and key.get_secret_value() == "sk-openai"
    monkeypatch.setenv("CRAG_API_KEY", "sk-crag")  # the compatible endpoint's own key wins
    assert (key := settings().compatible_api_key) and key.get_secret_value() == "sk-crag"
    assert "sk-crag" not in repr(settings())  # secrets never print
    monkeypatch.setenv("CRAG_LOCAL_N_CTX", "lots")
    with pytest.raises(ConfigError, match="CRAG_LOCAL_N_CTX"):
        settings()
