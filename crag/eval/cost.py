"""Where a run's time and tokens go: its records' cost ledgers, by node and by route.

Every record keeps its question's ledger (``cost``: one entry per node run that uses a client,
``crag_core.clients.usage``). These tables sum them over a run: per node, what its calls cost a
question on average and its share of the run's time; per route (the tool, and whether the web
was searched or a table question fell back to the text), how many questions took it and what
they cost.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from crag.eval.metrics import percentile
from crag.eval.tables import markdown_table
from crag_core.clients import usage

NODE_COLUMNS = [
    ("node", "node"),
    ("runs", "runs / q"),
    ("calls", "calls / q"),
    ("uncached", "uncached prompt tokens / q"),
    ("cached", "cached prompt tokens / q"),
    ("generated", "generated tokens / q"),
    ("seconds", "s / q"),
    ("share", "share of time %"),
]
ROUTE_COLUMNS = [
    ("route", "route"),
    ("questions", "questions"),
    ("calls_median", "calls median"),
    ("calls_max", "calls max"),
    ("uncached", "uncached prompt tokens / q"),
    ("cached_share", "prompt cache share %"),
    ("latency_p50", "latency p50 s"),
    ("first_token_p50", "first token p50 s"),
    ("share", "share of time %"),
]


def route_of(record: dict[str, Any]) -> str:
    """The path a question took, in a few words: its turn route, tool, web or fallback."""
    route = record.get("route") or "single"
    if route != "single":
        return route
    tool = record.get("tool") or "search"
    nodes = {e["node"] for e in record.get("cost") or []}
    if tool == "table" and "retrieve" in nodes:
        tool = "table, then text"
    if record.get("web_search_used"):
        tool += " + web"
    return tool


def by_node(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per node: its runs, calls, tokens and seconds per question, share of time."""
    n = len(records) or 1
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for record in records:
        for e in record.get("cost") or []:
            row = sums[e["node"]]
            row["runs"] += 1
            row["calls"] += e["calls"]
            row["uncached"] += e["prompt_tokens"] - e["cached_tokens"]
            row["cached"] += e["cached_tokens"]
            row["generated"] += e["completion_tokens"]
            row["seconds"] += e["seconds"]
    total = sum(float(r["latency_s"]) for r in records) or 1.0
    rows = [
        {
            "node": node,
            **{
                k: round(v / n, 2 if k in ("runs", "calls", "seconds") else 0) for k, v in s.items()
            },
            "share": round(100 * s["seconds"] / total, 1),
        }
        for node, s in sums.items()
    ]
    return sorted(rows, key=lambda r: -float(r["seconds"]))


def by_route(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per route: questions, calls, uncached tokens, latency, share of the run's time."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[route_of(record)].append(record)
    total = sum(float(r["latency_s"]) for r in records) or 1.0
    rows = []
    for route, group in groups.items():
        calls = [usage.totals(r.get("cost") or [])["calls"] for r in group]
        whole = usage.totals(e for r in group for e in r.get("cost") or [])
        prompt, cached = whole["prompt_tokens"], whole["cached_tokens"]
        latencies = [float(r["latency_s"]) for r in group]
        firsts = [float(r["first_token_s"]) for r in group if r.get("first_token_s") is not None]
        rows.append(
            {
                "route": route,
                "questions": len(group),
                "calls_median": statistics.median(calls),
                "calls_max": max(calls),
                "uncached": round(whole["uncached_tokens"] / len(group)),
                "cached_share": round(100 * cached / prompt, 1) if prompt else None,
                "latency_p50": round(percentile(latencies, 50), 1),
                "first_token_p50": round(percentile(firsts, 50), 1) if firsts else None,
                "share": round(100 * sum(latencies) / total, 1),
            }
        )
    return sorted(rows, key=lambda r: -float(r["share"]))


def where_time_goes(run: str, records: list[dict[str, Any]]) -> str:
    """A run's two cost tables (by node, by route) as a Markdown section."""
    if not any(r.get("cost") for r in records):
        return f"## Where {run}'s time goes\n\nIts records carry no cost ledger."
    return (
        f"## Where {run}'s time goes ({len(records)} questions)\n\n"
        + markdown_table(by_node(records), NODE_COLUMNS)
        + "\n\n"
        + markdown_table(by_route(records), ROUTE_COLUMNS)
    )
