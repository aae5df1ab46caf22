"""The boundary's third pass, before and after, in one run: page images and reserved table names.

Each case runs in a fresh process per checkout: this one, and ``--before`` (a checkout of an
earlier commit, e.g. a ``git worktree``), reporting the process's peak memory growth
(``ru_maxrss``: the API server's own, since the page route runs there), its seconds and what
came of it. A case that does not end within ``--timeout`` seconds is reported so.

- a page image of ``tall_page.pdf`` (582 bytes, a page 200,000 points high), three requests
  (the page asks again as a user scrolls);
- a CSV named ``sqlite_master.csv`` stored in a collection's table store.

    .venv/bin/python -m benchmarks.measurements.boundary_doors --before /tmp/before
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import ROOT
from benchmarks.fixtures.hostile_files import tall_page_pdf
from crag.eval.tables import cell, markdown_table

PAGE = r"""
import json, resource, sys, time
from pathlib import Path
checkout, path = sys.argv[1], Path(sys.argv[2])
sys.path.insert(0, checkout)
try:
    from crag_core.formats.page_images import PageImages
    from crag_core.formats.isolated import _reader_server
    _reader_server()
    pages = PageImages()
    draw = lambda: pages.png(path, "pdf", 1)
except ImportError:
    from crag_core.formats.extract import pdf_page_png
    draw = lambda: pdf_page_png(path, 1)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
for _ in range(3):
    png = draw()
seconds = time.monotonic() - started
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
outcome = f"{len(png):,}-byte PNG"
print(json.dumps({"mib": round(grown), "s": round(seconds, 2), "outcome": outcome}))
"""

TABLE = r"""
import json, resource, sys, tempfile, time
from pathlib import Path
checkout = sys.argv[1]
sys.path.insert(0, checkout)
from crag_core.clients.table_store import TableStore
from crag_core.formats.table_rows import csv_table
table = csv_table("sqlite_master", "gauge,level\nVelna,4.2\n")
store = TableStore(Path(tempfile.mkdtemp()) / "t.sqlite3")
started = time.monotonic()
store.replace_document("d", "sqlite_master.csv", [table])
names = [t.name for t in store.catalog()]
seconds = round(time.monotonic() - started, 2)
print(json.dumps({"mib": 0, "s": seconds, "outcome": f"stored as {names}"}))
"""


def run(code: str, checkout: Path, *args: str, timeout: float) -> dict[str, Any]:
    """``code`` in a fresh process of ``checkout``: its JSON line, or why there is none."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(checkout), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=checkout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"mib": "", "s": f"> {timeout:g}", "outcome": "never ended (stopped)"}
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return {"mib": "", "s": "", "outcome": said[:90]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Run each case in each checkout and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    name, data = tall_page_pdf()
    (folder / name).write_bytes(data)
    rows = []
    for case, code, extra in [
        ("page image: 582-byte PDF, a page 200,000 pt high, 3 requests", PAGE, [folder / name]),
        ("table store: a CSV named sqlite_master.csv", TABLE, []),
    ]:
        row = {"case": case}
        for key, checkout in (("before", args.before), ("after", ROOT)):
            got = run(code, checkout, *map(str, extra), timeout=args.timeout)
            row[key] = cell(f"{got['mib']} MiB, {got['s']} s: {got['outcome']}")
        rows.append(row)
    print(markdown_table(rows, [("case", "case"), ("before", "before"), ("after", "after")]))


if __name__ == "__main__":
    main()
