"""docs/architecture.md and the README's layout stay true to the code and its contracts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONTRACTS = PYPROJECT["tool"]["importlinter"]["contracts"]


def folder(module: str) -> str:
    """A layer's place in the tree: a package's folder, or a module's file."""
    path = module.replace(".", "/")
    return f"{path}.py" if (ROOT / f"{path}.py").is_file() else f"{path}/"


def documented_layers() -> list[str]:
    """The layers in docs/architecture.md's diagram, top first: each box's folders, in order."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"<!-- layers:.*?```mermaid\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md lost its layer diagram"
    labels = dict(re.findall(r'^\s*(\w+)\["(.*?) — ', block.group(1), re.M))
    edges = re.findall(r"^\s*(\w+) --> (\w+)\s*$", block.group(1), re.M)
    chain = [edges[0][0]]
    for source, target in edges:
        assert source == chain[-1], f"the diagram's edges must form one chain: {edges}"
        chain.append(target)
    return [labels[box] for box in chain]


def contracted_layers() -> list[str]:
    layers: list[str] = [c for c in CONTRACTS if c["name"].startswith("Layers:")][0]["layers"]
    return layers


def test_the_architecture_diagram_is_the_import_contract():
    layers = [
        " and ".join(folder(m.strip()) for m in layer.split("|")) for layer in contracted_layers()
    ]
    assert documented_layers() == layers


def test_every_package_is_in_exactly_one_layer():
    layered = [m.strip() for layer in contracted_layers() for m in layer.split("|")]
    assert len(layered) == len(set(layered))
    top = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    inside = {f"crag_core.{p.parent.name}" for p in (ROOT / "crag_core").glob("*/__init__.py")}
    inside |= {f"crag_core.{p.stem}" for p in (ROOT / "crag_core").glob("*.py")} - {
        "crag_core.__init__"
    }
    assert set(layered) == (top - {"crag_core"}) | inside
    roots = set(PYPROJECT["tool"]["importlinter"]["root_packages"])
    assert roots == top | {"tests", "benchmarks"}  # those two only for "never imported"
    installed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert top | {m for m in inside if folder(m).endswith("/")} <= installed


def test_no_two_product_modules_share_a_name():
    names = [
        p.stem
        for top in ("crag", "crag_core", "graph", "nodes", "prompts")
        for p in (ROOT / top).rglob("*.py")
        if p.stem != "__init__"
    ]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_the_readme_layout_names_every_layer():
    readme = (ROOT / "README.md").read_text()
    layout = readme[readme.index("## Layout") :].split("```")[1]
    listed, parent = [], ""
    for line in layout.splitlines():  # "crag_core/" at the margin, "  schema/" under it
        # a folder anywhere, a module only as an entry of its own ("  errors.py")
        match = re.match(r"^(\s*)(\w+/)", line) or re.match(r"^( {0,2})(\w+\.py)", line)
        if match:
            parent = "" if not match.group(1) else parent
            listed.append(parent + match.group(2))
            parent = parent if match.group(1) else match.group(2)
    for layer in contracted_layers():
        for module in layer.split("|"):
            assert folder(module.strip()) in listed, f"README layout misses {folder(module)}"
    for name in listed:
        assert (ROOT / name).exists(), f"README layout names a missing folder or file {name}"
