"""Every input of CRAG's decisions, per question, so decision rules can be compared offline.

For each question of a mixed-format file (the calibration split: rules are chosen there, never
on the test split), the graph's own nodes compute, with the configured model:

- ``kb``: the knowledge-base chunks ``retrieve`` keeps for the question;
- ``web``: the web results for the question, refined (CRAG's "incorrect" evidence);
- ``union``: both together (CRAG's "ambiguous" evidence);

and for each of the three: the retrieval evaluator's score, the answer ``generate`` writes
from it (citation markers removed), that answer's F1 against the gold answers, the grounding
check's verdict, and the answer check's score (asked even where ``answer_threshold`` turns
the check off, so its threshold can be chosen too). The calls of one evidence set share its
evidence message, and ``union`` starts with the ``kb`` documents, so the model server reads
most of it from its prompt cache. One record per question goes to ``OUT/probe.jsonl`` as soon
as it exists (a rerun resumes); ``benchmarks.decisions`` replays decision rules on them.

    .venv/bin/python -m benchmarks.evidence_probe benchmarks/data/mixed-calibration.json.gz \
        --out out/probe
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime

import graph.services
from adapters.citations import strip_citations
from adapters.documents import containing, dedupe, doc_id
from adapters.services import Services
from crag.eval.harness import collection_for, prepare
from crag.eval.metrics import best, f1
from crag.eval.mixed import load_mixed
from crag.eval.records import done_ids
from crag.eval.squad import Question
from nodes import (
    check_hallucination,
    generate,
    grade_documents,
    refine_knowledge,
    retrieve,
    web_search,
)
from nodes.answers import is_no_answer
from nodes.prompting import score_on_evidence
from schema.context import Context, context_of
from schema.state import RAGState

EVIDENCE = ("kb", "union", "web")
"""In this order, so ``union`` finds the ``kb`` documents in the prompt cache."""


def judge(
    question: Question,
    docs: list[Document],
    web: list[Document],
    runtime: Runtime[Context],
    services: Services,
) -> dict[str, Any]:
    """Score ``docs`` + ``web`` as the evaluator does, answer from them, check the answer."""
    evidence = dedupe([*docs, *web])
    state: RAGState = {"question": question.question}
    if web:  # scored as after a web search: the kept documents plus the web results
        graded = grade_documents(
            {**state, "web_searched": True, "relevant_documents": docs, "web_results": web},
            runtime,
            services,
        )
        score = graded.get("evidence_score")
    else:
        graded = grade_documents({**state, "documents": docs}, runtime, services)
        score = graded.get("retrieval_score")
    answered = {**state, "relevant_documents": evidence}
    raw = generate(answered, runtime, services)["generation"] if evidence else ""
    answer = strip_citations(raw)
    grounded = check_hallucination({**answered, "generation": answer}, runtime, services)
    answer_score = None
    if not is_no_answer(answer):
        ctx = context_of(runtime)
        answer_score, _ = score_on_evidence(
            answered, ctx, services.judge, "check_relevance", evidence, answer=answer
        )
    return {
        "ids": [doc_id(d) for d in evidence],
        "gold_in": bool(question.answers)
        and any(containing(a, evidence) for a in question.answers),
        "score": score,
        "answer": answer,
        "abstained": is_no_answer(answer),
        "f1": best(f1, answer, question.answers) if question.answers else None,
        "grounded": grounded.get("grounded"),
        "grounding_score": grounded.get("grounding_score"),
        "answer_score": None if answer_score is None else round(answer_score, 4),
    }


def probe(question: Question, ctx: Context, services: Services) -> dict[str, Any]:
    """The record of one question: its three evidence sets, each scored, answered, checked."""
    runtime = Runtime(context=ctx)
    state: RAGState = {"question": question.question}
    started = time.perf_counter()
    kb = list(retrieve(state, runtime, services).get("documents") or [])
    searched = web_search(state, runtime, services)
    refined = refine_knowledge({**state, **searched}, runtime, services)
    web = list(refined.get("web_results", searched.get("web_results")) or [])
    parts = {"kb": (kb, []), "union": (kb, web), "web": ([], web)}
    record: dict[str, Any] = {
        "id": question.id,
        "category": question.category,
        "question": question.question,
        "gold_answers": list(question.answers),
    }
    for name in EVIDENCE:
        docs, extra = parts[name]
        record[name] = judge(question, docs, extra, runtime, services)
    record["seconds"] = round(time.perf_counter() - started, 2)
    return record


def run(dataset_path: Path, out: Path, on_record: Any = None) -> Path:
    """Probe every question of ``dataset_path`` not probed yet into ``out/probe.jsonl``."""
    dataset = load_mixed(dataset_path)
    ctx = Context(collection=collection_for(dataset), answer_cache=False)
    prepare(dataset, ctx, None)
    services = graph.services.default_services(ctx)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "probe.jsonl"
    done = done_ids(path)
    for question in dataset.questions:
        if question.id in done:
            continue
        record = probe(question, ctx, services)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        if on_record:
            on_record(record)
    return path


def main() -> None:
    """Probe every question not probed yet; print one line per question."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="a mixed-format file (the calibration split)")
    parser.add_argument("--out", type=Path, default=Path("out/probe"))
    args = parser.parse_args()

    def show(record: dict[str, Any]) -> None:
        scores = " ".join(f"{n}={record[n]['score']}" for n in EVIDENCE)
        print(f"{record['id']} {record['category']} {scores} {record['seconds']}s", file=sys.stderr)

    run(args.dataset, args.out, show)


if __name__ == "__main__":
    main()
