"""Mixed-benchmark summaries and the naive-vs-CRAG report: per category and overall.

Scored as SQuAD: exact match and F1 on answerable questions (an "I don't know" scores 0),
abstention on unanswerable ones, false abstention on answerable ones, citation precision (of
the answers that cite, the share whose cited text holds the answer), web-search rate, LLM
calls, prompt tokens (and how many the server read from its prompt cache), completion tokens,
latency. Every summary records the commit, the model, the prompt versions and the settings
that shaped the run, so two runs compare as an A/B.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crag.eval.cost import where_time_goes
from crag.eval.metrics import percentile, verdicts
from crag.eval.mixed import CATEGORIES
from crag.eval.records import read_records
from crag.eval.tables import markdown_table

VERDICT_COLUMNS = [
    ("right", "right"),
    ("unknown", '"I don\'t know"'),
    ("wrong", "wrong"),
    ("truthfulness", "truthfulness %"),
    ("right_of_answers", "right of answers %"),
    ("long_answers", "answers > 25 words"),
    ("meta_answers", "answers about documents"),
]
"""The user's view of a run, before EM and F1 in every table."""

COLUMNS = [
    ("run", "run"),
    ("category", "category"),
    ("questions", "questions"),
    *VERDICT_COLUMNS,
    ("exact_match", "EM"),
    ("f1", "F1"),
    ("false_abstention", "false abstention %"),
    ("abstention", "abstention % (unanswerable)"),
    ("citation_precision", "citation precision %"),
    ("web_search_rate", "web search %"),
    ("cache_hit_rate", "cache hits %"),
    ("llm_calls_mean", "LLM calls / q"),
    ("llm_calls_median", "LLM calls median"),
    ("prompt_tokens", "prompt tokens / q"),
    ("cached_prompt_tokens", "of which cached"),
    ("completion_tokens", "completion tokens / q"),
    ("latency_p50_s", "latency p50 s"),
    ("latency_p95_s", "latency p95 s"),
    ("first_token_p50_s", "first token p50 s"),
    ("total_s", "total s"),
]


def _mean(values: list[float], scale: float = 1.0, digits: int = 1) -> float | None:
    return round(scale * sum(values) / len(values), digits) if values else None


