"""OCR's share of the cores: a short scan read while two long scans are read, before and after.

In a fresh process per checkout (this one, and ``--before``: a checkout of an earlier commit,
e.g. a ``git worktree``), the reader server is started, two 60-page scans (no text layer) are
read at once as two users' uploads would be, and ``--delay`` seconds later (when their OCR is
under way: a 60-page scan's reading first looks for text and tables, about 10 s) a one-page scan;
the table gives the short scan's seconds, and the same scan's seconds read alone (the
baseline, same process). The long scans are not waited for.

    .venv/bin/python -m benchmarks.measurements.ocr_share --before /tmp/before
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks import ROOT
from benchmarks.fixtures.sample_files import make_scan_pdf
from benchmarks.measurements.boundary_doors import run
from crag.eval.tables import markdown_table

PROBE = r"""
import json, sys, threading, time
from pathlib import Path
checkout, long, short, delay = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4])
sys.path.insert(0, checkout)
from crag_core.formats.isolated import _reader_server, read_bounded
_reader_server()
def read(path):
    started = time.monotonic()
    read_bounded(path.read_bytes(), "pdf", path.stem)
    return time.monotonic() - started
alone = read(short)
for _ in range(2):
    threading.Thread(target=read, args=(long,), daemon=True).start()
time.sleep(delay)
running = sum(1 for p in Path("/proc").glob("[0-9]*/comm") if p.read_text().strip() == "tesseract")
behind = read(short)
print(json.dumps({"alone": round(alone, 1), "behind": round(behind, 1), "ocr": running}))
"""


def main() -> None:
    """Time the short scan alone and behind two long ones, in each checkout."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--delay", type=float, default=20.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    make_scan_pdf(folder / "long.pdf", pages=60)
    make_scan_pdf(folder / "short.pdf", pages=1)
    rows = []
    for label, checkout in (("before", args.before), ("after", ROOT)):
        got = run(
            PROBE,
            checkout,
            str(folder / "long.pdf"),
            str(folder / "short.pdf"),
            str(args.delay),
            timeout=900,
        )
        rows.append({"checkout": label, **got})
    columns = [
        ("checkout", "checkout"),
        ("alone", "1-page scan alone, s"),
        ("behind", "behind two 60-page scans, s"),
        ("ocr", "their OCR processes then"),
        ("outcome", "failed"),
    ]
    print(markdown_table(rows, columns))


if __name__ == "__main__":
    main()
