"""Every input of CRAG's decisions, per question, so decision rules can be compared offline.

For each question of a mixed-format file (the calibration split: rules are chosen there, never
on the test split), the graph's own nodes compute, with the configured model:

- ``kb``: the knowledge-base chunks ``retrieve`` keeps for the question;
- ``web``: the web results for the question, refined (CRAG's "incorrect" evidence);
- ``union``: both together (CRAG's "ambiguous" evidence);

and for each of the three: the retrieval evaluator's score, the answer ``generate`` writes
from it (after ``validate_citations``' correction, as in the graph; citation markers removed),
whether a document holds it word for word, its F1 against the gold answers, the grounding
check's verdict, and the answer check's score (asked even where ``answer_threshold`` turns
the check off, so its threshold can be chosen too). The calls of one evidence set share its
evidence message, and ``union`` starts with the ``kb`` documents, so the model server reads
most of it from its prompt cache. One record per question goes to ``OUT/probe.jsonl`` as soon
as it exists (a rerun resumes); ``benchmarks.calibration.decisions`` replays decision rules on them.

``--no-floor`` probes the knowledge base as naive RAG retrieves it (no similarity floor), so
the replay can price the floor; with ``--reuse`` a question whose chunks the floor did not
change is copied from an earlier probe, and every other question reuses its ``web`` part (the
floor cannot change it) and probes only ``kb`` and ``union``.

    .venv/bin/python -m benchmarks.calibration.evidence_probe \
        benchmarks/data/mixed-calibration.json.gz \
        --out out/probe
    .venv/bin/python -m benchmarks.calibration.evidence_probe \
        benchmarks/data/mixed-calibration.json.gz \
        --no-floor --reuse docs/benchmarks/mixed/calibration-probe.jsonl --out out/probe-nofloor
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime

import graph.factory
from crag.eval.harness import collection_for, prepare
from crag.eval.metrics import best, f1
from crag.eval.mixed import load_mixed
from crag.eval.records import append_record, done_ids, read_records
from crag.eval.squad import Question
from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.answer_text import is_no_answer
from crag_core.text.citations import strip_citations
from crag_core.text.documents import containing, dedupe, doc_id
from nodes.correction import (
    check_hallucination,
    generate,
    grade_documents,
    refine_knowledge,
    retrieve,
    validate_citations,
    web_search,
)
from nodes.shared.prompting import score_on_evidence

EVIDENCE = ("kb", "union", "web")
"""In this order, so ``union`` finds the ``kb`` documents in the prompt cache."""


def evaluate(
    question: Question,
    docs: list[Document],
    web: list[Document],
    runtime: Runtime[Context],
    services: Services,
) -> float | None:
    """The evaluator's score of ``docs`` + ``web`` (``None``: nothing to score)."""
    state: PassState = {"question": question.question}
    if web:  # scored as after a web search: the kept documents plus the web results
        state |= {"web_searched": True, "relevant_documents": docs, "web_results": web}
        return grade_documents(state, runtime, services).get("evidence_score")
    state["documents"] = docs
    return grade_documents(state, runtime, services).get("retrieval_score")


def answer(
    question: Question, evidence: list[Document], runtime: Runtime[Context], services: Services
) -> dict[str, Any]:
    """Generate from ``evidence`` as the graph does (citation correction included), then check.

    The answer check is asked even where ``answer_threshold`` turns it off.
    """
    state: PassState = {"question": question.question, "relevant_documents": evidence}
    first = generate(state, runtime, services)["generation"]
    checked = validate_citations({**state, "generation": first}, runtime)
    if checked.get("citation_feedback"):
        state |= {
            "citation_feedback": checked["citation_feedback"],
            "citation_corrections": checked.get("citation_corrections", 1),
        }
        raw = generate(state, runtime, services)["generation"]
        checked = validate_citations({**state, "generation": raw}, runtime)
    return {
        "first_answer": strip_citations(first),
        **checks(question, state, checked, runtime, services),
    }


