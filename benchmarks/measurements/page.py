"""How fast the page at /ui/ shows the graph working, with the embedded model.

Starts ``make serve`` (answer cache off, so every question is answered), loads the page
``--loads`` times in headless Chromium (loopback only), then asks each question on a new
thread and records, as the page itself measures them from the moment the question is sent:
the first streamed token of the answer and the finished answer. The first question is cold
(the model server and the embedding model start with it); the others are warm. A screenshot
of the page after the web-fallback question is written to ``--screenshot``.

    python -m benchmarks.measurements.page --collection crag --out docs/benchmarks/page \
        --screenshot docs/ui.png
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import write_results
from benchmarks.fixtures.browser import offline_page
from benchmarks.fixtures.serve import langgraph_dev
from crag.eval.tables import markdown_table

QUESTIONS = [
    "Which team won Super Bowl 50, and what was the final score?",
    "Who painted the Mona Lisa?",
    "What are ctenophores commonly known as?",
    "What is packet switching?",
]
SCREENSHOT_AFTER = 1  # the web-fallback question: the graph shows the corrective path
LOAD_TIMING = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const bytes = [nav, ...performance.getEntriesByType("resource")]
    .reduce((sum, e) => sum + (e.encodedBodySize || 0), 0);
  return {ready: window.cragPage.readyMs, load: nav.loadEventEnd, bytes,
          requests: 1 + performance.getEntriesByType("resource").length};
}"""


def load(page: Any, url: str) -> dict[str, Any]:
    """Load the page until it is ready to ask (graph drawn, settings and threads listed)."""
    page.goto(f"{url}/ui/")
    page.wait_for_function("() => window.cragPage && window.cragPage.readyMs !== null")
    return dict(page.evaluate(LOAD_TIMING))


def ask(page: Any, question: str, timeout_s: float) -> dict[str, Any]:
    """Ask ``question`` on a new thread; the page's own record of the run."""
    page.click("#new-thread")
    page.fill("#question", question)
    page.press("#question", "Enter")
    page.wait_for_selector(
        ".turn:not([data-status=running])", state="attached", timeout=timeout_s * 1000
    )
    run = dict(page.evaluate("window.cragPage.runs.at(-1)"))
    run["status"] = page.get_attribute(".turn", "data-status")
    run["answer"] = page.inner_text(".turn .answer")
    return run


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print and write its tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", default="crag")
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--timeout-s", type=float, default=600)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args(argv)

    env = dict(os.environ, CRAG_COLLECTION=args.collection, CRAG_ANSWER_CACHE="false")
    with tempfile.TemporaryDirectory() as tmp, langgraph_dev(env, Path(tmp), 300) as server:
        with offline_page() as view:
            loads = [load(view.page, server.url) for _ in range(args.loads)]
            runs = []
            for n, question in enumerate(QUESTIONS):
                run = ask(view.page, question, args.timeout_s)
                runs.append({"question": question, "temperature": "warm" if n else "cold"} | run)
                print(f"{question!r}: {run['status']} in {run['totalMs'] / 1000:.1f} s", flush=True)
                if n == SCREENSHOT_AFTER and args.screenshot:
                    view.page.click(".turn .steps > summary")  # the steps, listed
                    view.page.screenshot(path=str(args.screenshot), full_page=True)
            outside, errors = list(view.outside), list(view.errors)

    load_rows = [
        {
            "what": label,
            "ready": f"{pick([x['ready'] for x in loads]):.0f}",
            "load": f"{pick([x['load'] for x in loads]):.0f}",
            "bytes": f"{pick([x['bytes'] for x in loads]):,.0f}",
            "requests": pick([x["requests"] for x in loads]),
        }
        for label, pick in [("first load", lambda v: v[0]), ("median", statistics.median)]
    ]
    run_rows = [
        {
            "question": r["question"],
            "run": r["temperature"],
            "first": f"{r['firstTokenMs'] / 1000:.1f}" if r["firstTokenMs"] else None,
            "total": f"{r['totalMs'] / 1000:.1f}",
            "tokens": r["tokens"],
            "nodes": len(r["nodes"]),
            "web": "yes" if "web_search" in r["nodes"] else "no",
            "status": r["status"],
        }
        for r in runs
    ]
    tables = [
        markdown_table(
            load_rows,
            [
                ("what", f"page load ({args.loads} loads)"),
                ("ready", "ready to ask, ms"),
                ("load", "load event, ms"),
                ("bytes", "bytes (uncompressed)"),
                ("requests", "requests"),
            ],
        ),
        markdown_table(
            run_rows,
            [
                ("question", "question"),
                ("run", "run"),
                ("first", "first token, s"),
                ("total", "answer, s"),
                ("tokens", "streamed chunks"),
                ("nodes", "nodes"),
                ("web", "web search"),
                ("status", "status"),
            ],
        ),
    ]
    summary = (
        f"Page at /ui/ served by `make serve`, collection {args.collection!r}, embedded model, "
        f"answer cache off; requests outside loopback: {len(outside)}; page errors: {len(errors)}."
    )
    print(summary, *tables, sep="\n\n")
    write_results(args.out, "page", summary, "\n\n".join(tables), {"loads": loads, "runs": runs})
    return 1 if outside or errors or any(r["status"] != "done" for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
