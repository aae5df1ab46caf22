"""The prompt registry: every prompt exists, declares exactly its variables, and renders."""

from __future__ import annotations

import pytest

import prompts
from prompts import PromptError

USED_BY_NODES = {
    "rewrite_query",
    "grade_documents",
    "generate",
    "check_hallucination",
    "check_relevance",
    "evidence",
    "contextualize_question",
    "small_talk",
}


def test_every_prompt_used_by_a_node_exists():
    assert USED_BY_NODES <= set(prompts.names())


@pytest.mark.parametrize("name", sorted(USED_BY_NODES))
def test_each_version_renders_with_exactly_its_variables(name):
    for version in prompts.versions(name):
        prompt = prompts.load(name, version)
        assert prompt.description
        values = {v: f"<{v}>" for v in prompt.variables}
        rendered = prompt.render(**values)
        assert (rendered.name, rendered.version) == (name, version)
        for placeholder in values.values():
            assert placeholder in rendered.text
        with pytest.raises(PromptError, match="extra"):
            prompt.render(**values, surprise="x")
        if not values:
            continue
        missing = dict(values)
        missing.pop(next(iter(values)))
        with pytest.raises(PromptError, match="missing"):
            prompt.render(**missing)
        with pytest.raises(PromptError, match="extra"):
            prompt.render(**values, surprise="x")


def test_latest_version_is_default_and_unknown_ones_are_refused():
    assert prompts.load("generate").version == prompts.versions("generate")[-1]
    with pytest.raises(PromptError, match="no version"):
        prompts.load("generate", "v999")
    with pytest.raises(PromptError, match="no prompt named"):
        prompts.load("nope")


def test_version_order_is_natural():
    assert sorted(["v10", "v2", "v1"], key=prompts._version_key) == ["v1", "v2", "v10"]


def test_every_prompt_on_documents_starts_with_the_shared_prefix_and_asks_last():
    # One shared prefix (documents, then the note that they are data) lets llama.cpp reuse its
    # prompt cache across a pass's calls: each prompt follows the evidence message, or starts
    # with the same text and asks its question last.
    template = prompts.load("evidence").template.template
    assert template.startswith("{documents}") and template.rstrip().endswith("{question}")
    shared = template.split("Question:")[0]
    for name in ("grade_documents", "generate", "check_hallucination", "check_relevance"):
        prompt = prompts.load(name)
        own = {"documents", "question"} & prompt.variables
        if own:
            assert own == {"documents", "question"}, name
            text = prompt.template.template
            assert text.startswith(shared), name
            assert text.rstrip().endswith("Question: {question}\nAnswer:"), name


def test_declared_variables_must_match_template(tmp_path, monkeypatch):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "v1.md").write_text("---\nvariables: [a]\n---\nHello {b}\n")
    monkeypatch.setattr(prompts, "PROMPTS_DIR", tmp_path)
    prompts.load.cache_clear()
    try:
        with pytest.raises(PromptError, match="declares"):
            prompts.load("bad")
    finally:
        prompts.load.cache_clear()
