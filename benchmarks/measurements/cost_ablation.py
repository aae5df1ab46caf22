r"""What each of CRAG's model calls buys: right / "I don't know" / wrong moved per token spent.

    python -m benchmarks.measurements.cost_ablation OUT/crag OUT/no_web OUT/ungated ... \
        --part no_web="the web fallback" --part ungated="the confidence gate" \
        --node ungated=check_hallucination --out docs/benchmarks/mixed/ablation-COMMIT

The runs are ``crag eval --format mixed`` runs of one split in one interleaved invocation
(``--variant``): the first is CRAG as shipped, each other switches one part off by its
settings. For each, on the questions every run answered: the verdicts, and what the run spent
from its records' cost ledgers (uncached prompt tokens, generated tokens, model calls and
seconds per question). A part's price is what CRAG spends more than the run without it, in
uncached prompt tokens a question; where the ablated run still makes the part's call and only
ignores its outcome (``--node``: the call's node), that call's own tokens there are added, as
what dropping the part would save too. What it buys: right and wrong answers more per 100
questions, and truthfulness points (right - wrong, per 100 questions) per 1,000 tokens of its
price.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from crag.eval.metrics import verdicts
from crag.eval.records import read_records
from crag.eval.tables import markdown_table
from crag_core.clients import usage

COLUMNS = [
    ("run", "run"),
    ("part", "part switched off"),
    ("verdicts", "right / IDK / wrong"),
    ("truthfulness", "truthfulness %"),
    ("calls", "calls / q (median)"),
    ("uncached", "uncached prompt tokens / q"),
    ("generated", "generated / q"),
    ("seconds", "total s"),
    ("price", "its price: uncached tokens / q"),
    ("buys", "it buys: right, wrong / 100 q"),
    ("per_1k", "truthfulness points per 1,000 tokens / q"),
]


def spent(records: list[dict[str, Any]], node: str = "") -> dict[str, float]:
    """Per question: uncached prompt and generated tokens, calls; total seconds (of ``node``).

    Summed by ``crag_core.clients.usage.totals``, which a turn's own summary uses.
    """
    n = len(records) or 1
    entries = [e for r in records for e in r.get("cost") or [] if not node or e["node"] == node]
    whole = usage.totals(entries)
    calls = [usage.totals(r.get("cost") or [])["calls"] for r in records]
    return {
        "uncached": whole["uncached_tokens"] / n,
        "generated": whole["completion_tokens"] / n,
        "calls": sum(calls) / n,
        "calls_median": statistics.median(calls) if calls else 0,
        "seconds": sum(e["seconds"] for e in entries)
        if node
        else sum(float(r["latency_s"]) for r in records),
    }


def row(
    name: str, part: str, mine: list[dict[str, Any]], base: list[dict[str, Any]], node: str
) -> dict[str, Any]:
    """One run's row: its verdicts and spending, and against ``base`` what its part buys."""
    v, cost = verdicts(mine), spent(mine)
    out = {
        "run": name,
        "part": part or "—",
        "verdicts": f"{v['right']} / {v['unknown']} / {v['wrong']}",
        "truthfulness": v["truthfulness"],
        "calls": f"{cost['calls']:.2f} ({cost['calls_median']:g})",
        "uncached": round(cost["uncached"]),
        "generated": round(cost["generated"]),
        "seconds": round(cost["seconds"], 1),
    }
    if not part:
        return out
    b = verdicts(base)
    n = len(base) or 1
    price = spent(base)["uncached"] - cost["uncached"]
    if node:  # the call still ran in the ablated run: dropping it would save it too
        price += spent(mine, node)["uncached"]
    more_right = 100 * (b["right"] - v["right"]) / n
    more_wrong = 100 * (b["wrong"] - v["wrong"]) / n
    gained = b["truthfulness"] - v["truthfulness"]
    out |= {
        "price": round(price),
        "buys": f"{more_right:+.1f}, {more_wrong:+.1f}",
        "per_1k": round(1000 * gained / price, 1) if price > 0 else None,
    }
    return out


def main(argv: list[str] | None = None) -> int:
    """Write ``ablation.md`` and ``ablation.json`` for the runs; 2 when they share nothing."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run dirs, CRAG as shipped first")
    parser.add_argument(
        "--part", action="append", default=[], help="RUN=what it switches off (a label)"
    )
    parser.add_argument(
        "--node", action="append", default=[], help="RUN=node whose own calls price the part"
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    parts = dict(p.split("=", 1) for p in args.part)
    nodes = dict(p.split("=", 1) for p in args.node)
    records = {d.name: read_records(d / "predictions.jsonl") for d in args.runs}
    common = set.intersection(*({r["id"] for r in rs} for rs in records.values()))
    if not common:
        print("The runs share no question.", file=sys.stderr)
        return 2
    kept = {name: [r for r in rs if r["id"] in common] for name, rs in records.items()}
    base_name = args.runs[0].name
    rows = [
        row(name, parts.get(name, ""), rs, kept[base_name], nodes.get(name, ""))
        for name, rs in kept.items()
    ]
    table = markdown_table(rows, COLUMNS)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ablation.md").write_text(f"{len(common)} questions\n\n{table}\n")
    (args.out / "ablation.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
