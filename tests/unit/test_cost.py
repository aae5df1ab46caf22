"""Cost guarded like behaviour: each route's model calls and prompt tokens, pinned.

Every route runs on fixed inputs with a scripted model whose usage is deterministic (four
characters a token; a one-slot prompt cache: what a prompt shares with the previous one from
the start is cached, ``tests.fakes.usage``). The ledger each run keeps (``cost``) must match
``cost_budget.json``: the calls of every node exactly, and the prompt tokens (all, and those the
cache did not serve) at most the budget and not far below it. A change that adds a call, or
makes a prompt longer or the shared evidence prefix shorter, fails here until its budget is
changed on purpose, in the same commit; one that saves tokens asks for the budget to follow.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.measurements.cost_ablation import row as ablation_row
from crag.eval.cost import by_node, by_route
from crag.run import run_question
from crag_core.clients import usage
from crag_core.clients.embeddings import default_embeddings
from crag_core.schema.context import Context
from graph.graph import build_graph
from tests.fakes import (
    KB_DOCS,
    WEB_DOCS,
    FakeRetriever,
    FakeWebSearch,
    doc,
    happy_responder,
    make_llm,
    make_services,
    make_table_store,
    tokens,
)

BUDGET = Path(__file__).with_name("cost_budget.json")
PARALLEL = {"multi_part"}
"""Routes whose parts run at once: the order of their calls, and so what the one-slot cache
serves, is not fixed; their calls and prompt tokens are."""
SLACK = 0.9
"""A route whose tokens fall below this share of its budget fails too: lower the budget."""

SALES: list[list[Any]] = [
    ["Region", "Month", "Units Sold"],
    ["North", "January", 1200],
    ["South", "January", 800],
    ["North", "February", 1350],
]
DOCUMENTS: list[dict[str, Any]] = [
    {"doc_id": "ps", "label": "notes/packet_switching.md", "title": "Packet switching"},
    {"doc_id": "sb", "label": "super_bowl_50.md", "title": "Super Bowl 50"},
]
LAST_LLM: list[Any] = []
"""The scripted model of the last route run (its calls)."""
MONA = doc("mona__c0000", "The Mona Lisa is displayed at the Louvre in Paris.")


def responder(prompt: str, text: str) -> Any:
    """A well-behaved model: grades by the question's topic, answers from the evidence."""
    asked = [line for line in text.splitlines() if line.startswith("Question:")]
    question = asked[-1] if asked else ""
    if prompt == "grade_documents":
        if "Mona Lisa" in question:
            return "yes" if "Mona Lisa" in text.split("Question:")[0] else "no"
        return "yes" if "Broncos" in text.split("Question:")[0] else "no"
    if prompt == "generate":
        if "painted" in question:
            return "Leonardo da Vinci [S1]"
        return "the Louvre [S1]" if "displayed" in question else "The Denver Broncos. [S1]"
    if prompt == "write_sql":
        return "SELECT SUM(units_sold) FROM sales WHERE region = 'North'"
    if prompt == "read_document":
        return "Packet switching sends data in small blocks."
    if prompt == "small_talk":
        return "Hello! I answer questions from your documents."
    return happy_responder(prompt, text)


def retrying(prompt: str, text: str) -> Any:
    """The first answer fails its grounding check; the retried one passes."""
    if prompt == "check_hallucination":
        return 0.9 if "retried" in text else 0.1
    if prompt == "rewrite_query":
        return "Super Bowl 50 champion"
    if prompt == "generate":  # neither answer copies a span: the judge reads both
        return "Denver won it, retried. [S1]" if "do not support" in text else "Denver won. [S1]"
    return responder(prompt, text)