def checks(
    question: Question,
    state: PassState,
    checked: PassUpdate,
    runtime: Runtime[Context],
    services: Services,
) -> dict[str, Any]:
    """The final answer of ``checked`` (validate_citations' update), scored and checked."""
    final = checked.get("generation", "")
    evidence = list(state.get("relevant_documents") or [])
    state = {**state, "generation": final}
    grounded = check_hallucination(state, runtime, services)
    answer_score = None
    if not is_no_answer(final):
        ctx = context_of(runtime)
        answer_score, _ = score_on_evidence(
            state, ctx, services.judge, "check_relevance", evidence, answer=final
        )
    return {
        "answer": final,
        "abstained": is_no_answer(final),
        "copied": bool(containing(final, evidence)),
        "f1": best(f1, final, question.answers) if question.answers else None,
        "grounded": grounded.get("grounded"),
        "grounding_score": grounded.get("grounding_score"),
        "answer_score": None if answer_score is None else round(answer_score, 4),
    }


def judge(
    question: Question,
    docs: list[Document],
    web: list[Document],
    runtime: Runtime[Context],
    services: Services,
) -> dict[str, Any]:
    """Score ``docs`` + ``web`` as the evaluator does, answer from them, check the answer."""
    evidence = dedupe([*docs, *web])
    return {
        "ids": [doc_id(d) for d in evidence],
        "gold_in": bool(question.answers)
        and any(containing(a, evidence) for a in question.answers),
        "score": evaluate(question, docs, web, runtime, services),
        **answer(question, evidence, runtime, services),
    }


def probe(
    question: Question, ctx: Context, services: Services, earlier: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The record of one question: its three evidence sets, each scored, answered, checked.

    ``earlier`` (the question's record from another probe) is returned as it is when its
    knowledge-base chunks are the ones retrieved now; otherwise its ``web`` part is kept.
    """
    runtime = Runtime(context=ctx)
    state: PassState = {"question": question.question}
    started = time.perf_counter()
    kb = list(retrieve(state, runtime, services).get("documents") or [])
    if earlier is not None and earlier["kb"]["ids"] == [doc_id(d) for d in kb]:
        return earlier
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
        if name == "web" and earlier is not None:
            record[name] = earlier[name]
        else:
            record[name] = judge(question, docs, extra, runtime, services)
    record["seconds"] = round(time.perf_counter() - started, 2)
    return record


def run(
    dataset_path: Path,
    out: Path,
    on_record: Any = None,
    *,
    floor: bool = True,
    reuse: Path | None = None,
) -> Path:
    """Probe every question of ``dataset_path`` not probed yet into ``out/probe.jsonl``.

    ``floor=False`` retrieves without the similarity floor; ``reuse`` is an earlier probe
    whose records are copied where the chunks are the same (see ``probe``).
    """
    dataset = load_mixed(dataset_path)
    ctx = Context(collection=collection_for(dataset), answer_cache=False)
    if not floor:
        ctx = replace(ctx, min_similarity=0.0, keyword_min_similarity=0.0)
    earlier = {r["id"]: r for r in read_records(reuse)} if reuse else {}
    prepare(dataset, ctx, None)
    services = graph.factory.default_services(ctx)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "probe.jsonl"
    done = done_ids(path)
    for question in dataset.questions:
        if question.id in done:
            continue
        record = probe(question, ctx, services, earlier.get(question.id))
        append_record(path, record)
        if on_record:
            on_record(record)
    return path


def main() -> None:
    """Probe every question not probed yet; print one line per question."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="a mixed-format file (the calibration split)")
    parser.add_argument("--out", type=Path, default=Path("out/probe"))
    parser.add_argument(
        "--no-floor", action="store_true", help="retrieve as naive RAG does: no similarity floor"
    )
    parser.add_argument("--reuse", type=Path, help="an earlier probe.jsonl to copy from")
    args = parser.parse_args()

    def show(record: dict[str, Any]) -> None:
        scores = " ".join(f"{n}={record[n]['score']}" for n in EVIDENCE)
        print(f"{record['id']} {record['category']} {scores} {record['seconds']}s", file=sys.stderr)

    run(args.dataset, args.out, show, floor=not args.no_floor, reuse=args.reuse)


if __name__ == "__main__":
    main()
