"""Document-grader benchmark (embedded model): does the grader keep answers and drop distractors?

The grader decides what the generator may read, so a chunk it wrongly rejects is an answer
lost, and a distractor it wrongly keeps is noise in the context. This measures both on SQuAD
with the real model and the graph's own grading call (``nodes.grade_documents``), one prompt
version or candidate at a time:

- for each sampled question, hybrid retrieval for the question (``top_k``, as ``retrieve``
  does) gives the chunks the grader would see;
- positive: the best retrieved chunk of the gold paragraph that contains a gold answer
  (expected "yes");
- hard negative: the best retrieved chunk of another paragraph that contains no gold answer
  (expected "no").

The questions are drawn with a different seed from ``make eval``'s, so a prompt is not chosen
on the questions it is then evaluated on.

    .venv/bin/python -m benchmarks.grader --dataset ../shared/data/squad-v1.1-dev.json.gz
        [--prompt v1] [--prompt benchmarks/candidates/grade_documents-implied.md ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402

import prompts  # noqa: E402
from benchmarks import write_results  # noqa: E402
from crag.documents import containing  # noqa: E402
from crag.eval import harness  # noqa: E402
from crag.eval.corpus import paragraph_of  # noqa: E402
from crag.eval.squad import Question, load_squad  # noqa: E402
from crag.llm import judge  # noqa: E402
from graph.context import Context  # noqa: E402
from nodes.grade_documents import DocumentGrade, grade_inputs  # noqa: E402

NAME = "grade_documents"


@dataclass
class Case:
    """One chunk shown to the grader, with the verdict it should get."""

    question: Question
    doc: Document
    expected: str


def contains_answer(doc: Document, answers: tuple[str, ...]) -> bool:
    """Whether ``doc`` contains one of ``answers`` as whole words, once normalised.

    All punctuation becomes a word break, e.g. the dash in "(1919–1980)".
    """
    return any(containing(answer, [doc]) for answer in answers)


def cases_for(question: Question, retrieved: list[Document]) -> list[Case]:
    """The positive and the hard negative among ``retrieved`` (either may be missing)."""
    out: list[Case] = []
    positive = next(
        (
            d
            for d in retrieved
            if paragraph_of(d.metadata["id"]) == question.paragraph_id
            and contains_answer(d, question.answers)
        ),
        None,
    )
    negative = next(
        (
            d
            for d in retrieved
            if paragraph_of(d.metadata["id"]) != question.paragraph_id
            and not contains_answer(d, question.answers)
        ),
        None,
    )
    for d, expected in ((positive, "yes"), (negative, "no")):
        if d is not None:
            out.append(Case(question, d, expected))
    return out


def prompt_for(spec: str) -> prompts.Prompt:
    """A product version (``v1``) or a candidate prompt file (``path/to/name.md``)."""
    if spec.endswith(".md"):
        path = Path(spec)
        return prompts.load_file(path, NAME, path.stem)
    return prompts.load(NAME, spec)


def grade(llm: BaseChatModel, prompt: prompts.Prompt, case: Case) -> str:
    """The grader's verdict: yes, no, or unparsable."""
    rendered = prompt.render(**grade_inputs(case.doc, case.question.question))
    result = judge(llm, rendered, DocumentGrade)
    return "unparsable" if result is None else result.contains_answer


def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=80, help="questions sampled")
    parser.add_argument("--seed", type=int, default=1, help="not make eval's seed (0)")
    parser.add_argument(
        "--prompt",
        action="append",
        help="prompt version (v1) or candidate file; repeatable (default: the latest version)",
    )
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args()
    specs = args.prompt or [prompts.versions(NAME)[-1]]
    candidates = [(Path(spec).stem, prompt_for(spec)) for spec in specs]

    from crag.services import services_for

    dataset = load_squad(args.dataset)
    ctx = Context(collection=harness.collection_for(args.dataset))
    started = time.perf_counter()
    harness.prepare(dataset, ctx, None)
    print(f"knowledge base ready in {time.perf_counter() - started:.0f}s")
    services = services_for(ctx)
    questions = dataset.sample(args.limit, args.seed)
    cases = [
        c for q in questions for c in cases_for(q, services.retriever.search(q.question, ctx.top_k))
    ]
    positives = sum(c.expected == "yes" for c in cases)
    print(f"{len(questions)} questions: {positives} positives, {len(cases) - positives} negatives")

    results = []
    for spec, prompt in candidates:
        started = time.perf_counter()
        verdicts = []
        for i, case in enumerate(cases, start=1):
            verdicts.append(grade(services.llm, prompt, case))
            print(f"\r{spec}: {i}/{len(cases)}", end="", flush=True, file=sys.stderr)
        seconds = time.perf_counter() - started
        pos = [v for v, c in zip(verdicts, cases, strict=True) if c.expected == "yes"]
        neg = [v for v, c in zip(verdicts, cases, strict=True) if c.expected == "no"]
        results.append(
            {
                "prompt": spec,
                "answers_kept": sum(v != "no" for v in pos) / len(pos),
                "distractors_dropped": sum(v == "no" for v in neg) / len(neg),
                "unparsable": verdicts.count("unparsable"),
                "seconds_per_call": seconds / len(cases),
                "lost_answers": [
                    {
                        "id": c.question.id,
                        "question": c.question.question,
                        "chunk": c.doc.metadata["id"],
                    }
                    for v, c in zip(verdicts, cases, strict=True)
                    if c.expected == "yes" and v == "no"
                ],
            }
        )
        print(file=sys.stderr)

    rows = [
        "| prompt | answer chunks kept | distractors dropped | unparsable | s / call |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        rows.append(
            f"| {r['prompt']} | {r['answers_kept']:.3f} | {r['distractors_dropped']:.3f} "
            f"| {r['unparsable']} | {r['seconds_per_call']:.1f} |"
        )
    table = "\n".join(rows)
    summary = (
        f"SQuAD v1.1 dev, {len(questions)} questions (seed {args.seed}), hybrid top {ctx.top_k}: "
        f"{positives} answer-bearing gold chunks, {len(cases) - positives} hard negatives; "
        f"model {ctx.model}."
    )
    print(f"\n{summary}\n\n{table}")
    write_results(
        args.out,
        "grader",
        summary,
        table,
        {
            "dataset": args.dataset.name,
            "questions": len(questions),
            "seed": args.seed,
            "positives": positives,
            "negatives": len(cases) - positives,
            "results": results,
        },
    )


if __name__ == "__main__":
    main()
