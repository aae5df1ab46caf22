"""Render the compiled graph as Mermaid text, locally (no network renderer).

``python -m graph.diagram`` prints it; ``--update-readme README.md`` rewrites the block
between the ``<!-- graph:start -->`` and ``<!-- graph:end -->`` markers, and the configuration
table (from ``Context``'s fields and their descriptions) between ``<!-- config:... -->``.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

START, END = "<!-- graph:start -->", "<!-- graph:end -->"
CONFIG_START, CONFIG_END = "<!-- config:start -->", "<!-- config:end -->"


def mermaid() -> str:
    """The turn's graph and a question's pass, as Mermaid sources (edges only)."""
    return f"{turn_mermaid()}\n{pass_mermaid()}"


def turn_mermaid() -> str:
    """The turn's graph (``crag``): a question's pass is one node, ``answer_question``."""
    from graph.graph import graph

    return graph.get_graph().draw_mermaid(with_styles=False).strip()


def pass_mermaid() -> str:
    """A question's pass (``answer_question``'s subgraph; a part's ends in ``collect_part``)."""
    from graph.graph import build_pass_graph

    return build_pass_graph().get_graph().draw_mermaid(with_styles=False).strip()


def readme_block() -> str:
    """The README block (markers included) that shows the two diagrams."""
    return (
        f"{START}\nThe turn (`crag`); a question's pass is one node of it, `answer_question`:\n\n"
        f"```mermaid\n{turn_mermaid()}\n```\n\n"
        "A question's pass, with its own state (`answer_part` runs the same pass for each part\n"
        "of a question, ending in `collect_part`):\n\n"
        f"```mermaid\n{pass_mermaid()}\n```\n{END}"
    )


def config_block() -> str:
    """The README's configuration table (markers included), from ``Context``'s fields."""
    from dataclasses import MISSING, fields

    from crag_core.schema.context import Context

    rows = ["| field | default | what it does |", "|---|---|---|"]
    for f in fields(Context):
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        shown = "(empty)" if default in ("", None) else f"`{json.dumps(default)}`"
        if isinstance(default, str) and default:
            shown = f"`{default}`"
        about = " ".join(str(f.metadata.get("description", "")).split()).replace("|", "\\|")
        rows.append(f"| `{f.name}` | {shown} | {about} |")
    return f"{CONFIG_START}\n" + "\n".join(rows) + f"\n{CONFIG_END}"


def update_readme(path: Path) -> None:
    """Replace the diagram and configuration blocks in ``path``."""
    text = path.read_text(encoding="utf-8")
    blocks = ((START, END, readme_block()), (CONFIG_START, CONFIG_END, config_block()))
    for start, end, block in blocks:
        found = re.search(re.escape(start) + r".*?" + re.escape(end), text, re.DOTALL)
        if found is None:
            raise SystemExit(f"{path}: no {start} ... {end} block to update")
        text = text[: found.start()] + block + text[found.end() :]
    path.write_text(text, encoding="utf-8")


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
