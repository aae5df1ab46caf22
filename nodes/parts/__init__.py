"""The parts: a question asked in parts, each its own pass, and joined.

``decompose`` (a described question whose whole pass found nothing, asked in steps),
``collect_part`` (ends a part's pass; with ``part_input`` and ``next_step``, what each part
starts from and which comes next) and ``combine_parts`` (the parts' answers as one).
"""

from nodes.parts.collect_part import collect_part, next_step, part_input
from nodes.parts.combine_parts import combine_parts
from nodes.parts.decompose import decompose

__all__ = [
    "collect_part",
    "combine_parts",
    "decompose",
    "next_step",
    "part_input",
]
