"""What each resource attack costs a reader, before and after the bounds, in one run.

Every file of ``benchmarks.fixtures.hostile_files`` (the attacks, and the honest files beside
them) is read in a fresh process per checkout: this one, and ``--before`` (a checkout of an
earlier commit, e.g. a ``git worktree``), each with ``extract_data`` in the process itself (the
reader's own bounds), and this checkout again through ``read_bounded`` as ingestion reads
(the caller's growth; the reading is in a child under the ceiling). Each process reports its
peak memory growth (``ru_maxrss``) and seconds; a safety cap of ``--cap-gib`` of address space
keeps a reader that would take the machine from taking it (it then reads "MemoryError").

``--ingest`` also times the legitimate cost: ``crag.ingest`` of a real workbook and a 300-page
PDF into a fresh collection with the real encoder, each checkout in its own process.

    .venv/bin/python -m benchmarks.measurements.resource_attacks --before /tmp/before --ingest
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import ROOT, write_results
from benchmarks.fixtures.hostile_files import HONEST, HOSTILE, book_pdf, workbook_rows
from crag.eval.tables import markdown_table

PROBE = r"""
import json, resource, sys, time
from pathlib import Path
checkout, path, mode, cap = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
sys.path.insert(0, checkout)
from crag_core.formats import extract as ex
for module in ("openpyxl", "docx", "bs4", "lxml.html", "pypdf", "markitdown.converters"):
    __import__(module)
__import__("docutils.core")
read = ex.extract_data
if mode == "bounded":
    from crag_core.formats.isolated import read_bounded as read, _reader_server
    _reader_server()
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
data = path.read_bytes()
kind = ex.FILE_TYPES[path.suffix]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
try:
    done = read(data, kind, path.stem)
    outcome = f"read: {sum(len(s.text) for s in done.sections):,} characters"
except ex.Unextractable as exc:
    outcome = f"refused: {exc}"
except MemoryError:
    outcome = "MemoryError (the safety cap)"
seconds = time.monotonic() - started
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
print(json.dumps({"mib": round(grown), "s": round(seconds, 1), "outcome": outcome[:90]}))
"""

INGEST = r"""
import json, os, sys, tempfile, time
from pathlib import Path
checkout, path = sys.argv[1], sys.argv[2]
sys.path.insert(0, checkout)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from crag import ingest
from crag_core.clients.embeddings import default_embeddings
from crag_core.clients.knowledge_base import KnowledgeBase
kb = KnowledgeBase(Path(tempfile.mkdtemp()), "bench-ingest", default_embeddings())
kb.embeddings.embed_documents(["warm"])
started = time.monotonic()
report = ingest.ingest(kb, [path])
seconds = time.monotonic() - started
failed = report.failed[0][1][:60] if report.failed else ""
print(json.dumps({"s": round(seconds, 1), "chunks": report.chunks, "failed": failed}))
"""


def probe(checkout: Path, path: Path, mode: str, cap: int, timeout_s: float) -> dict[str, Any]:
    """One file read in a fresh process of ``checkout``; its growth, seconds and outcome."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(checkout), str(path), mode, str(cap)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=checkout,
            env=os.environ | {"PYTHONPATH": str(checkout)},
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"mib": None, "s": timeout_s, "outcome": f"still reading after {timeout_s:g} s"}
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"mib": None, "s": None, "outcome": f"crashed: {tail[:80]}"}
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def timed_ingest(checkout: Path, path: Path) -> dict[str, Any]:
    """``crag.ingest`` of ``path`` in a fresh process of ``checkout``: seconds and chunks."""
    done = subprocess.run(
        [sys.executable, "-c", INGEST, str(checkout), str(path)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=checkout,
        env=os.environ | {"PYTHONPATH": str(checkout)},
        check=False,
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    return json.loads(lines[-1]) if lines else {"s": None, "chunks": 0, "failed": done.stderr[-80:]}


def _cell(result: dict[str, Any]) -> str:
    mib = "—" if result["mib"] is None else f"{result['mib']:,}"
    return f"{mib} MiB, {result['s']} s: {result['outcome']}"


def main() -> None:
    """Read every file in each checkout and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout of the earlier commit")
    parser.add_argument("--cap-gib", type=float, default=6.0)
    parser.add_argument("--timeout-s", type=float, default=300.0)
    parser.add_argument("--ingest", action="store_true", help="time the legitimate ingests too")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks")
    args = parser.parse_args()
    cap = int(args.cap_gib * 2**30)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        for group, makers in (("attack", HOSTILE), ("honest", HONEST)):
            for title, make in makers.items():
                name, data = make()
                path = Path(folder) / name
                path.write_bytes(data)
                row: dict[str, Any] = {"file": title, "kind": group, "bytes": f"{len(data):,}"}
                if args.before:
                    row["before"] = _cell(probe(args.before, path, "in", cap, args.timeout_s))
                row["after"] = _cell(probe(ROOT, path, "in", cap, args.timeout_s))
                row["ingested"] = _cell(probe(ROOT, path, "bounded", cap, args.timeout_s))
                rows.append(row)
                print(json.dumps(row), flush=True)
        ingests: list[dict[str, Any]] = []
        if args.ingest:
            for name, data in (workbook_rows(20_000, 4), workbook_rows(20_000, 10), book_pdf(300)):
                path = Path(folder) / name.replace(".", f"-{len(data)}.")
                path.write_bytes(data)
                for label, checkout in (("before", args.before), ("after", ROOT)):
                    if checkout is None:
                        continue
                    done = timed_ingest(checkout, path)
                    ingests.append({"file": path.name, "checkout": label, **done})
                    print(json.dumps(ingests[-1]), flush=True)
    columns = [("file", "file"), ("bytes", "bytes")]
    if args.before:
        columns.append(("before", "before: peak growth, time, outcome"))
    columns += [("after", "after (the reader alone)"), ("ingested", "after, as ingested")]
    table = markdown_table(rows, columns)
    if ingests:
        table += "\n\n" + markdown_table(
            ingests,
            [("file", "file"), ("checkout", "checkout"), ("s", "seconds"), ("chunks", "chunks")]
            + [("failed", "refused")],
        )
    print(table)
    summary = (
        "Resource attacks on the readers: peak memory growth and seconds per file, each in a "
        f"fresh process (safety cap {args.cap_gib:g} GiB of address space). `make "
        "bench-resource-attacks`; see benchmarks/measurements/resource_attacks.py."
    )
    results = {"rows": rows, "ingests": ingests}
    write_results(args.out, "resource-attacks", summary, table, results)


if __name__ == "__main__":
    main()
