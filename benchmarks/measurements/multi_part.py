"""Multi-part questions: naive RAG, the graph without decomposition, and with it, in one run.

    python -m benchmarks.measurements.multi_part --squad ../shared/data/squad-v1.1-dev.json.gz \
        --out docs/benchmarks/multi-part [--limit 60]

Questions: pairs of SQuAD v1.1 dev questions from different articles joined as "<first>, and
<second>?" (``make_questions``: a fixed seed; both questions start with a question word, as a
person joining two questions would write them, and neither asks two things itself). The
knowledge base holds every SQuAD dev paragraph (the collection ``crag eval`` uses for the
whole dev set). Pipelines, each in its own process (no prompt cache shared), on the same
questions:

- ``naive``: one retrieval with the whole question, one generation (``graph.naive``);
- ``crag-single``: the graph with ``max_subquestions=1`` (no decomposition: one pass);
- ``crag``: the graph as shipped (the parts fanned out with ``Send``, a pass each).

Every pipeline's answer is scored the same way: for each part, the best SQuAD F1 of any
segment of the answer (lines, sentences, clauses at ";" or "and"; a segment's text after its
last "?" and without citation markers) against that part's gold answers. A part is right at
F1 >= 0.5; both-parts-right is the headline. Also measured, with the shipped graph in its own
process, the cost of the other routes (Adaptive-RAG's table): small talk (the small-talk
inputs of ``benchmarks/data/routing.jsonl``) and single questions (the first part of the
first ``--single`` pairs, asked alone); and in a process of its own the same single questions
with ``read_around`` off, which is a single question's pass as it was before this work. The
answer cache is off throughout. The pipelines take the questions in turn, question by question
(``crag.eval.interleave``, as ``crag eval --pipeline naive,crag`` does: A B C, C B A, ...), so
the machine's drift falls on all of them alike, a run stopped early has every pipeline on the
same questions, and a rerun resumes.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks import DATA
from crag.eval import interleave
from crag.eval.harness import collection_for, prepare, run_one
from crag.eval.metrics import best, f1, percentile
from crag.eval.records import append_record, done_ids, read_records
from crag.eval.squad import Question, load_squad
from crag.eval.tables import markdown_table
from crag_core.schema.context import Context
from crag_core.text.query_analysis import split_parts

SEED = 17
PIPELINES = ("naive", "crag-single", "crag")
WH = re.compile(r"^(?:what|who|whom|whose|when|where|which|why|how|in what|in which)\b", re.I)
ROUTING = DATA / "routing.jsonl"


def _article(q: Question) -> str:
    return q.paragraph_id.rsplit("#", 1)[0] if "#" in q.paragraph_id else q.paragraph_id


def _usable(q: Question) -> bool:
    text = q.question.strip()
    return bool(WH.match(text)) and text.endswith("?") and len(split_parts(text, 5)) == 1


def make_questions(squad: Path, n: int) -> list[dict[str, Any]]:
    """``n`` joined questions: two SQuAD dev questions from different articles each."""
    dataset = load_squad(squad)
    pool = [q for q in dataset.questions if _usable(q)]
    rng = random.Random(SEED)
    rng.shuffle(pool)
    joined: list[dict[str, Any]] = []
    for first, second in zip(pool[0::2], pool[1::2], strict=False):
        if len(joined) == n:
            break
        if _article(first) == _article(second):
            continue
        text = f"{first.question.strip().rstrip('?').strip()}, and "
        text += second.question.strip()[0].lower() + second.question.strip()[1:]
        joined.append(
            {
                "id": f"{first.id}+{second.id}",
                "question": text,
                "parts": [
                    {
                        "question": q.question,
                        "answers": list(q.answers),
                        "paragraph": q.paragraph_id,
                    }
                    for q in (first, second)
                ],
            }
        )
    return joined


def segments(prediction: str) -> list[str]:
    """The pieces of an answer a part's answer may be: lines, sentences, clauses."""
    text = re.sub(r"\[[\d,\s]+\]|\[S\d+\]", " ", prediction)
    pieces = re.split(r"\n|(?<=[.!])\s+|;|,?\s+and\s+", text)
    return [p.rsplit("?", 1)[-1].strip() for p in [text, *pieces] if p.strip()]


def part_f1(prediction: str, answers: list[str]) -> float:
    """The best F1 of any segment of ``prediction`` against a part's gold answers."""
    return max((best(f1, s, answers) for s in segments(prediction)), default=0.0)


def context_for(pipeline: str, collection: str) -> Context:
    """The graph's context for ``pipeline``: no answer cache; ``crag-single`` never splits."""
    subquestions = {"crag-single": 1}.get(pipeline, 3)
    return Context(collection=collection, answer_cache=False, max_subquestions=subquestions)


