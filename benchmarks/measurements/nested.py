"""Nested questions: naive RAG, the graph answering them as one, and in two look-ups, in one run.

    python -m benchmarks.measurements.nested --squad ../shared/data/squad-v1.1-dev.json.gz \
        --out docs/benchmarks/nested

Questions: the ``multi_step`` rows of ``benchmarks/data/nested.jsonl`` and ``nested-2.jsonl`` (a
question that describes a thing instead of naming it: "Who coached the team that lost Super Bowl
50?"), each with the answers a reader would accept, written by hand. The knowledge base holds
every SQuAD dev paragraph, as in ``benchmarks.measurements.multi_part``; most of these questions
are answered from the web (the offline encyclopedia by default), which naive RAG never reads.
Pipelines, each in its own process (no prompt cache shared), question by question on the same
questions (``benchmarks.measurements.multi_part.compare``):

- ``naive``: one retrieval with the whole question, one generation (``graph.naive``);
- ``crag-single``: the graph with ``max_subquestions=1`` (the question answered as one);
- ``crag``: the graph as shipped (the first look-up, then the second with its answer).

An answer is right when it contains an accepted answer (case and punctuation aside); for a
question answered in steps, the last line (the second step's answer) is what is scored. The
single questions of both sets are routed ``single`` by either graph (``make bench-routing``), so
they run the same pass in both and are not asked here. The answer cache is off.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import DATA
from benchmarks.measurements.multi_part import (
    COST_COLUMNS,
    ask,
    compare,
    context_for,
    cost,
    mean,
    on_common_questions,
    route_of,
)
from crag.eval.harness import collection_for, prepare
from crag.eval.metrics import normalize_answer
from crag.eval.records import append_record, done_ids
from crag.eval.squad import load_squad
from crag.eval.tables import markdown_table

SETS = [DATA / f for f in ("nested.jsonl", "nested-2.jsonl")]


def questions() -> list[dict[str, Any]]:
    """The nested questions of both sets, with an id naming the set and row."""
    rows = []
    for path in SETS:
        for n, line in enumerate(path.read_text().splitlines()):
            row = json.loads(line)
            if row["label"] == "multi_step":
                rows.append({**row, "id": f"{path.stem}-{n}"})
    return rows


def is_right(prediction: str, route: str, answers: list[str]) -> bool:
    """Whether the final answer holds an accepted answer (the last step's, when in steps)."""
    final = prediction.strip().splitlines()[-1] if route == "multi_step" else prediction
    return any(f" {normalize_answer(a)} " in f" {normalize_answer(final)} " for a in answers)


def answerer(job: dict[str, Any]) -> Callable[[str], None]:
    """A worker's answering function: the job's pipeline on one question id; its record."""
    pipeline, records = job["pipeline"], Path(job["records"])
    ctx = context_for(pipeline, collection_for(load_squad(Path(job["squad"]))))
    rows = {r["id"]: r for r in questions()}
    done = done_ids(records)

    def answer(question_id: str) -> None:
        if question_id in done:
            return
        row = rows[question_id]
        result, spent = ask(pipeline, row["input"], ctx)
        route = route_of(result)
        record = {
            "id": row["id"],
            "question": row["input"],
            "prediction": result["prediction"],
            "right": is_right(result["prediction"], route, row["answers"]),
            "route": route,
            "web_search_used": bool(result.get("web_search_used")),
            **spent,
        }
        append_record(records, record)
        print(
            f"{pipeline}: {record['right']} {record['seconds']}s {row['input']!r}", file=sys.stderr
        )

    return answer


def report(out: Path) -> str:
    """The table, from the records the pipelines wrote, on the questions all of them did."""
    rows = []
    for pipeline, rs in on_common_questions(out).items():
        right = [r["right"] for r in rs]
        rows.append(
            {
                "pipeline": pipeline,
                "questions": len(rs),
                "right": f"{sum(right)} ({100 * mean(right):.0f}%)",
                "web": sum(r["web_search_used"] for r in rs),
                "routed": ", ".join(
                    f"{k} {v}" for k, v in sorted(Counter(r["route"] for r in rs).items())
                ),
                **cost(rs),
            }
        )
    columns = [
        ("pipeline", "pipeline"),
        ("questions", "questions"),
        ("right", "right"),
        ("routed", "routed as"),
        ("web", "web searched"),
        *COST_COLUMNS,
    ]
    return markdown_table(rows, columns)


def main(argv: list[str] | None = None) -> int:
    """Run every pipeline in its own process, question by question; write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--squad", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    dataset = load_squad(args.squad)
    prepare(dataset, context_for("crag", collection_for(dataset)), None)  # before the workers
    ids = [r["id"] for r in questions()]
    title, doc = "Nested questions", __doc__ or ""
    compare(
        "benchmarks.measurements.nested:answerer",
        {"squad": str(args.squad)},
        ids,
        args.out,
        title,
        doc,
        report,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
