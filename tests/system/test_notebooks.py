"""Every notebook runs top to bottom on the embedded model, and none is committed with outputs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path: Path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"clear outputs of {path}"


@pytest.mark.integration
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path: Path, monkeypatch: pytest.MonkeyPatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("NOTEBOOK_PER_CATEGORY", "1")  # evaluation.ipynb: one question per kind
    nb = nbformat.read(path, as_version=4)
    # The kernel inherits this process's environment, including the test's CRAG_DATA_DIR.
    NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
