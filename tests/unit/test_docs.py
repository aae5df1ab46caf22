"""The README and docs/ stay true: generated parts current, every link and anchor found."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graph.diagram import config_block, readme_block

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slugs(page: Path) -> set[str]:
    """GitHub's anchors for the headings of ``page``."""
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^#{1,6} (.+)$", line):
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            found.add(slug)
    return found


def test_the_readme_is_short_and_its_generated_parts_are_current():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert readme_block() in readme and config_block() in readme, "run `make graph-diagram`"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_is_found(page: Path):
    missing = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"^(https?:|mailto:)", target):
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            missing.append(target)
        elif anchor and where.suffix == ".md" and anchor not in slugs(where):
            missing.append(target)
    assert missing == []


def every_node() -> set[str]:
    """The turn's nodes, a question's pass's and a part's pass's."""
    from graph.graph import build_part_graph, build_pass_graph, graph

    graphs = (graph, build_pass_graph(), build_part_graph())
    return {n for g in graphs for n in g.get_graph().nodes} - {"__start__", "__end__"}


def test_the_node_table_names_every_node_of_the_graph():
    page = (ROOT / "docs" / "graph.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(\w+)` \|", page, re.M)
    assert sorted(listed) == sorted(every_node())


def test_the_wiring_docstring_names_every_node():
    import graph.graph as wiring

    doc = wiring.__doc__ or ""
    nodes = every_node()
    assert {n for n in nodes if not re.search(rf"\b{n}\b", doc)} == set()


def test_the_readme_gives_one_time_for_make_test():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    times = re.findall(r"\b\d+m\d\ds\b|\b\d+ minutes\b", readme)
    said = [t for t in times if not re.search(rf"\({re.escape(t)} of tests", readme)]
    assert len(said) == 1, f"`make test`'s time is given as {said}: give it once, under Tests"


def test_a_page_that_speaks_of_a_generated_diagram_has_one_or_links_it():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for line in text.splitlines():
            if re.match(r"^Generated from the compiled graph", line):
                assert "```mermaid" in text, f"{page.name} introduces a diagram it does not have"


@pytest.mark.parametrize(
    "folder",
    [
        "nodes",
        "nodes/turn",
        "nodes/tools",
        "nodes/correction",
        "nodes/parts",
        "nodes/shared",
        "graph",
        "crag_core/schema",
        "crag_core/formats",
        "crag_core/clients",
        "crag_core/runtime",
        "crag_core/text",
    ],
)
def test_docs_architecture_names_every_module_of_the_layers(folder: str):
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = [p.name for p in (ROOT / folder).iterdir() if p.suffix in (".py", ".json")]
    missing = [m for m in modules if m != "__init__.py" and f"`{m}`" not in page]
    assert missing == [], f"docs/architecture.md does not name {folder}/{missing}"


def test_the_file_types_listed_are_those_crag_reads():
    from crag_core.formats.extract import FILE_TYPES

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"^Files \(((?:\.\w+ ?)+)\)", readme, re.M)
    assert listed, "README lost its list of file types"
    kinds = {FILE_TYPES[s] for s in listed.group(1).split()}
    assert kinds == set(FILE_TYPES.values())
    count = len(set(FILE_TYPES.values()))
    for page in [ROOT / "README.md", ROOT / "docs" / "architecture.md"]:
        for said in re.findall(r"(\d+) file types", page.read_text(encoding="utf-8")):
            assert int(said) == count, f"{page.name} says {said} file types; crag reads {count}"


def test_every_benchmark_has_a_make_target():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    runnable = [
        f"benchmarks.{p.parent.name}.{p.stem}"
        for shelf in ("calibration", "measurements")
        for p in (ROOT / "benchmarks" / shelf).glob("*.py")
        if "__main__" in p.read_text(encoding="utf-8")
    ]
    assert runnable and [m for m in runnable if f"-m {m} " not in makefile] == []
    for p in (ROOT / "benchmarks" / "fixtures").glob("*.py"):  # started by others, never run
        assert "__main__" not in p.read_text(encoding="utf-8"), p.name
