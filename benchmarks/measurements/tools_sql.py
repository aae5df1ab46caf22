"""SQL execution accuracy: the SQL the model writes for the tools benchmark's table questions.

    python -m benchmarks.measurements.tools_sql --out docs/benchmarks/tools/sql [--split test]

The questions and the collection are ``benchmarks.measurements.tools``'s (its ``table``
questions of one split). The tables each question is asked of are chosen as the graph chooses
them (``crag_core.text.sql.match_tables``); then each writer writes one query (no retry), which
runs behind the table store's guards, and the answer is read off its result as ``query_table``
reads it and judged by ``benchmarks.measurements.tools.judge``. The writers, each in its own
process (``crag.eval.interleave``; no prompt cache shared):

- ``plain``: a plain schema prompt (``table(column, …)`` lines, the question, "write one
  SQLite query"), decoding free — the usual text-to-SQL baseline;
- ``plain-grammar``: the plain prompt, decoding constrained by ``select_grammar``;
- ``schema``: the shipped prompt (``write_sql``: ``CREATE TABLE`` with the file's names, the
  few values of a text column, example rows), decoding free;
- ``grammar``: the shipped prompt, decoding constrained by ``select_grammar`` (only the
  tables' real names can be written) — what the graph does with the embedded model.

Reported: valid (the query ran), right / "I don't know" / wrong of the answers (a query that
failed or found nothing is "I don't know"), prompt and completion tokens and seconds per query.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

import prompts
from benchmarks.measurements.multi_part import compare
from benchmarks.measurements.tools import SETS, counts, judge, prepare_collection
from benchmarks.measurements.tools_questions import QUESTIONS
from crag.eval.harness import UsageCounter
from crag.eval.records import append_record, done_ids, read_records
from crag.eval.tables import markdown_table
from crag_core.clients.llm import complete
from crag_core.schema.context import Context
from crag_core.text.sql import extract_sql
from crag_core.text.sql_grammar import select_grammar
from crag_core.text.table_shapes import TableInfo
from nodes.tools.table_keys import tables_asked
from nodes.tools.table_query import run_query, schema_of

WRITERS = ("plain", "plain-grammar", "schema", "grammar")

PLAIN = """Tables:
{tables}

Question: {question}
Write one SQLite query that answers the question."""
"""The baseline's prompt: table and column names only."""


def plain_prompt(tables: list[TableInfo], question: str) -> prompts.RenderedPrompt:
    """The plain schema prompt for ``question`` over ``tables``."""
    lines = "\n".join(f"{t.name}({', '.join(c.name for c in t.columns)})" for t in tables)
    text = PLAIN.format(tables=lines, question=question)
    return prompts.RenderedPrompt("plain_sql", "bench", [HumanMessage(text)])


def answerer(job: dict[str, Any]) -> Callable[[str], None]:
    """A worker's answering function: the job's writer on one question id; its record."""
    from graph.factory import chat_model_for, knowledge_base

    writer, records = job["pipeline"], Path(job["records"])
    store = knowledge_base(SETS["tools"].collection).tables
    assert store is not None
    catalog = store.catalog()
    counter = UsageCounter()
    llm = chat_model_for(Context(collection=SETS["tools"].collection)).model_copy(
        update={"callbacks": [counter]}
    )
    by_id = {r["id"]: r for r in read_records(QUESTIONS)}
    done = done_ids(records)

    def answer(question_id: str) -> None:
        if question_id in done:
            return
        row = by_id[question_id]
        question = row["question"]
        tables = tables_asked(question, catalog, store)
        if writer.startswith("plain"):
            prompt = plain_prompt(tables, question)
        else:
            prompt = prompts.load("write_sql", "v1").render(
                schema=schema_of(store, tables, question), question=question, feedback=""
            )
        grammar = select_grammar(tables) if writer.endswith("grammar") else ""
        before = counter.prompt_tokens, counter.completion_tokens
        started = time.perf_counter()
        reply = complete(llm, prompt, grammar=grammar)
        seconds = time.perf_counter() - started
        sql = extract_sql(reply)
        sql, result, prediction, _, reason = run_query(store, sql, tables, catalog, question)
        record = {
            "id": row["id"],
            "question": question,
            "type": row["type"],
            "sql": sql,
            "valid": result is not None,
            "error": reason if result is None else "",
            "prediction": prediction,
            "gold": row["gold"],
            "verdict": judge(prediction or "I don't know.", row),
            "seconds": round(seconds, 2),
            "prompt_tokens": counter.prompt_tokens - before[0],
            "completion_tokens": counter.completion_tokens - before[1],
        }
        append_record(records, record)
        print(f"{writer}: {record['verdict']} {sql!r}", file=sys.stderr)

    return answer


