"""What `crag eval` runs: the runs a command line asks for, prepared and answered.

``parse_variant`` reads ``NAME:FIELD=VALUE,...``; ``plan`` loads the dataset, samples the
questions and makes one ``EvalRun`` per pipeline or variant (each with its job for a worker
process); ``answer`` answers what the runs still lack — alternating, each in its own process,
when there are several. The CLI only parses options and shows progress.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from crag.eval import harness, interleave
from crag.eval.mixed import load_mixed
from crag.eval.squad import load_squad
from crag_core.errors import ConfigError
from crag_core.schema.context import Context

FORMATS = ("squad", "mixed")

Variant = tuple[str, str, dict[str, str]]
"""A run of ``crag eval``: its name, its pipeline and the context fields it overrides."""


def parse_variant(spec: str) -> Variant:
    """Parse ``NAME:FIELD=VALUE,...`` (a run with other settings); ``ConfigError`` if wrong."""
    name, _, assignments = spec.partition(":")
    known = {f.name for f in fields(Context)} | {"pipeline"}
    pieces: list[str] = []
    for piece in assignments.split(","):  # a dict value's own commas stay in it
        key = piece.partition("=")[0].strip()
        if pieces and key not in known and "=" in pieces[-1].partition("=")[2]:
            pieces[-1] += "," + piece
        elif piece.strip():
            pieces.append(piece)
    pairs = [p.partition("=") for p in pieces]
    if not name.strip().isidentifier() or not pairs or any(not sep for _, sep, _ in pairs):
        raise ConfigError(f"--variant {spec!r}: write NAME:FIELD=VALUE[,FIELD=VALUE...].")
    unknown = sorted({k.strip() for k, _, _ in pairs} - known)
    if unknown:
        raise ConfigError(f"--variant {spec!r}: unknown setting {', '.join(unknown)}.")
    settings = {k.strip(): v.strip() for k, _, v in pairs}
    pipeline = settings.pop("pipeline", "crag")
    if pipeline not in harness.PIPELINES:
        raise ConfigError(
            f"--variant {spec!r}: pipeline must be one of {', '.join(harness.PIPELINES)}."
        )
    return name.strip(), pipeline, settings


@dataclass
class Plan:
    """A `crag eval` ready to run: the data, the questions, and a run and job per variant."""

    data: Any
    context: Context
    questions: list[Any]
    runs: list[harness.EvalRun]
    jobs: list[dict[str, Any]]


def plan(
    path: Path,
    dataset_format: str,
    variants: list[Variant],
    out_dir: Path,
    limit: int | None,
    per_category: int | None,
    seed: int,
    model: str | None,
) -> Plan:
    """Load the dataset, sample its questions and make the runs (results in ``out_dir``)."""
    data = load_mixed(path) if dataset_format == "mixed" else load_squad(path)
    overrides: dict[str, Any] = {"collection": harness.collection_for(data)}
    if model:
        overrides["model"] = model
    questions = data.sample(limit, seed, per_category)
    together = len(variants) > 1
    jobs: list[dict[str, Any]] = [
        {
            "dataset": str(path),
            "format": dataset_format,
            "name": name,
            "pipeline": pipeline,
            "out": str(out_dir / name if together else out_dir),
            "context": overrides | extra,
        }
        for name, pipeline, extra in variants
    ]
    runs = [
        harness.EvalRun(
            job["pipeline"],
            questions,
            Context(**job["context"]),
            Path(job["out"]),
            mixed=dataset_format == "mixed",
        )
        for job in jobs
    ]
    return Plan(data, Context(**overrides), questions, runs, jobs)


def answer(planned: Plan, on_answered: Callable[[str], None]) -> None:
    """Answer what the runs still lack; ``on_answered(run name)`` is called after each answer."""
    runs, questions, jobs = planned.runs, planned.questions, planned.jobs
    if len(runs) > 1:
        todo = {q.id for r in runs for q in r.pending()}  # each file read once
        pending = [q.id for q in questions if q.id in todo]
        interleave.run(jobs, pending, lambda name, _: on_answered(name))
    else:
        runs[0].run(on_done=lambda record: on_answered(jobs[0]["name"]))