def run_route(route: str, tmp_path: Path, **ctx: Any) -> tuple[dict[str, Any], int]:
    """Run ``route``'s fixed question; its state and the scripted model's call count.

    With the real encoder, as by default: the light evaluator decides where it is sure, and
    the model grades only its grey zone (``ctx`` may move the bands).
    """
    llm = make_llm(retrying if route == "retry" else responder)
    LAST_LLM[:] = [llm]
    docs = {"web": [], "multi_part": [*KB_DOCS, MONA]}.get(route, KB_DOCS)
    tables = None
    if route == "table":
        tables = make_table_store(tmp_path / "tables.sqlite3", {"docs/sales.csv": SALES})
    services = make_services(
        llm=llm, retriever=FakeRetriever(docs), web=FakeWebSearch(WEB_DOCS), tables=tables
    )
    object.__setattr__(services, "embeddings", default_embeddings())
    object.__setattr__(services, "documents", lambda: DOCUMENTS)
    chunks = [doc("ps__c0000", "Packet switching groups data into packets. " * 8)]
    object.__setattr__(services, "document_chunks", lambda doc_id: chunks)
    question = {
        "kb": "Which team won Super Bowl 50?",
        "kb_model_graded": "Which team won Super Bowl 50?",
        "kb_grey_ambiguous": "Which team won Super Bowl 50?",
        "web": "Who painted the Mona Lisa?",
        "retry": "Which team won Super Bowl 50?",
        "table": "How many units sold were recorded in the North region?",
        "catalog": "How many documents do I have?",
        "document": "Summarise packet switching",
        "small_talk": "Hi there, what can you do?",
        "multi_part": "Which team won Super Bowl 50, and where is the Mona Lisa displayed?",
    }[route]
    graph = build_graph(services=lambda ctx: services)
    if route == "kb_model_graded":  # the grey zone everywhere: the model grades, as before
        ctx = {"light_correct": 1.0, "light_incorrect": 0.0, **ctx}
    if route == "kb_grey_ambiguous":  # the grey zone everywhere, read as ambiguous: no grading
        ctx = {"light_correct": 1.0, "light_incorrect": 0.0, "light_grey": "ambiguous", **ctx}
    context = Context(answer_cache=False, max_retries=1, **ctx)
    result = run_question(question, context, graph=graph)
    return result.state, len(llm.calls)


def spent(state: dict[str, Any]) -> dict[str, Any]:
    """A run's ledger as a budget entry: calls by node, prompt tokens, uncached tokens."""
    ledger = state.get("cost") or []
    calls = Counter[str]()
    for entry in ledger:
        if entry["calls"]:
            calls[entry["node"]] += entry["calls"]
    whole = usage.totals(ledger)
    return {
        "calls": dict(sorted(calls.items())),
        "prompt_tokens": whole["prompt_tokens"],
        "uncached_tokens": whole["uncached_tokens"],
    }


ROUTES = json.loads(BUDGET.read_text())


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_route_spends_its_budget_and_no_more(route, tmp_path):
    state, calls_made = run_route(route, tmp_path)
    mine, budget = spent(state), ROUTES[route]
    # the ledger misses no call: every call the model got is some node's
    assert sum(mine["calls"].values()) == calls_made
    assert mine["calls"] == budget["calls"], (
        f"{route}: calls by node changed; if on purpose, set its budget to {mine['calls']}"
    )
    for key in (
        ("prompt_tokens", "uncached_tokens") if route not in PARALLEL else ("prompt_tokens",)
    ):
        assert mine[key] <= budget[key], f"{route}: {key} {mine[key]} over its budget"
        assert mine[key] >= SLACK * budget[key], (
            f"{route}: {key} {mine[key]}, well below its budget {budget[key]}: lower it"
        )


def test_the_routes_are_the_ones_their_questions_take(tmp_path):
    taken = {}
    for route in ("kb", "web", "retry", "table", "catalog", "document", "small_talk"):
        state, _ = run_route(route, tmp_path / route)
        taken[route] = (
            state["route"],
            (state.get("plan") or {}).get("tool"),
            bool(state["web_search_used"]),
            state["retry_count"],
        )
    assert taken == {
        "kb": ("single", "search", False, 0),
        "web": ("single", "search", True, 0),
        "retry": ("single", "search", True, 1),
        "table": ("single", "table", False, 0),
        "catalog": ("single", "catalog", False, 0),
        "document": ("single", "document", False, 0),
        "small_talk": ("small_talk", None, False, 0),
    }
    state, _ = run_route("multi_part", tmp_path / "multi")
    assert state["route"] == "multi_part" and len(state["parts"]) == 2
    parts = {e["part"] for e in state["cost"] if e["calls"]}
    assert parts == {0, 1}  # each part's calls carry its place


