"""Several pipelines in one run, question by question, each in its own process.

A comparison of latencies is only fair when both pipelines meet the same machine: this host's
speed drifts by tens of percent within an hour, so two runs one after the other compare the
hour as much as the pipelines. Here every pipeline has its own worker process (its own model
server and prompt cache, so neither inherits the other's cache), and the parent hands each
question to every worker in turn - A B, B A, A B... - so drift falls on all of them alike.

Each worker appends its records to its own ``predictions.jsonl`` exactly as ``crag eval``
does, so a rerun resumes and the results are summarised and compared the same way. A job may
name its own answerer instead (``"answerer": "module:function"``, called with the job, returning
a function that answers one question id and writes its record): the benchmarks that compare
pipelines on their own question sets run through this same loop.
"""

from __future__ import annotations

import importlib
import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from crag.eval.records import append_record
from crag_core.errors import CragError

QUESTION_TIMEOUT_S = 1800.0
"""The longest one worker may take for one question before the run is stopped."""
DONE = "@@done "
"""What a worker prints when a question's record is written (other output is ignored)."""


@dataclass
class Worker:
    """One run's process."""

    name: str
    process: subprocess.Popen[str]
    log: Path
    """Where the worker's stderr goes."""

    def ask(self, question_id: str) -> None:
        """Have the worker answer ``question_id``; return once its record is written."""
        stdin: IO[str] = self.process.stdin  # type: ignore[assignment]
        stdout: IO[str] = self.process.stdout  # type: ignore[assignment]
        stdin.write(question_id + "\n")
        stdin.flush()
        deadline = time.monotonic() + QUESTION_TIMEOUT_S
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while selector.select(max(0.0, deadline - time.monotonic())):
                line = stdout.readline()
                if not line:  # the worker exited
                    raise CragError(
                        f"The {self.name} worker failed on {question_id}; see {self.log}."
                    )
                if line.strip() == DONE + question_id:
                    return
        raise CragError(f"The {self.name} worker took over {QUESTION_TIMEOUT_S:.0f}s.")

    def stop(self) -> None:
        """Close its input (it exits) and wait, killing it if it does not."""
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start(job: dict[str, Any]) -> Worker:
    """Start the worker for one run; ``job`` says what to evaluate, how and where to write.

    ``job["name"]`` names the run, ``job["pipeline"]`` is its pipeline, ``job["context"]`` its
    settings and ``job["out"]`` its directory.
    """
    out = Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    log = out / "worker.log"
    with log.open("a", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "crag.eval.interleave", json.dumps(job)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            bufsize=1,
            # Each worker its own embedded model server (and prompt cache): never a resident
            # or registered one that another pipeline shares.
            env=os.environ | {"CRAG_MODEL_KEEP_ALIVE_S": "0"},
        )
    return Worker(job["name"], process, log)


def run(
    jobs: list[dict[str, Any]],
    question_ids: list[str],
    on_done: Callable[[str, str], None] | None = None,
) -> None:
    """Answer every question with every run (one ``job`` each), alternating which goes first.

    ``on_done(name, question_id)`` is called as each record is written.
    """
    workers = [start(job) for job in jobs]
    try:
        for n, question_id in enumerate(question_ids):
            order = workers if n % 2 == 0 else list(reversed(workers))
            for worker in order:
                worker.ask(question_id)
                if on_done:
                    on_done(worker.name, question_id)
    finally:
        for worker in workers:
            worker.stop()


def serve(job: dict[str, Any]) -> None:
    """The worker: answer each question id read from stdin, then echo it (record written)."""
    answer = answerer(job)
    for line in sys.stdin:
        question_id = line.strip()
        answer(question_id)
        sys.stdout.write(DONE + question_id + "\n")
        sys.stdout.flush()


def answerer(job: dict[str, Any]) -> Callable[[str], None]:
    """What answers one question id and writes its record: the job's own, or ``crag eval``'s."""
    if "answerer" in job:
        module, name = str(job["answerer"]).split(":")
        made: Callable[[str], None] = getattr(importlib.import_module(module), name)(job)
        return made
    return eval_answerer(job)


def eval_answerer(job: dict[str, Any]) -> Callable[[str], None]:
    """``crag eval``'s: the job's pipeline on the question, the record ``crag eval`` writes."""
    from crag.eval import harness, records
    from crag.eval.mixed import load_mixed
    from crag.eval.squad import load_squad
    from crag_core.schema.context import Context

    path = Path(job["dataset"])
    data = load_mixed(path) if job["format"] == "mixed" else load_squad(path)
    by_id = {q.id: q for q in data.questions}
    ctx = Context(**job["context"])
    run = harness.EvalRun(
        job["pipeline"], [], ctx, Path(job["out"]), mixed=job["format"] == "mixed"
    )
    run.out.mkdir(parents=True, exist_ok=True)
    done = records.done_ids(run.predictions)

    def answer(question_id: str) -> None:
        if question_id not in done:
            record = harness.run_one(run.pipeline, by_id[question_id], ctx)
            append_record(run.predictions, record)

    return answer


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
