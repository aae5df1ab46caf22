"""Render the compiled graph as Mermaid text, locally (no network renderer).

``python -m graph.diagram`` prints it; ``--update-readme README.md`` rewrites the block
between the ``<!-- graph:start -->`` and ``<!-- graph:end -->`` markers.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

START, END = "<!-- graph:start -->", "<!-- graph:end -->"


def mermaid() -> str:
    """The graph's Mermaid source."""
    from graph.graph import graph

    return graph.get_graph().draw_mermaid()


def readme_block() -> str:
    """The README block (markers included) that shows the diagram."""
    return f"{START}\n```mermaid\n{mermaid().strip()}\n```\n{END}"


def update_readme(path: Path) -> None:
    """Replace the diagram block in ``path``."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"{path}: no {START} ... {END} block to update")
    path.write_text(pattern.sub(lambda _: readme_block(), text), encoding="utf-8")


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--update-readme", type=Path, help="README file to update in place")
    args = parser.parse_args()
    if args.update_readme:
        update_readme(args.update_readme)
    else:
        print(mermaid())


if __name__ == "__main__":
    main()