def ask(pipeline: str, question: str, ctx: Context) -> tuple[dict[str, Any], dict[str, Any]]:
    """The eval harness's record of one question (its answer, route, calls and time)."""
    asked = Question(id="", question=question, answers=(), paragraph_id="")
    out = run_one("naive" if pipeline == "naive" else "crag", asked, ctx)
    spent = {
        "seconds": round(out["latency_s"], 2),
        "llm_calls": out["llm_calls"],
        "prompt_tokens": out["prompt_tokens"],
        "cached_prompt_tokens": out["cached_prompt_tokens"],
        "completion_tokens": out["completion_tokens"],
    }
    return out, spent


def answerer(job: dict[str, Any]) -> Callable[[str], None]:
    """A worker's answering function: the job's pipeline on one question id; its record."""
    pipeline, records = job["pipeline"], Path(job["records"])
    ctx = context_for(pipeline, collection_for(load_squad(Path(job["squad"]))))
    rows = {r["id"]: r for r in read_jsonl(Path(job["questions"]))}
    done = done_ids(records)

    def answer(question_id: str) -> None:
        if question_id in done:
            return
        row = rows[question_id]
        result, spent = ask(pipeline, row["question"], ctx)
        scores = [part_f1(result["prediction"], p["answers"]) for p in row["parts"]]
        record = {
            "id": row["id"],
            "question": row["question"],
            "prediction": result["prediction"],
            "part_f1": [round(s, 3) for s in scores],
            "both_right": all(s >= 0.5 for s in scores),
            "route": route_of(result),
            **spent,
        }
        append_record(records, record)
        print(
            f"{pipeline}: {record['part_f1']} {record['seconds']}s {row['question']!r}",
            file=sys.stderr,
        )

    return answer


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON-lines file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_routes(questions: Path, squad: Path, out: Path, single: int, before: bool) -> None:
    """The shipped graph on small talk and on single questions: seconds and calls per route.

    ``before``: the single questions only, with ``read_around`` off — a single question's
    pass as it was before query analysis and reading around (analyze_query and the history
    check add no call to a first turn).
    """
    dataset = load_squad(squad)
    ctx = context_for("crag", collection_for(dataset))
    routing = read_jsonl(ROUTING)
    rows = read_jsonl(questions)
    inputs = [("small_talk", r["input"]) for r in routing if r["label"] == "small_talk"]
    inputs += [("single", r["parts"][0]["question"]) for r in rows[:single]]
    if before:
        ctx = replace(ctx, read_around=False)
        inputs = [("single_before", text) for label, text in inputs if label == "single"]
    records = out / ("routes-before.jsonl" if before else "routes.jsonl")
    done = done_ids(records)
    for n, (label, text) in enumerate(inputs):
        key = f"{label}-{n}"
        if key in done:
            continue
        result, spent = ask("crag", text, ctx)
        record = {"id": key, "label": label, "input": text, "route": route_of(result), **spent}
        append_record(records, record)
        print(f"route {label}: {record['route']} {record['seconds']}s {text!r}")


def route_of(result: dict[str, Any]) -> str:
    """The route a harness record took (the naive pipeline has none: ``single``)."""
    return str(result.get("route") or "single")


def mean(values: list[float]) -> float:
    """The mean, 0 for no values."""
    return sum(values) / len(values) if values else 0.0


COST_COLUMNS = [
    ("p50", "seconds p50"),
    ("mean", "seconds mean"),
    ("calls", "LLM calls / q"),
    ("tokens", "prompt tokens / q"),
]


def cost(records: list[dict[str, Any]]) -> dict[str, str]:
    """A pipeline's cost per question, for ``COST_COLUMNS``."""
    seconds = [r["seconds"] for r in records]
    return {
        "p50": f"{percentile(seconds, 50):.1f}",
        "mean": f"{mean(seconds):.1f}",
        "calls": f"{mean([r['llm_calls'] for r in records]):.2f}",
        "tokens": f"{mean([r['prompt_tokens'] for r in records]):.0f}",
    }


