"""Load: questions per minute and latency at 1, 4 and 8 concurrent users, on shared services.

    python -m benchmarks.measurements.load --squad ../shared/data/squad-v1.1-dev.json.gz --out \
        out/load

Everything runs as a deployment would, on loopback: one Chroma server (``chroma run``) holding
the knowledge base, one PostgreSQL server, one model server (``crag model-server``: the
embedded model, 1 or several parallel slots) and one or two application processes
(``langgraph dev``, each with its own data dir, all three URLs set). Simulated users each send
their questions one after another as stateless runs streamed from the API. Every configuration
asks the same distinct questions (the answer cache never hits), with new app data dirs and a
restarted model server (no prompt cache is carried over).

Where the time goes is read from each run's stream: the time until each node's update
arrives is charged to that node — ``check_cache`` (it embeds the question), ``retrieve``,
``web_search`` and ``refine_knowledge`` to retrieval, nodes that call the model (waiting for a
slot included) to the model, the rest to orchestration — and from the model server's own
counters (seconds spent reading prompts and generating). Prints a table and writes
``load.json`` and ``load.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from benchmarks.fixtures.serve import clean_env, langgraph_dev
from benchmarks.fixtures.shared_services import chroma_server, model_server, postgres_server

RETRIEVAL = {"check_cache", "retrieve", "web_search", "refine_knowledge"}
MODEL = {
    "contextualize_question",
    "rewrite_query",
    "grade_documents",
    "generate",
    "validate_citations",
    "check_hallucination",
    "check_relevance",
}
CONFIGS = [  # (slots, app processes, users)
    (1, 1, 1),
    (1, 1, 4),
    (1, 1, 8),
    (4, 1, 1),
    (4, 1, 4),
    (4, 1, 8),
    (4, 2, 8),
]


def model_counters(url: str) -> dict[str, float]:
    """The model server's Prometheus counters (``llamacpp:*``), by name."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    found = re.findall(r"^llamacpp:(\w+) ([0-9.eE+-]+)$", text, flags=re.M)
    return {name: float(value) for name, value in found}


async def ask(url: str, question: str) -> dict[str, Any]:
    """Stream one stateless run; the seconds until each node's update, and the total."""
    from langgraph_sdk import get_client

    client = get_client(url=url, timeout=600)
    started = time.perf_counter()
    last = started
    nodes: list[tuple[str, float]] = []
    answer = ""
    async for part in client.runs.stream(
        None, "crag", input={"question": question}, stream_mode="updates", stream_subgraphs=True
    ):
        if part.event == "error":
            raise RuntimeError(f"run failed: {part.data}")
        # the turn's nodes and its question's pass's (a subgraph), not a part's
        own = part.event == "updates" or part.event.startswith("updates|answer_question:")
        if not own or not isinstance(part.data, dict):
            continue
        now = time.perf_counter()
        for node, update in part.data.items():
            if node == "answer_question":
                continue  # what the pass gave the turn: its nodes were counted
            nodes.append((node, now - last))
            if node == "finalize" and isinstance(update, dict):
                answer = str(update.get("answer", ""))
        last = now
    return {
        "question": question,
        "seconds": time.perf_counter() - started,
        "nodes": nodes,
        "answer": answer,
    }


async def user(url: str, questions: list[str]) -> list[dict[str, Any]]:
    """One user: ``questions`` asked one after another."""
    return [await ask(url, q) for q in questions]


