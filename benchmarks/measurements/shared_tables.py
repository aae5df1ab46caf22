"""Tables on a shared store: what the copy each host keeps costs, against a local store.

    python -m benchmarks.measurements.shared_tables --out docs/benchmarks/shared-tables.md

A Chroma server on loopback (``chroma run``); host A ingests the tools benchmark's four tables
(``benchmarks.measurements.tools_questions.FILES``: 2,800 rows in all) into a shared collection.
Host B (its own store dir, as another machine would have) then reads the table catalog for the
first time (its copy catches up: the keyword copy and every table; the tables' part alone is
timed on other fresh hosts), reads it again (nothing changed: one request for the change token),
runs a query on its copy; then A re-ingests one changed file and B reads the catalog again (that
document's chunks and tables only). The same ingest into a local store gives the local catalog
read and query for comparison. Each step runs ``REPEAT`` times on fresh hosts; medians are
reported, with the bytes the server holds.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.fixtures.shared_services import chroma_server
from benchmarks.measurements.tools_questions import FILES
from crag.eval.tables import markdown_table
from crag.ingest import ingest
from crag_core.clients.chroma import TABLES_PREFIX
from crag_core.clients.embeddings import default_embeddings
from crag_core.clients.knowledge_base import KnowledgeBase

REPEAT = 5
QUERY = "SELECT species, AVG(body_mass_g) FROM penguins GROUP BY species"


def timed(step: Callable[[], object]) -> float:
    """Milliseconds ``step`` took."""
    started = time.perf_counter()
    step()
    return 1000 * (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    """Measure and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("out/shared-tables.md"))
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="shared-tables-"))
    files = work / "files"
    files.mkdir()
    for name, path in FILES.items():
        if name.endswith(".csv"):
            shutil.copyfile(path, files / name)
    embeddings = default_embeddings()
    steps: dict[str, list[float]] = {}
    try:
        with chroma_server(work / "chroma") as server:
            a = KnowledgeBase(work / "a", "tables", embeddings, server_url=server.url)
            ingest(a, [str(files)])
            assert a.copy is not None  # a shared store
            side = a.copy.shared_tables(create=False)
            held = sum(len(t) for t in side.get(include=["documents"])["documents"])
            hashes = a.stored_hashes()
            for n in range(REPEAT):
                fresh = KnowledgeBase(work / f"t{n}", "tables", embeddings, server_url=server.url)
                copy = fresh.copy
                assert copy is not None
                steps.setdefault("of which the tables: read and parsed", []).append(
                    timed(lambda: copy.tables_from_server(sorted(hashes), hashes))  # noqa: B023
                )
            for n in range(REPEAT):
                b = KnowledgeBase(work / f"b{n}", "tables", embeddings, server_url=server.url)
                steps.setdefault("first catalog read (the copy catches up)", []).append(
                    timed(b.tables.catalog)
                )
                steps.setdefault("catalog read, nothing changed", []).append(
                    timed(b.tables.catalog)
                )
                steps.setdefault("query on the copy", []).append(
                    timed(lambda: b.tables.query(QUERY))  # noqa: B023
                )
                changed = files / "penguins.csv"
                row = f"Adelie,Dream,40,18,190,{3000 + n},male,2009\n"
                changed.write_text(changed.read_text() + row)
                ingest(a, [str(files)])
                steps.setdefault("catalog read after one file changed", []).append(
                    timed(b.tables.catalog)
                )
            local = KnowledgeBase(work / "local", "tables", embeddings)
            ingest(local, [str(files)])
            steps["local store: catalog read"] = [timed(local.tables.catalog) for _ in range(5)]
            steps["local store: query"] = [
                timed(lambda: local.tables.query(QUERY)) for _ in range(5)
            ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [
        {"step": step, "ms": f"{statistics.median(ms):.1f}", "runs": len(ms)}
        for step, ms in steps.items()
    ]
    table = markdown_table(rows, [("step", "step"), ("ms", "ms (median)"), ("runs", "runs")])
    text = (
        f"# Tables on a shared store\n\n```\n{__doc__}```\n\n{table}\n\n"
        f"The server holds the tables as {held:,} bytes of JSON in `{TABLES_PREFIX}tables`.\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
