"""Calibrate CRAG's thresholds on the mixed benchmark's calibration split (never the test split).

Reads the records of a CRAG run on the calibration split made with the answer check let
through and no retries (``make calibrate`` runs it), so every score the graph computes is
recorded, and picks each threshold by a rule fixed before looking at the test split:

- ``correct_threshold`` (upper): the smallest value that at most ``MISS`` of the questions the
  knowledge base cannot answer (web_only, unanswerable) reach with the knowledge base alone;
- ``incorrect_threshold`` (lower): the largest value, not above the upper one, under which at
  most ``MISS`` of the knowledge-base questions fall (they would skip the knowledge base);
- ``answer_threshold``: the value that best separates right answers (F1 >= 0.5) from the
  others (answers to unanswerable questions, wrong answers): the largest share of right
  answers kept minus the share of others kept (Youden's J), the lowest such value on ties.
  A check whose best J is not above two standard errors of that difference does not
  separate them on this split: it gets 0, which turns it off (no call is made).

    .venv/bin/python -m benchmarks.calibration out/calibration/crag --out docs/benchmarks/mixed
    .venv/bin/python -m benchmarks.calibration out/calibration/crag --settings  # for --variant
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from benchmarks import write_results
from crag.eval.metrics import percentile
from crag.eval.records import read_records
from crag.eval.tables import markdown_table

MISS = 0.10
GRID = [round(0.05 * i, 2) for i in range(21)]


def share(values: list[float], test: Any) -> float:
    """The share of ``values`` that pass ``test`` (0 for none)."""
    return sum(1 for v in values if test(v)) / len(values) if values else 0.0


def scores(records: list[dict[str, Any]], key: str, pick: Any) -> list[float]:
    """``key`` of the records ``pick`` selects, where it was computed."""
    return [float(r[key]) for r in records if pick(r) and r.get(key) is not None]


def standard_error(right: list[float], other: list[float], t: float) -> float:
    """Standard error of the difference of the shares of ``right`` and ``other`` at ``t``."""
    if not right or not other:
        return math.inf
    p, q = share(right, lambda v: v >= t), share(other, lambda v: v >= t)
    return math.sqrt(p * (1 - p) / len(right) + q * (1 - q) / len(other))


def choose(records: list[dict[str, Any]]) -> dict[str, float]:
    """The three thresholds by the rules above."""
    kb = scores(records, "retrieval_score", lambda r: r["category"] == "in_kb")
    elsewhere = scores(records, "retrieval_score", lambda r: r["category"] != "in_kb")
    upper = next(t for t in GRID if share(elsewhere, lambda v, t=t: v >= t) <= MISS)
    lower = max(t for t in GRID if t <= upper and share(kb, lambda v, t=t: v < t) <= MISS)
    right = scores(records, "answer_score", lambda r: (r.get("f1") or 0) >= 0.5)
    other = scores(records, "answer_score", lambda r: (r.get("f1") or 0) < 0.5)

    def separation(t: float) -> float:
        return round(share(right, lambda v: v >= t) - share(other, lambda v: v >= t), 6)

    answer = max(GRID, key=lambda t: (separation(t), -t))
    if separation(answer) <= 2 * standard_error(right, other, answer):
        answer = 0.0
    return {"correct_threshold": upper, "incorrect_threshold": lower, "answer_threshold": answer}


def quantiles(name: str, values: list[float]) -> dict[str, Any]:
    """A table row: how many, and the 10th, 50th and 90th percentiles."""
    row: dict[str, Any] = {"scores": name, "n": len(values)}
    for q in (10, 50, 90):
        row[f"p{q}"] = round(percentile(values, q), 3) if values else None
    return row


def rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Score distributions per category and per outcome."""
    out = []
    for category in ("in_kb", "web_only", "unanswerable"):
        of = lambda r, c=category: r["category"] == c  # noqa: E731
        out.append(
            quantiles(
                f"evaluator, knowledge base: {category}", scores(records, "retrieval_score", of)
            )
        )
    for category in ("web_only", "unanswerable", "in_kb"):
        of = lambda r, c=category: r["category"] == c  # noqa: E731
        out.append(
            quantiles(
                f"evaluator, after web search: {category}", scores(records, "evidence_score", of)
            )
        )
    right = lambda r: (r.get("f1") or 0) >= 0.5  # noqa: E731
    wrong = lambda r: not right(r)  # noqa: E731
    out.append(
        quantiles("answer check: right answers (F1 >= 0.5)", scores(records, "answer_score", right))
    )
    out.append(quantiles("answer check: other answers", scores(records, "answer_score", wrong)))
    return out


def main() -> None:
    """Print and write the calibration."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a `crag eval` result directory")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/mixed"))
    parser.add_argument(
        "--settings",
        action="store_true",
        help="only print the chosen thresholds as FIELD=VALUE,... (for `crag eval --variant`)",
    )
    args = parser.parse_args()
    records = read_records(args.run / "predictions.jsonl")
    chosen = choose(records)
    if args.settings:
        print(",".join(f"{k}={v}" for k, v in chosen.items()))
        return
    table = markdown_table(
        rows(records),
        [("scores", "scores"), ("n", "n"), ("p10", "p10"), ("p50", "p50"), ("p90", "p90")],
    )
    summary = f"{len(records)} calibration questions; chosen: " + ", ".join(
        f"{k} = {v}" for k, v in chosen.items()
    )
    print(summary, table, sep="\n\n")
    write_results(
        args.out, "calibration", summary, table, {"chosen": chosen, "rows": rows(records)}
    )


if __name__ == "__main__":
    main()
