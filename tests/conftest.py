"""Shared fixtures: an isolated data dir, fake services made the default, fast knowledge bases.

A test's kind is its folder: ``tests/unit`` (fakes, loopback servers, real Chroma; about two
minutes), ``tests/system`` (crag in subprocesses: CLI, API server, browser) and
``tests/integration`` (the real embedded model). The folder also marks it (``system``,
``integration``), so ``-m`` picks the same tests and no test can forget its mark.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models.chat_models import BaseChatModel

import graph.factory
from crag_core.clients.services import Services
from tests.fakes import HashEmbeddings, make_services

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
for _var in list(os.environ):
    # Tests decide their own configuration; a developer's CRAG_* or keys must not leak in.
    if _var.startswith("CRAG_") or _var in {"TAVILY_API_KEY", "OPENAI_API_KEY"}:
        del os.environ[_var]
# A test's process loads the model itself (as the CLI did before resident servers): none is
# left running after the tests, and none of the user's is used. tests/system/test_resident.py
# tries the resident server on a models folder of its own.
os.environ["CRAG_MODEL_KEEP_ALIVE_S"] = "0"


KINDS = {"system": pytest.mark.system, "integration": pytest.mark.integration}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by its folder (``tests/system/...`` is ``system``)."""
    for item in items:
        folder = item.path.parent.name
        if folder in KINDS:
            item.add_marker(KINDS[folder])


@pytest.fixture(autouse=True)
def data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every test gets its own data dir."""
    path = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("CRAG_DATA_DIR", str(path))
    return path


@pytest.fixture
def fake_services(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Services]:
    """``fake_services(llm=..., retriever=..., web=..., tables=...)``: fakes, made the default.

    Graphs built with ``build_graph(services=...)`` get fakes directly; the entry points (CLI,
    ``run_question``, the eval harness) and graphs built without a factory use
    ``default_services``, which this replaces for the test.
    """

    def install(
        llm: BaseChatModel | None = None,
        retriever: Any = None,
        web: Any = "default",
        tables: Any = None,
    ):
        services = make_services(llm, retriever, web, tables)
        monkeypatch.setattr(graph.factory, "default_services", lambda ctx: services)
        return services

    return install


@pytest.fixture
def hash_kb(monkeypatch: pytest.MonkeyPatch, data_dir: Any) -> Callable[[str], Any]:
    """Knowledge bases with a fast embedding, so CLI tests need no torch model."""
    from crag_core.clients.knowledge_base import KnowledgeBase

    made: dict[str, KnowledgeBase] = {}

    def factory(collection: str) -> KnowledgeBase:
        if collection not in made:
            made[collection] = KnowledgeBase(data_dir / "chroma", collection, HashEmbeddings())
        return made[collection]

    monkeypatch.setattr(graph.factory, "knowledge_base", factory)
    return factory