def group_metrics(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The metrics of one group of records (a category, or all)."""
    answerable = [r for r in records if r.get("category", "in_kb") != "unanswerable"]
    unanswerable = [r for r in records if r.get("category") == "unanswerable"]
    citing = [r for r in records if r.get("citation_ok") is not None]
    calls = [float(r["llm_calls"]) for r in records]
    latencies = [float(r["latency_s"]) for r in records]
    firsts = [float(r["first_token_s"]) for r in records if r.get("first_token_s") is not None]
    return {
        "questions": len(records),
        **verdicts(records),
        "exact_match": _mean([float(r["exact_match"]) for r in answerable], 100),
        "f1": _mean([float(r["f1"]) for r in answerable], 100),
        "false_abstention": _mean([float(r["abstained"]) for r in answerable], 100),
        "abstention": _mean([float(r["abstained"]) for r in unanswerable], 100),
        "citation_precision": _mean([float(r["citation_ok"]) for r in citing], 100),
        "web_search_rate": _mean([float(r["web_search_used"]) for r in records], 100),
        "cache_hit_rate": _mean([float(r.get("cache_hit", False)) for r in records], 100),
        "llm_calls_mean": _mean(calls, digits=2),
        "llm_calls_median": statistics.median(calls) if calls else None,
        "prompt_tokens": _mean([float(r["prompt_tokens"]) for r in records], digits=0),
        "cached_prompt_tokens": _mean(
            [float(r.get("cached_prompt_tokens", 0)) for r in records], digits=0
        ),
        "completion_tokens": _mean([float(r["completion_tokens"]) for r in records], digits=0),
        "latency_p50_s": round(percentile(latencies, 50), 1) if records else None,
        "latency_p95_s": round(percentile(latencies, 95), 1) if records else None,
        "first_token_p50_s": round(percentile(firsts, 50), 1) if firsts else None,
        "total_s": round(sum(latencies), 1),
        "retries_per_question": _mean([float(r["retries"]) for r in records], digits=2),
    }


def _git(*args: str) -> str:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
    )
    return done.stdout.strip()


def commit() -> str:
    """The checkout's commit (with ``+dirty`` for uncommitted changes), or ``unknown``."""
    try:
        head = _git("rev-parse", "--short", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


PROVENANCE = ("commit", "model", "prompt_versions")
"""What a run was, in every summary and comparison (two prompt versions compare as an A/B)."""


def provenance(records: list[dict[str, Any]], settings: dict[str, Any]) -> dict[str, Any]:
    """The commit, model, prompt versions (those the records used) and settings of a run."""
    versions: dict[str, str] = {}
    for r in records:
        versions |= r.get("prompt_versions") or {}
    return {
        "commit": commit(),
        "model": settings.get("model"),
        "prompt_versions": dict(sorted(versions.items())),
        "settings": settings,
    }


def summarize_mixed(
    records: list[dict[str, Any]], *, run: str, pipeline: str, settings: dict[str, Any]
) -> dict[str, Any]:
    """Overall and per-category metrics, plus what the run was: commit, model, prompts."""
    return {
        "run": run,
        "pipeline": pipeline,
        **provenance(records, settings),
        "overall": group_metrics(records),
        "by_category": {
            c: group_metrics([r for r in records if r.get("category") == c])
            for c in CATEGORIES
            if any(r.get("category") == c for r in records)
        },
    }


def rows_of(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One table row per category, then the overall row."""
    rows = [{"run": summary["run"], "category": c, **m} for c, m in summary["by_category"].items()]
    return [*rows, {"run": summary["run"], "category": "all", **summary["overall"]}]


def ratios(base: dict[str, Any], other: dict[str, Any]) -> list[dict[str, Any]]:
    """``other`` against ``base`` per category: latency p50 and total time ratios, F1 gap."""
    out = []
    pairs = [*((c, m) for c, m in other["by_category"].items()), ("all", other["overall"])]
    for category, mine in pairs:
        theirs = base["overall"] if category == "all" else base["by_category"].get(category)
        if not theirs:
            continue

        def ratio(key: str, mine: dict[str, Any] = mine, theirs: dict[str, Any] = theirs) -> Any:
            return round(mine[key] / theirs[key], 2) if theirs.get(key) else None

        gap = None
        if mine.get("f1") is not None and theirs.get("f1") is not None:
            gap = round(mine["f1"] - theirs["f1"], 1)
        out.append(
            {
                "category": category,
                "f1_gap": gap,
                "latency_p50_ratio": ratio("latency_p50_s"),
                "total_time_ratio": ratio("total_s"),
                "llm_calls_median": mine["llm_calls_median"],
            }
        )
    return out


RATIO_COLUMNS = [
    ("category", "category"),
    ("f1_gap", "F1 − baseline F1"),
    ("latency_p50_ratio", "latency p50 ÷ baseline"),
    ("total_time_ratio", "total time ÷ baseline"),
    ("llm_calls_median", "LLM calls median"),
]


def compare_mixed(run_dirs: list[Path], out: Path) -> str:
    """The per-category table of several runs (the first is the baseline), ratios, a chart."""
    summaries = [json.loads((d / "summary.json").read_text()) for d in run_dirs]
    common = set.intersection(
        *({r["id"] for r in read_records(d / "predictions.jsonl")} for d in run_dirs)
    )
    summaries = [
        summarize_mixed(
            [r for r in read_records(d / "predictions.jsonl") if r["id"] in common],
            run=s["run"],
            pipeline=s["pipeline"],
            settings=s["settings"],
        )
        | {"commit": s["commit"]}
        for s, d in zip(summaries, run_dirs, strict=True)
    ]
    table = markdown_table([row for s in summaries for row in rows_of(s)], COLUMNS)
    sections = [table]
    for other in summaries[1:]:
        sections.append(
            f"## {other['run']} against {summaries[0]['run']}\n\n"
            + markdown_table(ratios(summaries[0], other), RATIO_COLUMNS)
        )
    for s, d in zip(summaries, run_dirs, strict=True):
        records = [r for r in read_records(d / "predictions.jsonl") if r["id"] in common]
        sections.append(where_time_goes(s["run"], records))
    sections.append(runs_section(summaries))
    out.mkdir(parents=True, exist_ok=True)
    (out / "comparison.md").write_text("\n\n".join(sections) + "\n")
    (out / "comparison.json").write_text(json.dumps(summaries, indent=2) + "\n")
    chart(summaries, out / "comparison.png")
    return table


def runs_section(summaries: list[dict[str, Any]]) -> str:
    """A comparison's "Runs" section: each run's commit, model and prompt versions."""
    runs = {s["run"]: {k: s.get(k) for k in PROVENANCE} for s in summaries}
    return "## Runs\n\n```json\n" + json.dumps(runs, indent=2) + "\n```"


def pyplot() -> Any | None:
    """Matplotlib's pyplot (headless), or None with a note when the optional extra is absent."""
    try:
        import matplotlib
    except ImportError:
        print("no chart: matplotlib is not installed (pip install 'crag[plots]')", file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def chart(summaries: list[dict[str, Any]], path: Path) -> None:
    """Bars per category: F1 (answerable) or abstention (unanswerable), latency p50, calls."""
    plt = pyplot()
    if plt is None:
        return
    categories = [c for c in CATEGORIES if c in summaries[0]["by_category"]]
    panels: list[tuple[str, Callable[[dict[str, Any], str], float | None]]] = [
        ("quality", lambda m, c: m["abstention"] if c == "unanswerable" else m["f1"]),
        ("latency p50 (s)", lambda m, c: m["latency_p50_s"]),
        ("LLM calls / question", lambda m, c: m["llm_calls_mean"]),
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.4))
    width = 0.8 / len(summaries)
    colors = ["#8c8c8c", "#4c72b0", "#55a868", "#c44e52"]
    for ax, (title, value) in zip(axes, panels, strict=True):
        for i, s in enumerate(summaries):
            values = [value(s["by_category"][c], c) or 0 for c in categories]
            xs = [x + i * width for x in range(len(categories))]
            ax.bar(xs, values, width, label=s["run"], color=colors[i % len(colors)])
        ax.set_xticks([x + width * (len(summaries) - 1) / 2 for x in range(len(categories))])
        ax.set_xticklabels(categories)
        ax.set_title(title)
    axes[0].set_ylabel("F1 (answerable) / abstention % (unanswerable)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
