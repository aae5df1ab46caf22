"""Tables kept as tables: typed columns read from CSV and workbooks, stored with the chunks."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import cast

import pytest

from crag.ingest import ingest
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.clients.table_store import SCHEMA, TableStore
from crag_core.errors import KnowledgeBaseError, TableQueryError
from crag_core.formats.extract import extract
from crag_core.formats.table_rows import csv_table, safe_name, table_from_rows
from tests.fakes import HashEmbeddings

SALES = """Region,Month,Units Sold,Revenue ($),Launch date
North,January,"1,200",15000.50,2025-01-03
South,January,800,9800,2025-01-10
North,February,1350,16200.75,2025-02-01
East,February,,7000,2025-02-15
"""


@pytest.fixture
def kb(tmp_path):
    return KnowledgeBase(tmp_path / "store", "tables-kb", HashEmbeddings())


def test_columns_are_typed_and_cells_converted():
    table = csv_table("sales", SALES)
    assert table is not None and table.name == "sales" and table.sheet == ""
    assert [(c.name, c.original, c.type) for c in table.columns] == [
        ("region", "Region", "TEXT"),
        ("month", "Month", "TEXT"),
        ("units_sold", "Units Sold", "INTEGER"),
        ("revenue", "Revenue ($)", "REAL"),
        ("launch_date", "Launch date", "DATE"),
    ]
    assert table.rows[0] == ("North", "January", 1200, 15000.5, "2025-01-03")
    assert table.rows[3][2] is None  # an empty cell is NULL, not 0
    assert table.row_numbers == (2, 3, 4, 5)  # the file's own rows, the header being row 1


def test_workbook_values_keep_their_types():
    rows = [
        ["When", "Count", "Share", "Note"],
        [dt.datetime(2025, 3, 14), 3, 0.5, "a"],
        [dt.datetime(2025, 3, 15, 9, 30), 4, 1, 7],
    ]
    table = table_from_rows("book", "Sheet 1", cast(list[list[object]], rows))
    assert table is not None and table.name == "book_sheet_1"
    assert [c.type for c in table.columns] == ["DATE", "INTEGER", "REAL", "TEXT"]
    assert table.rows == (
        ("2025-03-14", 3, 0.5, "a"),
        ("2025-03-15 09:30:00", 4, 1.0, "7"),
    )


def test_a_year_column_of_first_januaries_holds_years():
    table = table_from_rows(
        "f", "", [["year", "when"], ["2005-01-01", "2005-01-01"], ["2006-01-01", "2006-03-01"]]
    )
    assert table is not None
    assert [c.type for c in table.columns] == ["INTEGER", "DATE"]  # "when" is no year column
    assert table.rows == ((2005, "2005-01-01"), (2006, "2006-03-01"))


def test_a_table_needs_a_header_and_a_row():
    assert table_from_rows("f", "", [["only", "a", "header"]]) is None
    assert table_from_rows("f", "", [[], [None, ""]]) is None


@pytest.mark.parametrize(
    ("text", "taken", "safe"),
    [
        ("Units Sold", [], "units_sold"),
        ("2024", [], "c_2024"),
        ("", [], "column"),
        ('x"; DROP TABLE t; --', [], "x_drop_table_t"),
        ("Région", [], "r_gion"),
        ("name", ["name", "name_2"], "name_3"),
        ("_private", [], "private"),
        ("a" * 80, [], "a" * 48),
    ],
)
def test_safe_names(text, taken, safe):
    assert safe_name(text, taken) == safe


def test_columns_with_the_same_or_no_name_stay_apart():
    table = table_from_rows("f", "", [["A", "a", "", None], [1, 2, 3, 4]])
    assert table is not None
    assert [c.name for c in table.columns] == ["a", "a_2", "column_3", "column_4"]


def _workbook(path, sheets):
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    book.save(str(path))


def test_ingest_keeps_tables_in_step_with_the_documents(kb, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "sales.csv").write_text(SALES)
    _workbook(
        folder / "plants.xlsx",
        {"Wind": [["site", "mw"], ["Ardrossan", 24], ["Whitelee", 539]], "Notes": [["x"]]},
    )
    (folder / "readme.md").write_text("# Readme\n\nNo tables here.")
    ingest(kb, [str(folder)])
    catalog = {t.name: t for t in kb.tables.catalog()}
    assert set(catalog) == {"sales", "plants_wind"}  # a sheet with no data row is no table
    assert (catalog["plants_wind"].label, catalog["plants_wind"].sheet) == (
        "docs/plants.xlsx",
        "Wind",
    )
    assert catalog["sales"].columns[0].values == ("North", "East", "South")  # few: listed
    total = kb.tables.query("SELECT SUM(mw) FROM plants_wind")
    assert total.rows == ((563,),) and total.tables == ("plants_wind",)

    ingest(kb, [str(folder)])  # unchanged: nothing rewritten, nothing doubled
    assert kb.tables.query("SELECT COUNT(*) FROM sales").rows == ((4,),)

    (folder / "sales.csv").write_text(SALES + "West,March,10,100,2025-03-01\n")
    ingest(kb, [str(folder)])
    assert kb.tables.query("SELECT COUNT(*) FROM sales").rows == ((5,),)
    assert {t.name for t in kb.tables.catalog()} == {"sales", "plants_wind"}

    (folder / "plants.xlsx").unlink()
    report = ingest(kb, [str(folder)], sync=True)
    assert len(report.removed) == 1
    assert [t.name for t in kb.tables.catalog()] == ["sales"]
    with pytest.raises(TableQueryError, match="no such table"):
        kb.tables.query("SELECT * FROM plants_wind")

    kb.drop()
    assert kb.tables.catalog() == []


def test_tables_of_two_files_with_the_same_name_stay_apart(kb, tmp_path):
    for part in ("a", "b"):
        (tmp_path / part).mkdir()
        (tmp_path / part / "sales.csv").write_text(SALES)
    ingest(kb, [str(tmp_path / "a"), str(tmp_path / "b")])
    assert sorted(t.name for t in kb.tables.catalog()) == ["sales", "sales_2"]


def test_a_write_cut_short_leaves_the_old_tables(tmp_path, monkeypatch):
    store = TableStore(tmp_path / "t.sqlite3")
    table = csv_table("sales", SALES)
    assert table is not None
    store.replace_document("d", "sales.csv", [table])

    import crag_core.clients.table_store as table_store

    def fail(*_args):
        raise KeyboardInterrupt  # the process is stopped between two statements

    monkeypatch.setattr(table_store, "_create", fail)
    with pytest.raises(KeyboardInterrupt):
        store.replace_document("d", "sales.csv", [table])
    monkeypatch.undo()
    assert [t.name for t in store.catalog()] == ["sales"]
    assert store.query("SELECT COUNT(*) FROM sales").rows == ((4,),)


def test_workbooks_and_csv_files_read_through_extract(tmp_path):
    _workbook(tmp_path / "book.xlsx", {"Data": [["a", "b"], [1, "x"]]})
    (tmp_path / "t.csv").write_text("k;v\n1;2,5\n")
    assert [t.name for t in extract(tmp_path / "book.xlsx").tables] == ["book_data"]
    (csv,) = extract(tmp_path / "t.csv").tables
    assert [c.name for c in csv.columns] == ["k", "v"]  # semicolons found


def test_tables_with_a_header_row_in_pages_and_documents(tmp_path):
    (tmp_path / "guide.md").write_text(
        "# Guide\n\n## Gauges\n\n| Gauge | Level (m) |\n|---|---:|\n| Velna | 4.2 |\n"
        "| Orsk | 3.1 |\n\nText.\n\n| 1 | 2 |\n|---|---|\n| 3 | 4 |\n"
    )
    (tables,) = [extract(tmp_path / "guide.md").tables]
    assert [(t.name, t.sheet) for t in tables] == [("guide_gauges", "Gauges")]  # "1 | 2": no header
    assert tables[0].rows == (("Velna", 4.2), ("Orsk", 3.1))

    (tmp_path / "page.html").write_text(
        "<html><body><main><table><caption>Plants</caption><tr><th>Site</th><th>MW</th></tr>"
        "<tr><td>Whitelee</td><td>539</td></tr></table><table><tr><td>a</td><td>1</td></tr>"
        "<tr><td>b</td><td>2</td></tr></table></main></body></html>"
    )
    (page,) = extract(tmp_path / "page.html").tables
    assert (page.name, page.sheet, page.rows) == ("page_plants", "Plants", (("Whitelee", 539),))

    import docx

    document = docx.Document()
    table = document.add_table(rows=2, cols=2)
    for cell, text in zip(
        [c for row in table.rows for c in row.cells], ["Name", "Age", "Ada", "36"], strict=True
    ):
        cell.text = text
    document.save(str(tmp_path / "people.docx"))
    (word,) = extract(tmp_path / "people.docx").tables
    assert (word.name, word.sheet, word.rows) == ("people_table_1", "table 1", (("Ada", 36),))


GAUGES = [
    ["station", "river", "level (m)", "measured"],
    *[
        [f"Station {i}", ["Velna", "Orsk"][i % 2], f"{1 + i * 0.5:.2f}", f"2024-04-{i + 1:02d}"]
        for i in range(8)
    ],
]


def test_a_pdfs_ruled_tables_are_tables_with_their_page(tmp_path):
    from benchmarks.fixtures.sample_files import make_table_pdf

    plants = [["site", "MW"], ["Whitelee", "539"], ["Clyde", "350"]]
    make_table_pdf(tmp_path / "report.pdf", [GAUGES, plants], before="Gauges of the basin.")
    extracted = extract(tmp_path / "report.pdf")
    assert [(t.name, t.sheet) for t in extracted.tables] == [
        ("report_page_1_table_1", "page 1 table 1"),
        ("report_page_2_table_1", "page 2 table 1"),
    ]
    gauges = extracted.tables[0]
    assert [(c.original, c.type) for c in gauges.columns] == [
        ("station", "TEXT"),
        ("river", "TEXT"),
        ("level (m)", "REAL"),
        ("measured", "DATE"),
    ]
    assert gauges.rows[3] == ("Station 3", "Orsk", 2.5, "2024-04-04")
    assert len(gauges.rows) == 8 and extracted.tables[1].rows[0] == ("Whitelee", 539)
    assert "Gauges of the basin." in extracted.sections[0].text  # the page keeps its text


def test_a_pdf_table_is_queried_cited_by_page_and_goes_with_its_file(kb, tmp_path):
    from benchmarks.fixtures.sample_files import make_table_pdf

    make_table_pdf(tmp_path / "gauges.pdf", [GAUGES])
    ingest(kb, [str(tmp_path / "gauges.pdf")])
    (table,) = kb.tables.catalog()
    assert (table.label, table.sheet) == ("gauges.pdf", "page 1 table 1")
    top = kb.tables.query(f"SELECT station FROM {table.name} ORDER BY level_m DESC LIMIT 1")
    assert top.rows == (("Station 7",),)
    (tmp_path / "gauges.pdf").unlink()
    ingest(kb, [str(tmp_path)], sync=True)
    assert kb.tables.catalog() == []


def test_a_borderless_table_in_a_pdf_stays_text(tmp_path):
    from benchmarks.fixtures.sample_files import make_table_pdf

    make_table_pdf(tmp_path / "plain.pdf", [GAUGES], ruled=False)
    extracted = extract(tmp_path / "plain.pdf")
    assert extracted.tables == () and "Station 7" in extracted.sections[0].text


def test_a_pdf_table_over_several_pages_is_one_table(tmp_path):
    from benchmarks.fixtures.sample_files import make_table_pdf

    rows = [["day", "reading"], *[[f"2024-01-{1 + i % 28:02d}", str(i)] for i in range(150)]]
    make_table_pdf(tmp_path / "log.pdf", [rows])
    (table,) = extract(tmp_path / "log.pdf").tables
    assert len(extract(tmp_path / "log.pdf").sections) > 2  # it does run over pages
    assert [r[1] for r in table.rows] == list(range(150))  # every row once, the headers not


def test_a_pdf_that_is_mostly_its_table_is_queried_as_a_spreadsheet_is(kb, tmp_path):
    from benchmarks.fixtures.sample_files import make_table_pdf

    make_table_pdf(tmp_path / "gauges.pdf", [GAUGES], before="River gauges, April 2024.")
    report = "The basin's rivers were measured daily through the spring floods. " * 40
    make_table_pdf(tmp_path / "report.pdf", [GAUGES], before=report)
    assert [t.whole for t in extract(tmp_path / "gauges.pdf").tables] == [True]
    assert [t.whole for t in extract(tmp_path / "report.pdf").tables] == [False]
    ingest(kb, [str(tmp_path / "gauges.pdf"), str(tmp_path / "report.pdf")])
    whole = {t.label: t.whole for t in kb.tables.catalog()}
    assert whole == {"gauges.pdf": True, "report.pdf": False}


def test_a_table_store_written_before_whole_tables_reads_and_takes_them(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:  # the catalog as stores wrote it before
        conn.executescript(
            "CREATE TABLE crag_tables (name TEXT PRIMARY KEY, doc_id TEXT NOT NULL, "
            "label TEXT NOT NULL, sheet TEXT NOT NULL, row_count INTEGER NOT NULL, "
            "position INTEGER NOT NULL);"
            + SCHEMA[SCHEMA.index("CREATE TABLE IF NOT EXISTS crag_columns") :]
        )
    old = TableStore(path)
    assert old.catalog() == []
    table = table_from_rows("gauges", "page 1 table 1", GAUGES)
    assert table is not None
    old.replace_document("g", "gauges.pdf", [replace(table, whole=True)])
    ((label, whole),) = [(t.label, t.whole) for t in TableStore(path).catalog()]
    assert (label, whole) == ("gauges.pdf", True)


def test_a_whole_table_keeps_its_mark_through_a_shared_stores_json():
    from crag_core.text.table_shapes import table_from_json, table_json

    table = table_from_rows("gauges", "page 1 table 1", GAUGES)
    assert table is not None
    for mark in (True, False):
        assert table_from_json(table_json(replace(table, whole=mark))).whole is mark


@pytest.mark.parametrize(
    ("read", "cell"),
    [
        ("2010-08\n-01", "2010-08-01"),  # a date wrapped in a narrow column
        ("well-\nknown", "well-known"),
        ("New\nYork", "New York"),
        ("  Station   3 ", "Station 3"),
        ("", ""),
    ],
)
def test_a_pdf_cells_lines_are_joined_as_written(read, cell):
    from crag_core.formats.extract import pdf_cell

    assert pdf_cell(read) == cell


def _reserved_files(folder, stem):
    """A file of each kind that makes tables, each named so its table's name starts ``stem``."""
    from benchmarks.fixtures.sample_files import make_pptx, make_table_pdf

    (folder / f"{stem}.csv").write_text(SALES)
    _workbook(folder / f"{stem}_book.xlsx", {"Master": [["a", "b"], [1, "x"]]})
    make_table_pdf(folder / f"{stem}_report.pdf", [GAUGES])
    (folder / f"{stem}_page.html").write_text(
        "<html><body><main><table><caption>Plants</caption><tr><th>Site</th><th>MW</th></tr>"
        "<tr><td>Whitelee</td><td>539</td></tr></table></main></body></html>"
    )
    make_pptx(folder / f"{stem}_deck.pptx", sections=1)
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("stem", ["sqlite_master", "SQLite_Stat1", "crag_tables", "CRAG_columns"])
def test_a_name_in_a_reserved_namespace_never_reaches_the_store(kb, tmp_path, stem):
    import threading

    folder = tmp_path / "files"
    folder.mkdir()
    files = _reserved_files(folder, stem)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(ingest(kb, [str(folder)])), daemon=True)
    worker.start()
    worker.join(timeout=120)  # the name chooser once looped for ever on these names
    assert done, "the ingest did not end"
    tables = kb.tables.catalog()
    assert {t.label for t in tables} == {f"files/{name}" for name in files}
    for table in tables:
        assert not table.name.lower().startswith(("sqlite_", "crag_")), table.name
        (count,) = kb.tables.query(f'SELECT COUNT(*) FROM "{table.name}"').rows[0]
        assert count == table.rows
    # The store's own catalog is untouched and still closed to queries.
    with pytest.raises(TableQueryError, match="not allowed"):
        kb.tables.query("SELECT * FROM crag_tables")


def test_the_name_chooser_is_bounded_and_ends_in_a_name_of_the_document():
    from crag_core.clients.table_store import NAME_TRIES, table_name

    taken = {"sales"} | {f"SALES_{n}" for n in range(2, NAME_TRIES + 1)}
    own = table_name("sales", taken, "doc-1", 0)
    assert own.startswith("t_") and own.endswith("_1") and own.lower() not in taken
    assert table_name("sqlite_x", set(), "d", 0) == "t_sqlite_x"
    assert table_name("Sales", {"sales"}, "d", 0) == "Sales_2"  # SQLite's names ignore case
    with pytest.raises(KnowledgeBaseError, match="no free name"):
        table_name("sales", taken | {own}, "doc-1", 0)
