"""Whole answers, replayed: what ``whole_answer`` does to the answers of recorded runs.

Each record keeps its answer, the sources it cites and the text of its evidence, so the rule
can be applied to the answers as given, with no model: an answer grown ("24" -> "24–10") is
judged again against the accepted answers. Reports, per run: answers grown, and how their
verdicts moved (wrong -> right is a cut-short answer made whole; right -> wrong one spoilt),
how many answers are longer than 25 words before and after, and how many are cut short (a
proper part of an accepted answer, ``crag.eval.metrics.cut_short``) before and after.

    .venv/bin/python -m benchmarks.measurements.whole_answers RUN/crag.predictions.jsonl ...
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from crag.eval.metrics import SHORT_ANSWER_WORDS, cut_short, record_verdict
from crag.eval.tables import markdown_table
from crag_core.text.answer_text import answer_only, is_no_answer
from crag_core.text.whole_answer import whole_answer


def grown(record: dict[str, Any]) -> str:
    """The record's answer as ``whole_answer`` gives it from its cited evidence."""
    answer = answer_only(record["prediction"])
    if is_no_answer(answer):
        return str(record["prediction"])
    texts = {e["id"]: e["text"] for e in record.get("evidence") or []}
    cited = [s["id"] for s in record.get("sources") or [] if s.get("id") in texts]
    order = cited + [i for i in texts if i not in cited]
    docs = [Document(page_content=texts[i]) for i in order]
    return whole_answer(answer, docs) + str(record["prediction"])[len(answer) :]


def replay(path: Path) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The counts for one predictions file, and each answer that grew."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    moves: Counter[str] = Counter()
    changed = []
    long_before = long_after = short_before = short_after = 0
    for record in records:
        after = grown(record)
        golds = record.get("gold_answers") or []
        short_before += cut_short(answer_only(record["prediction"]), golds)
        short_after += cut_short(answer_only(after), golds)
        long_before += len(answer_only(record["prediction"]).split()) > SHORT_ANSWER_WORDS
        long_after += len(answer_only(after).split()) > SHORT_ANSWER_WORDS
        if after == record["prediction"]:
            continue
        before_verdict = record_verdict(record)
        after_verdict = record_verdict(record | {"prediction": after})
        moves[f"{before_verdict} -> {after_verdict}"] += 1
        changed.append(
            {
                "question": record["question"],
                "before": record["prediction"],
                "after": after,
                "gold": " | ".join(record.get("gold_answers") or []) or "(none)",
                "verdict": f"{before_verdict} -> {after_verdict}",
            }
        )
    row = {
        "run": f"{path.parent.name}/{path.stem.split('.')[0]}",
        "questions": len(records),
        "grown": len(changed),
        "wrong_to_right": moves["wrong -> right"],
        "right_to_wrong": moves["right -> wrong"],
        "unchanged_verdict": sum(
            n for k, n in moves.items() if k.split(" -> ")[0] == k.split(" -> ")[1]
        ),
        "long_before": long_before,
        "long_after": long_after,
        "short_before": short_before,
        "short_after": short_after,
    }
    return row, changed


def main() -> None:
    """Replay every predictions file named; print (and write) the counts and the changes."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("predictions", type=Path, nargs="+")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows, examples = [], []
    for path in args.predictions:
        row, changed = replay(path)
        rows.append(row)
        examples += [c | {"run": row["run"]} for c in changed]
    table = markdown_table(
        rows,
        [
            ("run", "run"),
            ("questions", "questions"),
            ("grown", "answers grown"),
            ("wrong_to_right", "wrong → right"),
            ("right_to_wrong", "right → wrong"),
            ("unchanged_verdict", "verdict unchanged"),
            ("long_before", "> 25 words before"),
            ("long_after", "> 25 words after"),
            ("short_before", "cut short before"),
            ("short_after", "cut short after"),
        ],
    )
    detail = markdown_table(
        examples,
        [
            ("run", "run"),
            ("question", "question"),
            ("before", "answer"),
            ("after", "grown"),
            ("gold", "accepted"),
            ("verdict", "verdict"),
        ],
    )
    print(table)
    print()
    print(detail)
    if args.out:
        args.out.write_text(table + "\n\n" + detail + "\n")


if __name__ == "__main__":
    main()
