"""The answer cache: a repeated question costs no LLM call; anything that could change the
answer (the collection, the settings, the prompts) makes it miss."""

from __future__ import annotations

from dataclasses import replace

import pytest
from typer.testing import CliRunner

from crag.run import run_question
from crag_core.clients.answer_cache import AnswerCache
from crag_core.clients.services import Services
from crag_core.schema.context import Context
from graph.graph import build_graph
from tests.fakes import KB_DOCS, FakeRetriever, FakeWebSearch, HashEmbeddings, make_llm

QUESTION = "Which team won Super Bowl 50?"


class Version:
    """A collection version the test can bump."""

    def __init__(self) -> None:
        self.value = 1

    def __call__(self) -> int:
        return self.value


def responder(prompt: str, text: str):
    if prompt == "grade_documents":
        return "yes"
    if prompt == "generate":
        return "The Denver Broncos won, 24–10. [S1]"
    return "yes"


@pytest.fixture
def setup(tmp_path):
    llm = make_llm(responder)
    version = Version()
    services = Services(
        llm=llm,
        retriever=FakeRetriever(KB_DOCS),
        web_search=FakeWebSearch(),
        embeddings=HashEmbeddings(),
        cache=AnswerCache(tmp_path / "answers.sqlite"),
        collection_version=version,
    )
    return build_graph(services=lambda _: services), llm, version


def ask(graph, question=QUESTION, **ctx):
    return run_question(question, Context(**ctx), graph=graph)


def test_a_repeated_question_is_answered_from_the_cache_without_an_llm_call(setup):
    graph, llm, _ = setup
    first = ask(graph)
    assert not first.pass_state["cache_hit"] and llm.calls
    llm.calls.clear()
    second = ask(graph, "  which team WON super bowl 50 ")  # the same question, written loosely
    assert second.pass_state["cache_hit"] and second.pass_state["cache_similarity"] == 1.0
    assert llm.calls == []
    assert second.path == ["contextualize_question", "analyze_query", "check_cache", "finalize"]
    assert second.state["answer"] == first.state["answer"] == "The Denver Broncos won, 24–10."
    assert second.state["sources"] == first.state["sources"]
    assert second.to_json()["cache_hit"] is True
    assert second.steps[2].summary == "cache hit (similarity 1.000)"


def test_a_near_question_hits_only_above_the_threshold(setup):
    graph, llm, _ = setup
    ask(graph)
    near = "Which team won the Super Bowl 50 game?"
    assert not ask(graph, near, cache_threshold=0.99).pass_state["cache_hit"]
    assert ask(graph, near, cache_threshold=0.7).pass_state["cache_hit"]
    assert not ask(graph, "Who sang at the halftime show?", cache_threshold=0.7).pass_state[
        "cache_hit"
    ]


def test_a_changed_collection_settings_or_prompt_version_misses(setup):
    graph, _, version = setup
    ask(graph)
    assert ask(graph).pass_state["cache_hit"]
    assert not ask(graph, top_k=3).pass_state["cache_hit"]  # other settings
    version.value += 1  # anything ingested or removed
    assert not ask(graph).pass_state["cache_hit"]


def test_a_new_prompt_version_changes_the_answer_key(tmp_path, monkeypatch):
    import shutil

    import prompts

    before = Context().answer_key()
    latest = prompts.load("generate").version
    newer = f"v{int(latest.removeprefix('v')) + 1}"
    copy = tmp_path / "prompts"
    shutil.copytree(prompts.PROMPTS_DIR, copy)
    shutil.copy(copy / "generate" / f"{latest}.md", copy / "generate" / f"{newer}.md")
    monkeypatch.setattr(prompts, "PROMPTS_DIR", copy)
    prompts.load.cache_clear()
    try:
        assert Context().answer_key() != before  # the latest generate prompt is now a newer one
        assert Context(prompt_versions={"generate": latest}).answer_key() == before
    finally:
        prompts.load.cache_clear()


def test_the_cache_can_be_turned_off_and_stores_no_unknown_answers(setup, tmp_path):
    graph, llm, _ = setup
    ask(graph, answer_cache=False)
    assert not ask(graph).pass_state["cache_hit"]  # nothing was stored while off
    llm.responder = lambda prompt, text: "no"  # nothing states the answer: "I don't know."
    unknown = ask(graph, "What is the capital of Mars?")
    assert unknown.state["answer"] == "I don't know."
    assert not ask(graph, "What is the capital of Mars?").pass_state["cache_hit"]


def test_ingesting_or_removing_changes_the_collection_version(tmp_path):
    from crag_core.clients.knowledge_base import KnowledgeBase

    kb = KnowledgeBase(tmp_path / "chroma", "versions", HashEmbeddings())
    assert kb.version() == 0
    kb.replace_document("a", "/a.md", "h1", ["Alpha."])
    kb.replace_document("b", "/b.md", "h2", ["Beta."])
    after_writes = kb.version()
    kb.remove_document("a")
    assert 0 < after_writes < kb.version()


def test_the_cli_has_no_cache_and_json_says_cache_hit(hash_kb, fake_services, tmp_path):
    from crag.cli import app

    (tmp_path / "sb.md").write_text("The Denver Broncos won Super Bowl 50.")
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(tmp_path / "sb.md")]).exit_code == 0
    result = runner.invoke(app, ["ask", QUESTION, "--json", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert '"cache_hit": false' in result.output
    assert replace(Context(), answer_cache=False).answer_key() == Context().answer_key()
