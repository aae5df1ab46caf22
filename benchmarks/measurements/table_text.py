"""Row look-ups by retrieval over a spreadsheet's text: each row naming its columns, or blocks.

The text route answers a question about one row of a table (the look-ups the planner does not
send to SQL, or every question with ``tools`` off) from the chunks retrieval finds, so the row
must be among them. Two ways to write a spreadsheet as text, over the tools benchmark's four
public tables:

- ``named rows`` (crag before the resource bounds): every row names every column
  ("date: 2014/02/14 | precipitation: 0.0 | temp_max: 11.7 | …"), one section a file;
- ``blocks`` (as shipped): rows in blocks of about 700 characters, each block one section
  opened by the header line (``crag_core.formats.extract.table_blocks``).

Each is ingested into a collection of its own with the real encoder; every single-row look-up
question of the tools benchmark (templates ``e-value``, ``u-month``, ``w-day``, ``w-kind``,
both splits: nothing is chosen here) is searched as the graph searches (hybrid, the default
``top_k``), and is a hit when a retrieved chunk has a line with the row's key and its gold value.

    .venv/bin/python -m benchmarks.measurements.table_text
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks import ROOT, write_results  # noqa: E402
from crag import ingest as ingestion  # noqa: E402
from crag.eval.tables import markdown_table  # noqa: E402
from crag_core.formats.extract import named_row  # noqa: E402
from crag_core.schema.context import Context  # noqa: E402

TABLES = [
    ROOT / "demo" / "tables" / "penguins.csv",
    *sorted((ROOT / "benchmarks" / "data" / "tools").glob("*.csv")),
]
LOOKUPS = ("e-value", "u-month", "w-day", "w-kind")
"""The tools benchmark's templates whose answer is one cell of one row."""


def named_rows(path: Path) -> str:
    """The file's rows as crag wrote them before: the header, then each row naming its cells."""
    rows = [[c.strip() for c in r] for r in csv.reader(path.open(encoding="utf-8")) if any(r)]
    header = rows[0]
    return "\n".join([" | ".join(header), *(named_row(header, r) for r in rows[1:])])


def row_key(question: str) -> list[str]:
    """What the row a look-up names holds, as the file writes it."""
    day = re.search(r"on (\w+ \d{1,2}, \d{4})", question)
    if day:
        return [dt.datetime.strptime(day.group(1), "%B %d, %Y").strftime("%Y/%m/%d")]
    month = re.search(r"in (\w+) (\d{4})\?", question)
    if month:
        when = dt.datetime.strptime(f"{month.group(1)} {month.group(2)}", "%B %Y")
        return [when.strftime("%Y-%m-01")]
    source = re.search(r"from (.+) in (\d{4})\?", question)
    if source:
        return [source.group(1), f"{source.group(2)}-01-01"]
    raise ValueError(f"no row key in {question!r}")


def _value(gold: object) -> str:
    text = str(gold)
    return text[:-2] if text.endswith(".0") else text


def hit(chunks: list[str], key: list[str], gold: object) -> bool:
    """Whether a chunk has a line holding the row's key and its gold value."""
    value = re.compile(rf"(?<![\d.]){re.escape(_value(gold))}(?:\.0)?(?![\d.])")
    return any(
        all(k in line for k in key) and value.search(line)
        for text in chunks
        for line in text.splitlines()
    )


def main() -> None:
    """Ingest both ways, search every look-up, print the table."""
    from crag_core.clients.embeddings import default_embeddings
    from crag_core.clients.knowledge_base import KnowledgeBase

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks")
    args = parser.parse_args()
    questions = [
        json.loads(line)
        for line in (ROOT / "benchmarks" / "data" / "tools" / "questions.jsonl").open()
        if json.loads(line)["template"] in LOOKUPS
    ]
    context = Context()
    encoder = default_embeddings()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        named = Path(folder) / "named"
        named.mkdir()
        for csv_file in TABLES:
            (named / f"{csv_file.stem}.txt").write_text(named_rows(csv_file), encoding="utf-8")
        sources = {"named rows": [str(named)], "blocks": [str(t) for t in TABLES]}
        for way, paths in sources.items():
            kb = KnowledgeBase(Path(folder) / "store", way.replace(" ", "-"), encoder)
            report = ingestion.ingest(kb, paths)
            by_template: dict[str, int] = dict.fromkeys(LOOKUPS, 0)
            for q in questions:
                docs = kb.search(q["question"], context.top_k, context.retrieval_mode)
                found = hit([d.page_content for d in docs], row_key(q["question"]), q["gold"])
                by_template[q["template"]] += found
            total = sum(by_template.values())
            rows.append(
                {
                    "way": way,
                    "chunks": report.chunks,
                    "questions": len(questions),
                    "hits": total,
                    "recall": f"{total / len(questions):.0%}",
                    **by_template,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    columns = [("way", "the text of a row")]
    columns += [("chunks", "chunks of the four tables"), ("questions", "look-ups")]
    columns += [("hits", f"gold row in the top {context.top_k}"), ("recall", "recall")]
    asked = {t: sum(q["template"] == t for q in questions) for t in LOOKUPS}
    columns += [(t, f"{t} (of {asked[t]})") for t in LOOKUPS]
    table = markdown_table(rows, columns)
    print(table)
    summary = (
        f"Single-row look-ups of the tools benchmark ({', '.join(LOOKUPS)}; both splits) by "
        f"retrieval ({context.retrieval_mode}, top {context.top_k}, MiniLM) over the four "
        "tables' text, each way in a collection of its own. `make bench-table-text`."
    )
    write_results(args.out, "table-text", summary, table, {"rows": rows})


if __name__ == "__main__":
    main()
