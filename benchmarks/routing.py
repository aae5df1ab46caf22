"""Routing: how ``analyze_query`` routes a labelled set of inputs (no LLM call, no model).

    python -m benchmarks.routing [--out docs/benchmarks/routing.md]

``benchmarks/data/routing.jsonl`` holds 88 inputs written by hand, labelled with the route a
good router would take: ``small_talk`` (greetings, thanks, farewells, acknowledgements,
questions about the assistant), ``single``, ``history`` (a follow-up the thread's last turn
already answered), ``multi_part`` (independent parts) and ``multi_step`` (dependent parts).
The graph routes by the same rules (``nodes.analyze_query``, default ``max_subquestions``);
there is no ``history`` route yet, so those rows show where such follow-ups go today. The
table shows where each class goes, and the error that must not happen: a question routed to
small talk (answered with no evidence).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from adapters.query_analysis import is_dependent, is_small_talk, split_parts
from schema.context import Context

DATA = Path(__file__).with_name("data") / "routing.jsonl"
LABELS = ["small_talk", "single", "history", "multi_part", "multi_step"]


def route(text: str) -> str:
    """The route ``analyze_query`` takes for ``text`` (a thread's first turn)."""
    if is_small_talk(text):
        return "small_talk"
    parts = split_parts(text, Context().max_subquestions)
    if len(parts) == 1:
        return "single"
    return "multi_step" if is_dependent(parts) else "multi_part"


def main(argv: list[str] | None = None) -> int:
    """Route every labelled input; print (and optionally write) the confusion table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="Also write the report here (Markdown).")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    routed: dict[str, Counter[str]] = {label: Counter() for label in LABELS}
    wrong_small_talk = []
    for row in rows:
        got = route(row["input"])
        routed[row["label"]][got] += 1
        if (got == "small_talk") != (row["label"] == "small_talk"):
            wrong_small_talk.append(f"{row['input']!r} ({row['label']} -> {got})")
    built = ["small_talk", "single", "multi_part", "multi_step"]
    lines = [
        f"{len(rows)} labelled inputs (benchmarks/data/routing.jsonl); routes by rules, no LLM.",
        "",
        f"| label | inputs | {' | '.join(f'routed {r}' for r in built)} | accuracy |",
        f"|---|---|{'---|' * len(built)}---|",
    ]
    for label in LABELS:
        n = sum(routed[label].values())
        right = f"{routed[label][label]}/{n}" if label in built else "— (no route yet)"
        counts = " | ".join(str(routed[label][r]) for r in built)
        lines.append(f"| {label} | {n} | {counts} | {right} |")
    misrouted = [
        f"{row['input']!r} ({row['label']} -> {route(row['input'])})"
        for row in rows
        if row["label"] in built and route(row["input"]) != row["label"]
    ]
    questions = sum(sum(routed[label].values()) for label in LABELS if label != "small_talk")
    into_small_talk = sum(routed[label]["small_talk"] for label in LABELS if label != "small_talk")
    lines += [
        "",
        f"Questions routed to small talk: {into_small_talk} of {questions} (target 0).",
        f"Small talk routed to retrieval: {routed['small_talk']['single']} of "
        f"{sum(routed['small_talk'].values())}.",
    ]
    if wrong_small_talk:
        lines += ["", "Into or out of small talk:", *[f"- {w}" for w in wrong_small_talk]]
    if misrouted:
        lines += ["", "Every misrouted input:", *[f"- {w}" for w in misrouted]]
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.write_text(f"# Routing\n\n`python -m benchmarks.routing`\n\n{report}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
