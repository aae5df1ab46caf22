"""docs/architecture.md and the README's layout stay true to the code and its contracts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def documented_layers() -> list[str]:
    """The layers in docs/architecture.md's diagram, top first, from its chain of edges."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"<!-- layers:.*?```mermaid\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md lost its layer diagram"
    edges = re.findall(r"^\s*(\w+) --> (\w+)\s*$", block.group(1), re.M)
    chain = [edges[0][0]]
    for source, target in edges:
        assert source == chain[-1], f"the diagram's edges must form one chain: {edges}"
        chain.append(target)
    return chain


def contracted_layers() -> list[str]:
    contracts = PYPROJECT["tool"]["importlinter"]["contracts"]
    return [c for c in contracts if c["name"].startswith("Layers:")][0]["layers"]


def test_the_architecture_diagram_is_the_import_contract():
    assert documented_layers() == contracted_layers()


def test_every_package_is_in_exactly_one_layer():
    packages = {
        p.parent.name
        for p in ROOT.glob("*/__init__.py")
        if p.parent.name not in ("tests", "benchmarks")
    }
    assert packages == set(contracted_layers())
    roots = set(PYPROJECT["tool"]["importlinter"]["root_packages"])
    assert roots == packages | {"tests", "benchmarks"}  # those two only for "never imported"
    installed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert packages <= installed


def test_the_readme_layout_names_every_layer():
    readme = (ROOT / "README.md").read_text()
    layout = readme[readme.index("## Layout") :].split("```")[1]
    listed = re.findall(r"^(\w+)/", layout, re.M)
    for layer in contracted_layers():
        assert layer in listed, f"README layout misses {layer}/"
    for folder in listed:
        assert (ROOT / folder).is_dir(), f"README layout names a missing folder {folder}/"