def split_time(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds per run charged to model, retrieval and orchestration (means)."""
    totals = {"model": 0.0, "retrieval": 0.0, "orchestration": 0.0}
    for run in runs:
        charged = 0.0
        for node, seconds in run["nodes"]:
            kind = "retrieval" if node in RETRIEVAL else "model" if node in MODEL else None
            if kind:
                totals[kind] += seconds
                charged += seconds
        totals["orchestration"] += run["seconds"] - charged
    return {k: v / len(runs) for k, v in totals.items()}


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_config(
    slots: int, apps: int, users: int, questions: list[str], shared: dict[str, str], work: Path
) -> dict[str, Any]:
    """One configuration: start the model server and the apps, warm them up, load them."""
    with ExitStack() as stack:
        model = stack.enter_context(model_server(work, slots))
        servers = []
        for i in range(apps):
            data = work / f"app-{slots}-{apps}-{users}-{i}"
            env = clean_env(data) | shared | {"CRAG_BASE_URL": f"{model.url}/v1"}
            servers.append(stack.enter_context(langgraph_dev(env, work / data.name, isolated=True)))
        warm = [
            asyncio.run(ask(s.url, f"What is the subject of article {i}?"))
            for i, s in enumerate(servers)
        ]  # loads MiniLM, syncs the keyword copy, loads the encyclopedia
        before = model_counters(model.url)
        per_user = [questions[i::users] for i in range(users)]

        async def load() -> list[list[dict[str, Any]]]:
            return await asyncio.gather(
                *(user(servers[i % apps].url, qs) for i, qs in enumerate(per_user))
            )

        started = time.perf_counter()
        runs = [r for rs in asyncio.run(load()) for r in rs]
        wall = time.perf_counter() - started
        after = model_counters(model.url)
    seconds = [r["seconds"] for r in runs]
    counters = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
    return {
        "slots": slots,
        "apps": apps,
        "users": users,
        "questions": len(runs),
        "unfinished": sum(1 for r in runs if not any(n == "finalize" for n, _ in r["nodes"])),
        "wall_s": round(wall, 1),
        "per_minute": round(60 * len(runs) / wall, 2),
        "p50_s": round(statistics.median(seconds), 1),
        "p95_s": round(percentile(seconds, 0.95), 1),
        "split_s": {k: round(v, 2) for k, v in split_time(runs).items()},
        "model_prompt_s": round(counters.get("prompt_seconds_total", 0.0), 1),
        "model_generation_s": round(counters.get("tokens_predicted_seconds_total", 0.0), 1),
        "prompt_tokens": int(counters.get("prompt_tokens_total", 0)),
        "generated_tokens": int(counters.get("tokens_predicted_total", 0)),
        "warmup_s": [round(w["seconds"], 1) for w in warm],
        "runs": runs,
    }


def table(results: list[dict[str, Any]]) -> str:
    """The results as a Markdown table."""
    lines = [
        "| model slots | app processes | users | questions | q/min | p50 s | p95 s "
        "| model / retrieval / orchestration s per q | model busy s (prompt + gen) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        split = r["split_s"]
        lines.append(
            f"| {r['slots']} | {r['apps']} | {r['users']} | {r['questions']} | {r['per_minute']} "
            f"| {r['p50_s']} | {r['p95_s']} | {split['model']} / {split['retrieval']} / "
            f"{split['orchestration']} | {r['model_prompt_s']} + {r['model_generation_s']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the configurations; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--squad", type=Path, required=True, help="SQuAD v1.1 dev (.json.gz).")
    parser.add_argument("--out", type=Path, default=Path("out/load"))
    parser.add_argument("--articles", type=int, default=8, help="Articles in the knowledge base.")
    parser.add_argument("--questions", type=int, default=12, help="Asked in every configuration.")
    parser.add_argument(
        "--configs",
        default=",".join(f"{s}x{a}x{u}" for s, a, u in CONFIGS),
        help="slots x app processes x users, comma-separated.",
    )
    args = parser.parse_args(argv)
    if not args.squad.is_file():
        print(f"No SQuAD file at {args.squad}.", file=sys.stderr)
        return 2

    from crag.eval.corpus import index_paragraphs
    from crag.eval.squad import Dataset, load_squad
    from crag_core.clients.embeddings import default_embeddings
    from crag_core.clients.knowledge_base import KnowledgeBase

    squad = load_squad(args.squad)
    titles = list(dict.fromkeys(p.title for p in squad.paragraphs))[: args.articles]
    paragraphs = [p for p in squad.paragraphs if p.title in titles]
    kept = {p.id for p in paragraphs}
    pool = [q.question for q in squad.questions if q.paragraph_id in kept]
    questions = pool[:: max(1, len(pool) // args.questions)][: args.questions]  # all articles
    configs = [tuple(int(n) for n in c.split("x")) for c in args.configs.split(",")]
    work = args.out.resolve()
    work.mkdir(parents=True, exist_ok=True)
    results = []
    with postgres_server(work / "services") as postgres, chroma_server(work / "services") as chroma:
        kb = KnowledgeBase(work / "loader", "crag", default_embeddings(), server_url=chroma.url)
        started = time.perf_counter()
        index_paragraphs(kb, Dataset(paragraphs, []))
        print(
            f"{len(paragraphs)} paragraphs ({kb.count()} chunks) on the Chroma server in "
            f"{time.perf_counter() - started:.0f}s",
            flush=True,
        )
        shared = {"CRAG_CHROMA_URL": chroma.url, "CRAG_CHECKPOINT_URL": postgres.url}
        for slots, apps, users in configs:
            result = run_config(slots, apps, users, questions, shared, work)
            results.append(result)
            print(table([result]).splitlines()[-1], flush=True)
            (work / "load.json").write_text(json.dumps(results, indent=1))
    report = table(results)
    (work / "load.md").write_text(report + "\n")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