def report(out: Path, writers: tuple[str, ...] = WRITERS) -> str:
    """Per writer with records: valid queries, right / IDK / wrong, tokens, seconds per query."""
    records = {
        w: read_records(out / f"{w}.jsonl") for w in writers if (out / f"{w}.jsonl").exists()
    }
    if not records:
        return "(no records yet)"
    common = set.intersection(*({r["id"] for r in rs} for rs in records.values()))
    rows = []
    for w, rs in records.items():
        mine = [r for r in rs if r["id"] in common]
        n = len(mine) or 1
        valid = sum(r["valid"] for r in mine)
        right = sum(r["verdict"] == "right" for r in mine)
        rows.append(
            {
                "writer": w,
                "n": len(mine),
                "valid": f"{valid} ({100 * valid / n:.0f}%)",
                "right": f"{right} ({100 * right / n:.0f}%)",
                "counts": counts(mine),
                "names": sum("no such" in r["error"] for r in mine),
                "prompt": f"{statistics.mean(r['prompt_tokens'] for r in mine):.0f}",
                "completion": f"{statistics.mean(r['completion_tokens'] for r in mine):.0f}",
                "p50": f"{statistics.median(r['seconds'] for r in mine):.2f}",
            }
        )
    table = markdown_table(
        rows,
        [
            ("writer", "writer"),
            ("n", "questions"),
            ("valid", "query ran"),
            ("names", "unknown name"),
            ("right", "right (execution accuracy)"),
            ("counts", "right / IDK / wrong"),
            ("prompt", "prompt tokens"),
            ("completion", "completion tokens"),
            ("p50", "seconds p50"),
        ],
    )
    types = sorted({r["type"] for rs in records.values() for r in rs})
    by_type = []
    for kind in types:
        row: dict[str, Any] = {"type": kind}
        for w, rs in records.items():
            mine = [r for r in rs if r["id"] in common and r["type"] == kind]
            row["n"] = len(mine)
            row[w] = counts(mine)
        by_type.append(row)
    type_table = markdown_table(
        by_type, [("type", "type"), ("n", "questions"), *[(w, w) for w in records]]
    )
    errors = Counter(r["error"].split(":")[0] for rs in records.values() for r in rs if r["error"])
    return (
        f"{len(common)} table questions, one query each:\n\n{table}\n\nBy type:\n\n{type_table}\n\n"
        f"Failures by kind (all writers): {dict(errors.most_common(6))}"
    )


def main(argv: list[str] | None = None) -> int:
    """Run every writer on the split's table questions, each in its own process."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("out/tools-sql"))
    parser.add_argument("--split", default="test", choices=["test", "calibration"])
    parser.add_argument("--data", type=Path, default=Path("out/tools-data"), help="its store")
    parser.add_argument(
        "--writers", default=",".join(WRITERS), help="some of " + ", ".join(WRITERS)
    )
    args = parser.parse_args(argv)
    chosen = [
        r for r in read_records(QUESTIONS) if r["split"] == args.split and r["tool"] == "table"
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    data_dir = args.data.resolve()
    os.environ["CRAG_DATA_DIR"] = str(data_dir)
    prepare_collection(data_dir)
    writers = tuple(w for w in args.writers.split(",") if w in WRITERS)
    compare(
        "benchmarks.measurements.tools_sql:answerer",
        {},
        [r["id"] for r in chosen],
        args.out,
        f"SQL written for {len(chosen)} {args.split} table questions",
        __doc__ or "",
        report,  # every writer with records in ``out`` (a writer run later joins the table)
        writers,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
