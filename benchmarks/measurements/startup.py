"""Start-up: how long short commands take from Enter, before and after, in one run.

Each command runs as its own process (``python -m crag.cli ...``) in each checkout named,
alternating checkout by checkout and run by run, so the host's drift falls on all alike. All
share one data dir holding the demo collection and the model (linked, not copied):

- ``crag --help``: the command line's own start;
- ``crag kb list``: opening the store;
- a repeated question, answered from the cache: from Enter to the first node's line and to
  the exit;
- a knowledge-base question asked anew (``--no-cache``, a different one each run): the wall
  time against the graph's own time (the seconds the command reports, which include loading
  the model when the command loads it), the model loaded by the command itself;
- a first and a second such question, as a user asks them: the second after the first, with
  nothing running before the first (in this checkout the first starts the resident model
  server and the second finds it; in the earlier one each loads the model);
- a question with a ``crag model-server`` running (found without configuration).

    .venv/bin/python -m benchmarks.measurements.startup --before /tmp/crag-before --python-before PY
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import ROOT
from benchmarks.fixtures.shared_services import model_server, private_models
from crag.eval.tables import markdown_table

QUESTION = "Which team won Super Bowl 50?"
KB_QUESTIONS = [  # a new one each run: no prompt cache of a running server answers it again
    "Who was the Super Bowl 50 MVP?",
    "Where was Super Bowl 50 played?",
    "Who sang the national anthem at Super Bowl 50?",
    "Which network broadcast Super Bowl 50 in the United States?",
    "Who coached the Carolina Panthers in Super Bowl 50?",
    "How many points did the Broncos score in Super Bowl 50?",
]
HEADER = """# Start-up: short commands from Enter

`make bench-startup`: each command as its own process, in the earlier checkout ({before}) and
this one, alternating, {runs} runs each, medians; one data dir with the demo collection; the
model found where it is. "first line" is the first node's line; "graph s" the seconds the
command reports (for a question asked anew they include loading the model when the command
loads it, or waiting for the resident server it starts). "first/second question" are asked one
after the other with no model server running before the first. The model server row runs
after the others, with `crag model-server` running.

"""
SECONDS = re.compile(r"(\d+(?:\.\d+)?)s\s*$")


def run(checkout: Path, python: str, env: dict[str, str], *args: str) -> dict[str, Any]:
    """One command: wall seconds, seconds to its first output line, the graph's own seconds."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [python, "-m", "crag.cli", *args],
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    first: float | None = None
    lines = []
    for line in proc.stdout:
        if first is None and line.strip():
            first = time.perf_counter() - started
        lines.append(line.rstrip())
    code = proc.wait(timeout=600)
    wall = time.perf_counter() - started
    if code != 0:
        raise RuntimeError(f"{args} in {checkout} exited {code}: {lines[-3:]}")
    graph = next((float(m.group(1)) for ln in lines[::-1] if (m := SECONDS.search(ln))), None)
    return {"wall": wall, "first_line": first, "graph": graph, "lines": lines}


def median(values: list[float | None]) -> float | None:
    """The median of the known values, to 0.01 s."""
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 2) if known else None


def main() -> None:
    """Time every command in both checkouts, alternating; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, required=True, help="The earlier checkout.")
    parser.add_argument("--python-before", default=sys.executable)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "startup.md")
    args = parser.parse_args()
    checkouts = {"before": (args.before, args.python_before), "after": (ROOT, sys.executable)}
    data = Path(tempfile.mkdtemp(prefix="crag-startup-"))
    models = private_models(data / "models-folder")  # its resident servers are this run's
    (data / "models").symlink_to(models, target_is_directory=True)  # an earlier checkout's place
    env = dict(os.environ, CRAG_DATA_DIR=str(data), CRAG_WEB_SEARCH="off")
    env |= {"CRAG_MODELS_DIR": str(models), "CRAG_MODEL_KEEP_ALIVE_S": "0"}
    resident = env | {"CRAG_MODEL_KEEP_ALIVE_S": "300"}
    env.pop("CRAG_BASE_URL", None)
    run(ROOT, sys.executable, env, "ingest", str(ROOT / "demo" / "corpus"), "--collection", "demo")
    for checkout, python in checkouts.values():  # fills the cache (a pass each: same answer)
        run(checkout, python, env, "ask", QUESTION, "--collection", "demo")
    timings: dict[tuple[str, str], list[dict[str, Any]]] = {}
    commands = {
        "crag --help": ["--help"],
        "crag kb list": ["kb", "list"],
        "repeated question (cache)": ["ask", QUESTION, "--collection", "demo"],
    }
    kb_question = ["--collection", "demo", "--no-cache"]
    for index in range(args.runs):
        question = KB_QUESTIONS[index % len(KB_QUESTIONS)]
        commands["knowledge-base question, the model loaded by the command"] = [
            "ask",
            question,
            *kb_question,
        ]
        for name, command in commands.items():
            for label, (checkout, python) in checkouts.items():
                got = run(checkout, python, env, *command)
                timings.setdefault((name, label), []).append(got)
        for label, (checkout, python) in checkouts.items():
            run(ROOT, sys.executable, resident, "model-server", "--stop")
            for turn, offset in (("first", 1), ("second", 2)):
                later = KB_QUESTIONS[(index + offset) % len(KB_QUESTIONS)]
                got = run(checkout, python, resident, "ask", later, *kb_question)
                timings.setdefault((f"{turn} question, as a user asks", label), []).append(got)
    run(ROOT, sys.executable, resident, "model-server", "--stop")
    # The same question with a model server running (after only).
    key = ("knowledge-base question, model server running", "after")
    try:
        with model_server(data, slots=1) as server:
            served = env | {"CRAG_BASE_URL": f"{server.url}/v1"}
            for index in range(args.runs):
                question = KB_QUESTIONS[index % len(KB_QUESTIONS)]
                got = run(ROOT, sys.executable, served, "ask", question, *kb_question)
                timings.setdefault(key, []).append(got)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    rows = []
    for (name, label), runs in timings.items():
        wall = median([t["wall"] for t in runs])
        graph = median([t["graph"] for t in runs]) if "question" in name else None
        rows.append(
            {
                "command": name,
                "checkout": label,
                "runs": len(runs),
                "wall": wall,
                "first_line": median([t["first_line"] for t in runs]),
                "graph": graph,
                "ratio": round(wall / graph, 2) if wall and graph else None,
            }
        )
    table = markdown_table(
        rows,
        [
            ("command", "command"),
            ("checkout", "checkout"),
            ("runs", "runs"),
            ("wall", "wall s (median)"),
            ("first_line", "first line s"),
            ("graph", "graph s"),
            ("ratio", "wall ÷ graph"),
        ],
    )
    print(table)
    args.out.write_text(HEADER.format(before=args.before.name, runs=args.runs) + table + "\n")


if __name__ == "__main__":
    main()
