r"""Questions asked in a row about the same paragraph: what CRAG costs as a user asks.

    python -m benchmarks.measurements.cost_in_use build --squad SQUAD_DEV \\
        --mixed benchmarks/data/mixed-test.json.gz --out benchmarks/data/mixed-in-use.json.gz

In use, several questions follow each other over the same documents, and the model server's
prompt cache serves what a question shares with the one before it. The mixed benchmark's
splits draw one question per paragraph, so a question shares nothing with the one before it
but the system prompt. This set keeps the test split's knowledge base (so its collection is
reused) and asks, paragraph after paragraph, ``--per-paragraph`` SQuAD dev questions of one
paragraph in a row: of the first ``--paragraphs`` articles of the knowledge base (SQuAD's
order) with one, the first paragraph that has that many questions outside both splits. Every
answer is in the knowledge base (``in_kb``). ``crag eval --format mixed --dataset <it>
--pipeline naive,crag`` then runs naive RAG and CRAG on it interleaved, each with its own
model server (``make bench-cost-in-use``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any


def build(
    squad: dict[str, Any],
    mixed: dict[str, Any],
    taken: set[str],
    paragraphs: int,
    per_paragraph: int,
) -> dict[str, Any]:
    """The in-use set: ``mixed``'s knowledge base, questions grouped by paragraph."""
    in_kb = {text for article in mixed["kb"] for text in article["paragraphs"]}
    questions: list[dict[str, Any]] = []
    used = 0
    for article in squad["data"]:
        for paragraph in article["paragraphs"]:
            if used == paragraphs or paragraph["context"] not in in_kb:
                continue
            free = [q for q in paragraph["qas"] if q["id"] not in taken][:per_paragraph]
            if len(free) < per_paragraph:
                continue
            used += 1
            questions += [
                {
                    "id": q["id"],
                    "question": q["question"],
                    "answers": list(dict.fromkeys(a["text"] for a in q["answers"])),
                    "category": "in_kb",
                }
                for q in free
            ]
            break  # one paragraph of each article
    return {
        "description": (
            f"crag in-use cost set: {per_paragraph} questions in a row about each of {used} "
            "paragraphs of the mixed test split's knowledge base, from SQuAD v1.1 dev "
            "(CC BY-SA 4.0); built by benchmarks/measurements/cost_in_use.py"
        ),
        "articles": mixed["articles"],
        "kb": mixed["kb"],
        "questions": questions,
    }


def main(argv: list[str] | None = None) -> int:
    """``build``: write the in-use set; 2 when the knowledge base has too few paragraphs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["build"])
    parser.add_argument("--squad", type=Path, required=True)
    parser.add_argument("--mixed", type=Path, required=True, help="the test split's file")
    parser.add_argument("--calibration", type=Path, help="its questions are left out too")
    parser.add_argument("--paragraphs", type=int, default=6)
    parser.add_argument("--per-paragraph", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    def read(path: Path) -> dict[str, Any]:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return dict(json.load(f))

    mixed = read(args.mixed)
    taken = {q["id"] for q in mixed["questions"]}
    if args.calibration:
        taken |= {q["id"] for q in read(args.calibration)["questions"]}
    made = build(read(args.squad), mixed, taken, args.paragraphs, args.per_paragraph)
    if len(made["questions"]) < args.paragraphs * args.per_paragraph:
        print(
            "The knowledge base has too few paragraphs with that many questions.", file=sys.stderr
        )
        return 2
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        json.dump(made, f, ensure_ascii=False)
    print(f"{len(made['questions'])} questions -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
