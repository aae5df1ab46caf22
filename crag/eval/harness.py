"""The evaluation harness behind ``crag eval``: run SQuAD questions through a pipeline.

Pipelines share the model, the retriever and the knowledge base:

- ``crag``: the whole graph (rewrite, retrieve, grade, web fallback, refine, generate,
  citations, checks, bounded retries);
- ``naive``: one retrieval (the same hybrid retriever, ``top_k``) and one generation with the
  same generate prompt.

Each question's record is appended to ``predictions.jsonl`` as soon as it is answered, so a
rerun skips what is done (resumable). ``summarize`` turns the records into ``summary.json``
and ``summary.md``; ``compare`` puts several runs side by side (Markdown table and PNG).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableLambda

from crag.eval import report
from crag.eval.corpus import index_paragraphs, paragraph_of
from crag.eval.metrics import best, exact_match, f1, percentile, verdict, verdicts
from crag.eval.records import append_record, done_ids, read_records
from crag.eval.squad import Dataset, Question
from crag.eval.tables import cell, markdown_table
from crag.run import RunResult, run_question
from crag_core.clients import usage
from crag_core.schema.context import Context
from crag_core.schema.state import PassState, scope_of, tool_of
from crag_core.text.answer_text import is_no_answer
from crag_core.text.documents import containing, doc_id
from graph.naive import naive_context
from nodes.shared.confidence import signals
from nodes.tools.agent import tried

PIPELINES = ("crag", "naive")
BUNDLED_SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "squad-dev-sample.json.gz"


class UsageCounter(BaseCallbackHandler):
    """Counts LLM calls and their prompt/completion tokens (as the server reports them)."""

    def __init__(self) -> None:
        self.calls = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.completion_tokens = 0

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        """Record one finished LLM call (streamed or not: the reply's usage metadata)."""
        self.calls += 1
        message = getattr(response.generations[0][0], "message", None)
        counts = usage.usage_of(message)
        self.prompt_tokens += counts["prompt_tokens"]
        self.completion_tokens += counts["completion_tokens"]
        self.cached_tokens += counts["cached_tokens"]


def collection_for(dataset: Dataset) -> str:
    """The collection a dataset's paragraphs go into, named after them.

    So it is reused, also by another file with the same knowledge base (such as the mixed
    benchmark's two splits).
    """
    digest = hashlib.sha1()
    for p in dataset.paragraphs:
        digest.update(f"{p.id}\n{p.text}\n".encode())
    return f"eval-{digest.hexdigest()[:10]}"


def prepare(dataset: Dataset, ctx: Context, on_progress: Callable[[int, int], None] | None) -> int:
    """Index the dataset's paragraphs into ``ctx.collection`` (idempotent); paragraphs written."""
    from graph.factory import knowledge_base

    return index_paragraphs(knowledge_base(ctx.collection), dataset, on_progress)


def sources_with_text(result: RunResult) -> list[dict[str, str]]:
    """The run's cited sources, each with the text of the chunk or web result it names.

    A table answer's source keeps its SQL.
    """
    texts: dict[str, str] = {}
    for step in result.steps:
        for key in ("documents", "relevant_documents", "web_results"):
            for d in step.update.get(key) or []:
                texts.setdefault(doc_id(d), d.page_content)
    return [
        {"id": s["id"], "source": s["source"], "text": texts.get(s["id"], "")}
        | ({"sql": s["sql"]} if s.get("sql") else {})
        for s in result.state.get("sources") or []
    ]


def evidence_of(result: RunResult) -> list[dict[str, str]]:
    """The documents the final answer was generated from (id, source, text), in prompt order.

    The last pass's accepted evidence (every retrieved chunk for naive RAG, which grades none).
    """
    docs: list[Document] = []
    for step in result.steps:
        if step.node.startswith("part "):
            continue
        graded = step.update.get("relevant_documents")
        if graded is not None:
            docs = list(graded)
        elif step.node == "retrieve":
            docs = list(step.update.get("documents") or [])
    return [
        {"id": doc_id(d), "source": str(d.metadata.get("source", "")), "text": d.page_content}
        for d in docs
    ]


SCORES = (
    "light_score",
    "retrieval_score",
    "evidence_light_score",
    "evidence_score",
    "grounding_score",
    "answer_score",
)
"""The pass's scores a record keeps (None: not asked)."""


def outcome(result: RunResult) -> dict[str, Any]:
    """What a record keeps of a run: its answer and sources, and how it got there.

    The answer is the turn's; what the pass measured (its scores, queries, the answer held
    back) is the question's pass's (naive RAG's graph is one pass: its state).
    """
    state = result.state
    measured = result.pass_state or state
    retrieved = [doc_id(d) for s in result.steps for d in s.update.get("documents") or []]
    scores: dict[str, float | None] = dict.fromkeys(SCORES)
    for step in result.steps:  # each score as first given (the first pass's)
        for key in SCORES:  # (a pass's start resets each to None: not a score given)
            if scores[key] is None and step.update.get(key) is not None:
                scores[key] = step.update[key]
    prediction = state.get("answer", "")
    withheld = measured.get("withheld") or {}
    return {
        "prediction": prediction,
        "tool": tool_of(state),
        "plan": state.get("plan"),
        "tried": tried([m for s in result.steps for m in s.update.get("loop_messages") or []]),
        "cost": state.get("cost") or [],
        "first_token_s": result.first_token_s,
        "confidence": state.get("confidence"),
        "answer_kind": state.get("answer_kind", ""),
        "tool_signals": state.get("tool_signals", {}),
        "withheld": withheld.get("answer"),
        "withheld_confidence": withheld.get("confidence"),
        "signals": signals(cast(PassState, measured), withheld.get("answer") or prediction),
        "abstained": is_no_answer(prediction),
        "sources": sources_with_text(result),
        "evidence": evidence_of(result),
        "retrieved": list(dict.fromkeys(retrieved)),
        "queries": measured.get("queries", []),
        "rejected_chunk_ids": measured.get("rejected_chunks", []),
        "path": result.path,
        "route": state.get("route", "single"),
        "where": scope_of(state),
        "retries": state.get("retry_count", 0),
        "web_search_used": bool(state.get("web_search_used")),
        "kb_fallback": bool(measured.get("kb_fallback")),
        "cache_hit": bool(measured.get("cache_hit")),
        "warnings": state.get("warnings", []),
        "prompt_versions": state.get("prompt_versions", {}),
        **scores,
    }


def answer_naive(question: str, ctx: Context) -> dict[str, Any]:
    """The baseline: one retrieval, one generation (``graph.naive``, the same nodes)."""
    from graph.naive import build_naive_graph

    graph = build_naive_graph()
    return outcome(run_question(question, naive_context(ctx), graph=graph, on_token=_untimed))


def answer_crag(question: str, ctx: Context) -> dict[str, Any]:
    """The whole CRAG graph."""
    return outcome(run_question(question, ctx, on_token=_untimed))


def _untimed(_text: str) -> None:
    """Drop the answer's streamed tokens.

    The run streams only so its first token is timed as a user sees it (``first_token_s``).
    """


def run_one(pipeline: str, q: Question, ctx: Context) -> dict[str, Any]:
    """Answer ``q`` with ``pipeline`` and score it; one predictions.jsonl record."""
    answer = answer_crag if pipeline == "crag" else answer_naive
    counter = UsageCounter()
    started = time.perf_counter()
    # Run under a runnable whose config carries the counter: every LLM call inside inherits it.
    run: RunnableLambda[str, dict[str, Any]] = RunnableLambda(
        lambda question: answer(question, ctx), name=pipeline
    )
    out = run.invoke(q.question, config={"callbacks": [counter], "run_name": f"eval:{pipeline}"})
    latency = time.perf_counter() - started
    prediction = out.pop("prediction")
    answerable = q.category != "unanswerable"
    return {
        "id": q.id,
        "category": q.category,
        "question": q.question,
        "prediction": prediction,
        "gold_answers": list(q.answers),
        "exact_match": best(exact_match, prediction, q.answers) if answerable else None,
        "f1": best(f1, prediction, q.answers) if answerable else None,
        "verdict": verdict(prediction, q.answers, answerable),
        "gold_paragraph": q.paragraph_id,
        "retrieval_hit": q.paragraph_id in {paragraph_of(c) for c in out["retrieved"]},
        "retrieved_chunk_ids": out.pop("retrieved"),
        "citation_ok": cites_its_answer(prediction, out["sources"]),
        **out,
        "llm_calls": counter.calls,
        "prompt_tokens": counter.prompt_tokens,
        "cached_prompt_tokens": counter.cached_tokens,
        "completion_tokens": counter.completion_tokens,
        "latency_s": round(latency, 3),
    }


def cites_its_answer(prediction: str, sources: list[dict[str, str]]) -> bool | None:
    """Whether a cited source holds the answer word for word; ``None`` when nothing is cited."""
    if is_no_answer(prediction) or not sources:
        return None
    docs = [Document(page_content=s.get("text", "")) for s in sources]
    return bool(containing(prediction, docs))


@dataclass
class EvalRun:
    """One ``crag eval`` invocation."""

    pipeline: str
    questions: list[Question]
    ctx: Context
    out: Path
    mixed: bool = False
    """The mixed format: summaries per category (``crag.eval.report``)."""

    @property
    def predictions(self) -> Path:
        """The JSONL file of per-question records."""
        return self.out / "predictions.jsonl"

    def pending(self) -> list[Question]:
        """Questions not answered yet."""
        done = done_ids(self.predictions)
        return [q for q in self.questions if q.id not in done]

    def run(self, on_done: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Answer every pending question, appending each record as soon as it exists."""
        self.out.mkdir(parents=True, exist_ok=True)
        for q in self.pending():
            record = run_one(self.pipeline, q, self.ctx)
            append_record(self.predictions, record)
            if on_done:
                on_done(record)


def summarize(
    records: Iterable[dict[str, Any]], pipeline: str, model: str, run: str | None = None
) -> dict[str, Any]:
    """Aggregate records: EM/F1 (x100), retrieval hit rate, latency, LLM calls and tokens.

    ``run`` names the run in tables (its directory name); it defaults to the pipeline.
    """
    rows = list(records)
    n = len(rows) or 1

    def mean(key: str) -> float:
        return sum(float(r[key]) for r in rows) / n

    latencies = [float(r["latency_s"]) for r in rows]
    firsts = [float(r["first_token_s"]) for r in rows if r.get("first_token_s") is not None]
    return {
        "run": run or pipeline,
        "pipeline": pipeline,
        "model": model,
        "questions": len(rows),
        **verdicts(rows),
        "exact_match": round(100 * mean("exact_match"), 1),
        "f1": round(100 * mean("f1"), 1),
        "retrieval_hit_rate": round(100 * mean("retrieval_hit"), 1),
        "latency_p50_s": round(percentile(latencies, 50), 1),
        "latency_p95_s": round(percentile(latencies, 95), 1),
        "first_token_p50_s": round(percentile(firsts, 50), 1) if firsts else None,
        "llm_calls_per_question": round(mean("llm_calls"), 2),
        "prompt_tokens_per_question": round(mean("prompt_tokens")),
        "cached_prompt_tokens_per_question": round(
            sum(float(r.get("cached_prompt_tokens", 0)) for r in rows) / n
        ),
        "completion_tokens_per_question": round(mean("completion_tokens")),
        "web_search_rate": round(100 * mean("web_search_used"), 1),
        "retries_per_question": round(mean("retries"), 2),
        "cache_hit_rate": round(100 * sum(bool(r.get("cache_hit")) for r in rows) / n, 1),
    }


COLUMNS = [
    ("run", "run"),
    ("pipeline", "pipeline"),
    ("questions", "questions"),
    *report.VERDICT_COLUMNS,
    ("exact_match", "EM"),
    ("f1", "F1"),
    ("retrieval_hit_rate", "retrieval hit %"),
    ("latency_p50_s", "latency p50 s"),
    ("latency_p95_s", "latency p95 s"),
    ("first_token_p50_s", "first token p50 s"),
    ("llm_calls_per_question", "LLM calls / q"),
    ("prompt_tokens_per_question", "prompt tokens / q"),
    ("cached_prompt_tokens_per_question", "of which cached"),
    ("completion_tokens_per_question", "completion tokens / q"),
    ("web_search_rate", "web search %"),
    ("retries_per_question", "retries / q"),
    ("cache_hit_rate", "cache hits %"),
]


def differences(
    base: list[dict[str, Any]], other: list[dict[str, Any]], names: tuple[str, str]
) -> str:
    """Per-question F1 of ``other`` against ``base`` on their common questions, as Markdown.

    A heading with the wins, losses and ties of ``other``, then every question whose F1
    differs, largest gain first.
    """
    by_id = {r["id"]: r for r in base}
    pairs = [(by_id[r["id"]], r) for r in other if r["id"] in by_id]
    changed = sorted(
        (p for p in pairs if p[1]["f1"] != p[0]["f1"]), key=lambda p: p[0]["f1"] - p[1]["f1"]
    )
    wins = sum(1 for b, o in changed if o["f1"] > b["f1"])
    base_name, other_name = names
    lines = [
        f"## {other_name} vs {base_name}: {wins} wins, {len(changed) - wins} losses, "
        f"{len(pairs) - len(changed)} ties (F1 per question)",
        "",
    ]
    rows = [
        {
            "question": cell(o.get("question", o["id"])),
            "gold": cell((o.get("gold_answers") or [""])[0]),
            "base": cell(b.get("prediction")),
            "other": cell(o.get("prediction")),
            "change": f"{o['f1'] - b['f1']:+.2f}",
        }
        for b, o in changed
    ]
    columns = [
        ("question", "question"),
        ("gold", "gold"),
        ("base", base_name),
        ("other", other_name),
        ("change", "F1 change"),
    ]
    return "\n".join(lines) + "\n" + markdown_table(rows, columns)


def write_summary(run: EvalRun) -> dict[str, Any]:
    """Write ``summary.json`` and ``summary.md`` for ``run``; return the summary."""
    records = read_records(run.predictions)
    settings = asdict(naive_context(run.ctx) if run.pipeline == "naive" else run.ctx)
    if run.mixed:
        summary = report.summarize_mixed(
            records, run=run.out.name, pipeline=run.pipeline, settings=settings
        )
        table = markdown_table(report.rows_of(summary), report.COLUMNS)
    else:
        summary = summarize(records, run.pipeline, run.ctx.model, run.out.name)
        summary |= report.provenance(records, settings)
        table = markdown_table([summary], COLUMNS, missing="")
    (run.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (run.out / "summary.md").write_text(table + "\n")
    return summary


def compare(run_dirs: list[Path], out: Path) -> str:
    """Side-by-side Markdown table and PNG chart of several runs, named by their directories.

    Runs are compared on the questions every one of them answered (a run still in progress
    is compared on what it has done so far), each summarised afresh from its predictions.
    ``comparison.md`` also lists, for each later run against the first, the questions whose
    F1 differs.
    """
    runs = [(json.loads((d / "summary.json").read_text()), d) for d in run_dirs]
    records = [read_records(d / "predictions.jsonl") for _, d in runs]
    common = set.intersection(*({r["id"] for r in recs} for recs in records)) if records else set()
    summaries = [
        summarize([r for r in recs if r["id"] in common], s["pipeline"], s["model"], d.name)
        | {k: s[k] for k in (*report.PROVENANCE, "settings") if k in s}
        for (s, d), recs in zip(runs, records, strict=True)
    ]
    names = [s["run"] for s in summaries]
    out.mkdir(parents=True, exist_ok=True)
    table = markdown_table(summaries, COLUMNS, missing="")
    sections = [
        differences(records[0], recs, (names[0], name))
        for recs, name in zip(records[1:], names[1:], strict=True)
    ]
    sections.append(report.runs_section(summaries))
    (out / "comparison.md").write_text("\n\n".join([table, *sections]) + "\n")
    (out / "comparison.json").write_text(json.dumps(summaries, indent=2) + "\n")
    title = f"{len(common)} SQuAD dev questions, model {summaries[0]['model']}"
    chart(summaries, title, out / "comparison.png")
    return table


def chart(summaries: list[dict[str, Any]], title: str, path: Path) -> None:
    """Bars per run: F1, exact match, latency p50 and LLM calls per question."""
    plt = report.pyplot()
    if plt is None:
        return

    panels = [
        ("f1", "F1"),
        ("exact_match", "exact match"),
        ("latency_p50_s", "latency p50 (s)"),
        ("llm_calls_per_question", "LLM calls / question"),
    ]
    names = [s["run"] for s in summaries]
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.2))
    for ax, (key, label) in zip(axes, panels, strict=True):
        colors = ["#8c8c8c", "#4c72b0", "#55a868", "#c44e52"][: len(names)]
        ax.bar(names, [s[key] for s in summaries], color=colors)
        ax.set_title(label)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
