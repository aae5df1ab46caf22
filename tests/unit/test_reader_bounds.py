"""Every reader bounded by what it produces, under one memory ceiling per file.

Each hostile file (``benchmarks.fixtures.hostile_files``) is read the way ingestion reads it,
``read_bounded``: in a child whose address space may grow at most ``MAX_READ_MEMORY``. A reader
that tried to build what the file declares or repeats would hit that ceiling and answer
``OVER_MEMORY``; each must instead stop at its own bound, with its own reason, in seconds. The
honest files beside them (a 20,000-row workbook, a wide table, a 300-page PDF, a long table on
a page) must read whole under the same ceiling. The ceiling itself is shown holding against a
reader crag does not bound (docutils on two-word paragraphs).
"""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pytest

from benchmarks.fixtures.hostile_files import HONEST, HOSTILE
from crag_core.formats import isolated
from crag_core.formats.extract import FILE_TYPES, Damaged, Unextractable
from crag_core.formats.isolated import OVER_MEMORY, read_bounded

EXPECTED = {
    "xlsx: declared 16,384 x 100,000 sheet": None,  # read: three cells, as it holds
    "xlsx: a cell in the last column of 3,000 rows": "more than 2,000,000 cells",
    "csv: 200 headers of 1,000 characters": "more than 2,000,000 characters",
    "md: 200 headers of 1,000 characters": None,  # Markdown is its own text: read
    "html: 2.5 million elements": "HTML elements, more than 200,000",
    "html: 100 headers of 1,000 characters": "more than 2,000,000 characters",
    "docx: a 50,000-character cell spanning 20,000 columns": None,  # the cell once
    "pptx: 40 headers of 1,000 characters, 1,500 rows": "more than 2,000,000 characters",
    "epub: 1 million elements in 13 KB": "more than 200,000 HTML elements",
    "ipynb: 18 MiB of Markdown": "more than 2,000,000 characters",
    "rst: 400,000 paragraphs": OVER_MEMORY,  # docutils' own tree: the ceiling stops it
    "pdf: a stream that unpacks to 200 MiB": "LimitReachedError",
    "pdf: 2,001 pages": "2,001 pages, more than 2,000",
    "pdf: a 2,000-page scan": "OCR reads at most 60 pages",
    "png: 100 bytes declaring 100,000 x 100,000 pixels": "pixels, more than 40 million",
    "png: 20,000 x 20,000 pixels in 76 KB": "pixels, more than 40 million",
    "tiff: 5,000 pages": "5,000 pages are in it; OCR reads at most 60 pages of a file",
}


def read(made):
    name, data = made
    return read_bounded(data, FILE_TYPES[Path(name).suffix], Path(name).stem)


def test_every_attack_has_an_expectation():
    assert set(EXPECTED) == set(HOSTILE)


@pytest.mark.parametrize("attack", list(HOSTILE))
def test_a_hostile_file_stops_at_its_own_bound_within_the_ceiling(attack):
    made = HOSTILE[attack]()
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    expected = EXPECTED[attack]
    if expected is None:
        extracted = read(made)
        assert sum(len(s.text) for s in extracted.sections) <= max(len(made[1]), 100_000)
    else:
        with pytest.raises(Unextractable) as refused:
            read(made)
        assert isinstance(refused.value, Damaged)
        assert expected in str(refused.value)
    assert time.monotonic() - started < 30
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 128  # this process holds the file and the answer, never the reading


@pytest.mark.parametrize("honest", list(HONEST))
def test_an_honest_file_of_the_same_kind_reads_whole(honest):
    extracted = read(HONEST[honest]())
    assert sum(len(s.text) for s in extracted.sections) > 100_000
    if honest.startswith(("xlsx", "csv", "html")):
        (table,) = extracted.tables
        assert len(table.rows) >= 2_000


def test_the_workbook_of_20000_rows_keeps_every_row_as_a_table_and_as_text():
    extracted = read(HONEST["xlsx: 20,000 rows x 10 columns"]())
    (table,) = extracted.tables
    assert len(table.rows) == 20_000
    lines = [line for s in extracted.sections for line in s.text.splitlines()]
    header = "date | station | reading 0 | reading 1"
    assert len([x for x in lines if x.startswith("20")]) == 20_000  # each row once
    assert all(s.text.startswith(header) for s in extracted.sections)  # named once a block
    assert len([x for x in lines if x.startswith(header)]) == len(extracted.sections)


def test_the_reader_is_a_child_with_no_secrets_and_a_private_socket(monkeypatch):
    running = isolated._reader_server()
    assert running is not None
    environ = Path(f"/proc/{running.process.pid}/environ").read_bytes().split(b"\0")
    names = {e.split(b"=", 1)[0].decode() for e in environ if e}
    assert names <= set(isolated.ENVIRONMENT)
    assert oct(os.stat(Path(running.path).parent).st_mode & 0o777) == "0o700"


def test_a_reader_past_its_deadline_is_ended(monkeypatch):
    """The child's alarm ends a read that runs long; the caller gets the reason, not a hang."""
    monkeypatch.setattr(isolated, "MAX_READ_SECONDS", 1)
    name, data = HOSTILE["rst: 400,000 paragraphs"]()
    monkeypatch.setattr(isolated, "MAX_READ_MEMORY", 8 << 30)
    started = time.monotonic()
    with pytest.raises(Damaged, match="more than 1 s"):
        read_bounded(data * 4, "rst", "slow")
    assert time.monotonic() - started < 15