def test_a_grey_zone_read_as_ambiguous_searches_the_web_and_no_model_grades(tmp_path):
    state, _ = run_route("kb_grey_ambiguous", tmp_path)
    assert state["web_search_used"] and "grade_documents" not in spent(state)["calls"]
    assert state["answer"] and state["sources"]


def test_the_ledger_counts_the_prompt_cache_as_the_server_reports_it(tmp_path):
    state, _ = run_route("kb", tmp_path, light_correct=1.0, light_incorrect=0.0)  # model grades
    by_node = usage.totals(state["cost"])["by_node"]
    grader, generator = LAST_LLM[0].calls[:2]
    # the generator asks after the grader, on the same documents: the cache serves them
    shared = len(os.path.commonprefix([grader["text"], generator["text"]]))
    assert shared > len(KB_DOCS[0].page_content)
    assert by_node["generate"]["cached_tokens"] == shared // 4 > 0
    assert by_node["generate"]["prompt_tokens"] == tokens(generator["text"])
    assert by_node["grade_documents"]["cached_tokens"] == 0  # the first call: nothing before


def record(id_: str, verdict: str, ledger: list[tuple[str, int, int, int]], **kw: Any) -> Any:
    """A mixed-benchmark record: its answer judged ``verdict``, its cost ledger given as
    (node, calls, prompt tokens, cached tokens) entries of one second each."""
    prediction = {"right": "Denver Broncos", "wrong": "Carolina Panthers"}.get(verdict, NO)
    cost = [
        {
            "node": node,
            "part": None,
            "calls": calls,
            "prompt_tokens": prompt,
            "cached_tokens": cached,
            "completion_tokens": calls,
            "llm_seconds": 1.0,
            "seconds": 1.0,
        }
        for node, calls, prompt, cached in ledger
    ]
    return {
        "id": id_,
        "category": "in_kb",
        "prediction": prediction,
        "gold_answers": ["Denver Broncos"],
        "latency_s": float(len(ledger)),
        "cost": cost,
        "route": "single",
        "tool": "search",
        "web_search_used": kw.get("web", False),
        "first_token_s": kw.get("first"),
    }


NO = "I don't know."


def test_where_the_time_goes_sums_the_ledgers_by_node_and_route():
    records = [
        record("a", "right", [("grade_documents", 1, 600, 100), ("generate", 1, 500, 400)]),
        record("b", "wrong", [("grade_documents", 2, 900, 100), ("web_search", 0, 0, 0)], web=1),
    ]
    nodes = {r["node"]: r for r in by_node(records)}
    assert nodes["grade_documents"]["calls"] == 1.5  # per question
    assert nodes["grade_documents"]["uncached"] == 650 and nodes["generate"]["cached"] == 200
    assert nodes["grade_documents"]["share"] == 50.0  # 2 of the run's 4 seconds
    routes = {r["route"]: r for r in by_route(records)}
    assert set(routes) == {"search", "search + web"}
    assert routes["search"]["uncached"] == 600 and routes["search"]["cached_share"] == 45.5


def test_a_part_s_price_and_what_it_buys():
    base = [
        record("a", "right", [("grade_documents", 1, 600, 0), ("check_hallucination", 1, 200, 0)]),
        record(
            "b", "unknown", [("grade_documents", 1, 600, 0), ("check_hallucination", 1, 200, 0)]
        ),
    ]
    ungated = [  # the gate's call still runs; without the gate one answer is given, wrong
        record("a", "right", [("grade_documents", 1, 600, 0), ("check_hallucination", 1, 200, 0)]),
        record("b", "wrong", [("grade_documents", 1, 600, 0), ("check_hallucination", 1, 200, 0)]),
    ]
    row = ablation_row("ungated", "the gate", ungated, base, "check_hallucination")
    assert row["verdicts"] == "1 / 0 / 1" and row["price"] == 200  # its own call's tokens
    assert row["buys"] == "+0.0, -50.0"  # per 100 questions: 50 fewer wrong
    assert row["per_1k"] == 250.0  # 50 truthfulness points for 200 tokens a question
    no_web = [record("a", "right", [("grade_documents", 1, 600, 0)]), base[1]]
    measured = ablation_row("no_web", "the web", no_web, base, "")
    assert measured["price"] == 100  # (800 + 800) / 2 - (600 + 800) / 2
