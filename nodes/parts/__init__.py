"""The parts: a question asked in parts, each its own pass, and joined.

``decompose`` (a described question whose whole pass found nothing, asked in steps),
``collect_part`` (ends a part's pass; with ``part_input``, ``next_step`` and
``no_time_for_step``, what each part starts from, which comes next and whether it begins)
and ``combine_parts`` (the parts' answers as one).
"""

from nodes.parts.collect_part import collect_part, next_step, no_time_for_step, part_input
from nodes.parts.combine_parts import combine_parts
from nodes.parts.decompose import decompose

__all__ = [
    "collect_part",
    "combine_parts",
    "decompose",
    "next_step",
    "no_time_for_step",
    "part_input",
]
