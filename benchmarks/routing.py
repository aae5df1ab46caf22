"""Routing: how ``analyze_query`` routes a labelled set of inputs (no LLM call, no model).

    python -m benchmarks.routing [--out docs/benchmarks/routing.md]

``benchmarks/data/routing.jsonl`` holds 88 inputs written by hand, labelled with the route a
good router would take: ``small_talk`` (greetings, thanks, farewells, acknowledgements,
questions about the assistant), ``single``, ``history`` (a follow-up the thread's last turn
already answered), ``multi_part`` (independent parts) and ``multi_step`` (dependent parts).
The graph has the ``small_talk`` and ``single`` routes; the table shows where each class goes
today, and the error that must not happen: a question routed to small talk (answered with no
evidence).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from adapters.query_analysis import is_small_talk

DATA = Path(__file__).with_name("data") / "routing.jsonl"
LABELS = ["small_talk", "single", "history", "multi_part", "multi_step"]


def route(text: str) -> str:
    """The route ``analyze_query`` takes for ``text``."""
    return "small_talk" if is_small_talk(text) else "single"


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
    lines = [
        f"{len(rows)} labelled inputs (benchmarks/data/routing.jsonl); routes by rules, no LLM.",
        "",
        "| label | inputs | routed small_talk | routed single | correct route today |",
        "|---|---|---|---|---|",
    ]
    for label in LABELS:
        n = sum(routed[label].values())
        right = routed[label][label] if label in ("small_talk", "single") else "— (no route yet)"
        lines.append(
            f"| {label} | {n} | {routed[label]['small_talk']} | {routed[label]['single']} "
            f"| {right} |"
        )
    questions = sum(sum(routed[label].values()) for label in LABELS if label != "small_talk")
    into_small_talk = sum(routed[label]["small_talk"] for label in LABELS if label != "small_talk")
    lines += [
        "",
        f"Questions routed to small talk: {into_small_talk} of {questions} (target 0).",
        f"Small talk routed to retrieval: {routed['small_talk']['single']} of "
        f"{sum(routed['small_talk'].values())}.",
    ]
    if wrong_small_talk:
        lines += ["", "Misrouted:", *[f"- {w}" for w in wrong_small_talk]]
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.write_text(f"# Routing\n\n`python -m benchmarks.routing`\n\n{report}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
