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


def test_the_node_table_names_every_node_of_the_graph():
    from graph.graph import graph

    page = (ROOT / "docs" / "graph.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(\w+)` \|", page, re.M)
    nodes = set(graph.get_graph().nodes) - {"__start__", "__end__"}
    assert sorted(listed) == sorted(nodes)


def test_the_wiring_docstring_names_every_node():
    import graph.graph as wiring

    doc = wiring.__doc__ or ""
    nodes = set(wiring.graph.get_graph().nodes) - {"__start__", "__end__"}
    assert {n for n in nodes if not re.search(rf"\b{n}\b", doc)} == set()