def on_common_questions(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Each pipeline's records, on the questions every pipeline has answered."""
    records = {p: read_records(out / f"{p}.jsonl") for p in PIPELINES}
    common = set.intersection(*({r["id"] for r in rs} for rs in records.values()))
    return {p: [r for r in rs if r["id"] in common] for p, rs in records.items()}


def report(out: Path) -> str:
    """Both tables, from the records the pipelines wrote."""
    records = on_common_questions(out)
    rows = []
    for pipeline, rs in records.items():
        rows.append(
            {
                "pipeline": pipeline,
                "questions": len(rs),
                "both": f"{100 * mean([r['both_right'] for r in rs]):.1f}",
                "f1": f"{100 * mean([s for r in rs for s in r['part_f1']]):.1f}",
                "f1_1": f"{100 * mean([r['part_f1'][0] for r in rs]):.1f}",
                "f1_2": f"{100 * mean([r['part_f1'][1] for r in rs]):.1f}",
                **cost(rs),
            }
        )
    columns = [
        ("pipeline", "pipeline"),
        ("questions", "questions"),
        ("both", "both parts right %"),
        ("f1", "part F1"),
        ("f1_1", "F1 first part"),
        ("f1_2", "F1 second part"),
        *COST_COLUMNS,
    ]
    text = [markdown_table(rows, columns)]
    routes_file = out / "routes.jsonl"
    if routes_file.is_file():
        routes = read_records(routes_file)
        before_file = out / "routes-before.jsonl"
        routes += read_records(before_file) if before_file.is_file() else []
        crag = records["crag"]
        cost_rows = []
        for label, rs in (
            ("small talk", [r for r in routes if r["label"] == "small_talk"]),
            ("single", [r for r in routes if r["label"] == "single"]),
            ("single, read_around off", [r for r in routes if r["label"] == "single_before"]),
            ("multi-part (2 parts)", crag),
        ):
            seconds = [r["seconds"] for r in rs]
            cost_rows.append(
                {
                    "route": label,
                    "inputs": len(rs),
                    "routed": ", ".join(
                        f"{k} {v}" for k, v in sorted(Counter(r["route"] for r in rs).items())
                    ),
                    "calls": f"{mean([r['llm_calls'] for r in rs]):.2f}",
                    "max_calls": max((r["llm_calls"] for r in rs), default=0),
                    "p50": f"{percentile(seconds, 50):.1f}",
                    "max": f"{max(seconds, default=0):.1f}",
                    "tokens": f"{mean([r['prompt_tokens'] for r in rs]):.0f}",
                }
            )
        text.append(
            markdown_table(
                cost_rows,
                [
                    ("route", "inputs of"),
                    ("inputs", "inputs"),
                    ("routed", "routed as"),
                    ("calls", "LLM calls / input"),
                    ("max_calls", "max calls"),
                    ("p50", "seconds p50"),
                    ("max", "seconds max"),
                    ("tokens", "prompt tokens / input"),
                ],
            )
        )
    return "\n\n".join(text)


REPORT_EVERY = 10
"""Questions between two writes of the report while the pipelines run."""


def compare(
    answerer: str,
    job: dict[str, Any],
    question_ids: list[str],
    out: Path,
    title: str,
    doc: str,
    report: Callable[[Path], str],
    pipelines: tuple[str, ...] = PIPELINES,
) -> None:
    """Every pipeline answers every question, each in a worker process of its own.

    The workers are ``crag.eval.interleave``'s (question by question, alternating which
    pipeline goes first); ``answerer`` ("module:function") makes each worker's answering
    function from ``job`` plus its ``pipeline`` and ``records`` file (``out/<pipeline>.jsonl``).
    Every ``REPORT_EVERY`` questions, and at the end, ``report`` is written to
    ``out/README.md`` under ``title`` and the benchmark's ``doc``; it is printed at the end.
    """

    def write_report() -> None:
        (out / "README.md").write_text(f"# {title}\n\n```\n{doc}```\n\n{report(out)}\n")

    def on_done(name: str, question_id: str) -> None:
        if name == pipelines[0] and question_ids.index(question_id) % REPORT_EVERY == 0:
            write_report()

    jobs = [
        {
            **job,
            "name": pipeline,
            "pipeline": pipeline,
            "answerer": answerer,
            "out": str(out / "workers" / pipeline),
            "records": str(out / f"{pipeline}.jsonl"),
        }
        for pipeline in pipelines
    ]
    interleave.run(jobs, question_ids, on_done)
    write_report()
    print(report(out))


def main(argv: list[str] | None = None) -> int:
    """Make the questions, run every pipeline in its own process, write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--squad", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--single", type=int, default=10, help="Single questions for the cost.")
    parser.add_argument("--pipeline", choices=["routes", "routes-before"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    questions = args.out / "questions.jsonl"
    if args.pipeline in ("routes", "routes-before"):
        run_routes(questions, args.squad, args.out, args.single, args.pipeline == "routes-before")
        return 0
    if not questions.is_file():
        rows = make_questions(args.squad, args.limit)
        questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    command = [
        sys.executable,
        "-m",
        "benchmarks.measurements.multi_part",
        "--squad",
        str(args.squad),
    ]
    command += ["--out", str(args.out), "--single", str(args.single)]
    subprocess.run([*command, "--pipeline", "routes"], check=True)
    subprocess.run([*command, "--pipeline", "routes-before"], check=True)
    dataset = load_squad(args.squad)
    prepare(dataset, context_for("crag", collection_for(dataset)), None)  # before the workers
    ids = [r["id"] for r in read_jsonl(questions)[: args.limit]]
    job = {"squad": str(args.squad), "questions": str(questions)}
    title, doc = "Multi-part questions", __doc__ or ""
    compare("benchmarks.measurements.multi_part:answerer", job, ids, args.out, title, doc, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
