"""PDF tables benchmark (no LLM): how much of a table typeset in a PDF comes back as the table.

The public tables of the tools benchmarks (``benchmarks/data/tools`` and ``rtables``: CSV files
and workbooks' first sheets, 33 to 1,461 rows) are typeset as PDFs (fpdf2, 7 pt, landscape, a
paragraph before the table), ruled and without rules, and read back by crag's reader
(``crag_core.formats.extract``: pdfplumber on the text pages). The reference is the same file
read as crag reads a CSV or a sheet (``table_from_rows``), so both are typed alike. Per table:
tables found, rows found, columns named alike, and cell accuracy (the reference's cells equal
in the table read back, row by row, column by column).

    .venv/bin/python -m benchmarks.measurements.pdf_tables --out docs/benchmarks
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import write_results
from crag.eval.tables import markdown_table
from crag_core.formats.extract import extract
from crag_core.text.table_shapes import Table

DATA = Path(__file__).resolve().parents[1] / "data"
TABLES = sorted((DATA / "tools").glob("*.csv")) + sorted(
    p for p in (DATA / "rtables").iterdir() if p.suffix in (".csv", ".xlsx")
)

COLUMNS = [
    ("table", "table"),
    ("layout", "layout"),
    ("rows", "rows"),
    ("tables", "tables found"),
    ("rows_found", "rows found"),
    ("columns_same", "columns named alike"),
    ("cells", "cell accuracy"),
    ("seconds", "s to read"),
]


def source_rows(path: Path) -> list[list[str]]:
    """The file's rows as text, the header first (a workbook: its first sheet)."""
    import csv

    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as f:
            return [row for row in csv.reader(f)]
    from openpyxl import load_workbook

    sheet = load_workbook(path, read_only=True).worksheets[0]
    return [["" if v is None else str(v) for v in row] for row in sheet.iter_rows(values_only=True)]


def typeset(rows: list[list[str]], ruled: bool, path: Path) -> None:
    """``rows`` as a landscape PDF table under a paragraph; ``ruled``: with cell borders."""
    from fpdf import FPDF

    pdf = FPDF(orientation="L")
    pdf.set_font("Helvetica", size=7)
    pdf.add_page()
    pdf.multi_cell(0, 5, f"Table 1. The {len(rows) - 1} rows of the data set, as published.")
    with pdf.table(borders_layout="ALL" if ruled else "NONE", first_row_as_headings=True) as t:
        for cells in rows:
            row = t.row()
            for cell in cells:
                row.cell(cell.encode("latin-1", "replace").decode("latin-1"))
    pdf.output(str(path))


def compare(reference: Table, read: tuple[Table, ...]) -> dict[str, Any]:
    """Tables, rows, column names and cells of ``read`` against ``reference``."""
    if not read:
        return {"tables": 0, "rows_found": 0, "columns_same": False, "cells": 0.0}
    table = read[0]
    same = [c.original for c in table.columns] == [c.original for c in reference.columns]
    cells = sum(len(r) for r in reference.rows)
    equal = sum(
        1
        for want, got in zip(reference.rows, table.rows, strict=False)
        for a, b in zip(want, got, strict=False)
        if a == b
    )
    return {
        "tables": len(read),
        "rows_found": len(table.rows),
        "columns_same": same,
        "cells": round(equal / max(1, cells), 4),
    }


def run() -> list[dict[str, Any]]:
    """Every table typeset both ways and read back."""
    from crag_core.formats.table_rows import table_from_rows

    results = []
    with tempfile.TemporaryDirectory() as folder:
        for path in TABLES:
            rows = source_rows(path)
            reference = table_from_rows(path.stem, "", rows)
            assert reference is not None
            for ruled in (True, False):
                pdf = Path(folder, f"{path.stem}.pdf")
                typeset(rows, ruled, pdf)
                started = time.perf_counter()
                read = extract(pdf).tables
                took = time.perf_counter() - started
                results.append(
                    {
                        "table": path.name,
                        "layout": "ruled" if ruled else "no rules",
                        "rows": len(reference.rows),
                    }
                    | compare(reference, read)
                    | {"seconds": round(took, 2)}
                )
                print(results[-1])
    return results


def main() -> None:
    """Write ``pdf-tables-table.md`` and ``pdf-tables.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args()
    rows = run()
    ruled = [r for r in rows if r["layout"] == "ruled"]
    cells = sum(r["cells"] * r["rows"] for r in ruled) / sum(r["rows"] for r in ruled)
    unruled = sum(r["tables"] > 0 for r in rows if r["layout"] != "ruled")
    summary = (
        f"{len(ruled)} public tables typeset in PDFs and read back: ruled, "
        f"{sum(r['tables'] == 1 for r in ruled)} found as one table, cell accuracy {cells:.1%} "
        f"(weighted by rows); without rules, {unruled} found."
    )
    write_results(args.out, "pdf-tables", summary, markdown_table(rows, COLUMNS), {"rows": rows})
    print(summary)


if __name__ == "__main__":
    main()
