"""Replay CRAG's decision rules on probed calibration questions and choose the thresholds.

``benchmarks.calibration.evidence_probe`` recorded, per calibration question, the evaluator's
score, the answer and the grounding verdict on three evidence sets: the knowledge-base chunks
(``kb``), the web results (``web``) and both (``union``). A rule is four thresholds and one switch,
applied as the graph applies them:

- ``correct_threshold``: a knowledge-base score at or above it answers from ``kb``;
- ``incorrect_threshold``: below it the knowledge base is dropped and the web alone is the
  evidence (``web``); in between (ambiguous) the evidence is both (``union``);
- ``evidence_threshold``: after the web search the evidence must score at least this to be
  answered from; otherwise the reply is "I don't know" without a generation;
- ``kb_fallback``: except that an ambiguous retrieval whose own score beat the evidence's is
  answered from the knowledge base alone;
- ``answer_threshold``: the answer check's score an answer needs (0: the check is off). It is
  only searched when the records carry the check's scores; otherwise it stays 0.

An answer whose grounding check (or answer check) failed counts as "I don't know" (a retry
seldom rescues it: see docs/benchmarks/mixed). The rule chosen is fixed here, before any
test-split run:

    maximise the mean F1 of the answerable categories (in_kb and web_only, each weighted
    equally) subject to abstaining on at least ``MIN_ABSTENTION`` of the unanswerable
    questions and at most ``MAX_FALSE_ABSTENTION`` of the in_kb questions, and to sending at
    most ``MAX_IN_KB_WEB_SEARCH`` of the in_kb questions to the web; ties go to the rule with
    the fewest false abstentions (in_kb and web_only), then the most abstentions on
    unanswerable questions, then the fewest web searches, then the highest thresholds.

(First committed in 419e1eb with three thresholds and ties going straight to the fewest web
searches; the fallback switch and the quality-first tie-break were added after the first
test-split run, and chosen, as before, on the calibration split alone.)

``MIN_ABSTENTION`` is the quality target (70%) plus a margin of 10 points for the shift from
the calibration split to the test split; ``MAX_FALSE_ABSTENTION`` is the target (10%);
``MAX_IN_KB_WEB_SEARCH`` keeps the median knowledge-base question on the knowledge-base path,
whose cost is what the latency target (p50 at most 1.4x naive RAG's) is about.

    .venv/bin/python -m benchmarks.calibration.decisions out/probe/probe.jsonl --out \
        docs/benchmarks/mixed
    .venv/bin/python -m benchmarks.calibration.decisions out/probe/probe.jsonl --settings  # \
        for --variant
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from benchmarks import write_results
from crag.eval.records import read_records
from crag.eval.tables import markdown_table

MIN_ABSTENTION = 0.80
MAX_FALSE_ABSTENTION = 0.10
MAX_IN_KB_WEB_SEARCH = 0.25
GRID = [round(0.05 * i, 2) for i in range(2, 19)]
CURRENT = (0.5, 0.5, 0.5, 0.0, False)
"""The rule before this benchmark (no ambiguous band, evidence at the lower, check off)."""


@dataclass(frozen=True)
class Rule:
    """CRAG's thresholds and the knowledge-base fallback."""

    correct_threshold: float
    incorrect_threshold: float
    evidence_threshold: float
    answer_threshold: float = 0.0
    kb_fallback: bool = False

    def evidence(self, record: dict[str, Any]) -> str | None:
        """Which evidence set the run answers from; ``None``: it says "I don't know"."""
        kb = record["kb"]["score"]
        if kb is not None and kb >= self.correct_threshold:
            return "kb"
        ambiguous = kb is not None and kb >= self.incorrect_threshold
        chosen = "union" if ambiguous else "web"
        score = record[chosen]["score"]
        if score is not None and score >= self.evidence_threshold:
            return chosen
        if self.kb_fallback and ambiguous and (score is None or kb > score):
            return "kb"
        return None

    def searches_web(self, record: dict[str, Any], chosen: str | None) -> bool:
        """Whether the run searches the web (what the in_kb cost constraint counts).

        ``chosen`` is what ``evidence`` returned for ``record``.
        """
        kb = record["kb"]["score"]
        return kb is None or kb < self.correct_threshold


@dataclass(frozen=True)
class WebFirstRule(Rule):
    """Another action for the ambiguous band: the web alone first, then the knowledge base.

    Above ``correct_threshold`` and below ``incorrect_threshold`` as the graph; in between,
    the web results alone are the evidence if they reach ``evidence_threshold``, else the
    knowledge base's documents if they scored higher than the web's (``kb_fallback``).
    """

    def evidence(self, record: dict[str, Any]) -> str | None:
        """The knowledge base above the band, else the web alone, else the fallback."""
        kb = record["kb"]["score"]
        if kb is not None and kb >= self.correct_threshold:
            return "kb"
        web = record["web"]["score"]
        if web is not None and web >= self.evidence_threshold:
            return "web"
        ambiguous = kb is not None and kb >= self.incorrect_threshold
        if self.kb_fallback and ambiguous and (web is None or kb > web):
            return "kb"
        return None


@dataclass(frozen=True)
class KbFloorRule(Rule):
    """The graph's rule with a floor instead of the fallback.

    Evidence under ``evidence_threshold`` falls back to the knowledge base whenever its own
    score reached ``kb_floor``, whichever band it was in.
    """

    kb_floor: float = 0.0

    def evidence(self, record: dict[str, Any]) -> str | None:
        """The graph's choice, or the knowledge base above the floor where it has none."""
        chosen = Rule.evidence(self, record)
        kb = record["kb"]["score"]
        if chosen is None and kb is not None and kb >= self.kb_floor:
            return "kb"
        return chosen


@dataclass(frozen=True)
class AnswerFirstRule(Rule):
    """The generator and its checks as the knowledge base's evaluator (Self-RAG's order).

    The knowledge base's answer is kept when its documents scored at least
    ``incorrect_threshold``, it is not "I don't know", it is grounded and the answer check
    gives it ``answer_threshold``; otherwise the web results alone (``kb_fallback`` off) or
    both sources (on) are the evidence if they reach ``evidence_threshold``.
    """

    def evidence(self, record: dict[str, Any]) -> str | None:
        """The knowledge base's answer if it is given, else the web's evidence if it scores."""
        kb = record["kb"]
        if kb["score"] is not None and kb["score"] >= self.incorrect_threshold and passes(self, kb):
            return "kb"
        chosen = "union" if self.kb_fallback else "web"
        score = record[chosen]["score"]
        return chosen if score is not None and score >= self.evidence_threshold else None

    def searches_web(self, record: dict[str, Any], chosen: str | None) -> bool:
        """Only a knowledge-base answer that was not given sends the run to the web."""
        return chosen != "kb"


def passes(rule: Rule, part: dict[str, Any]) -> bool:
    """Whether the answer from one evidence set is given.

    It is not "I don't know", it is grounded, and (with the answer check on) it scored at least
    ``answer_threshold``.
    """
    checked = part.get("answer_score")
    refused = rule.answer_threshold > 0 and checked is not None and checked < rule.answer_threshold
    return not (part["abstained"] or part["grounded"] == "no" or refused)


def outcome(rule: Rule, record: dict[str, Any]) -> tuple[float, bool, bool]:
    """F1 (answerable questions), whether the run abstained, whether it searched the web."""
    return _decided(rule, record)[1]


def _decided(rule: Rule, record: dict[str, Any]) -> tuple[str | None, tuple[float, bool, bool]]:
    """The evidence set ``rule`` answers from (chosen once), and the ``outcome``."""
    chosen = rule.evidence(record)
    web = rule.searches_web(record, chosen)
    if chosen is None:
        return chosen, (0.0, True, web)
    part = record[chosen]
    if not passes(rule, part):
        return chosen, (0.0, True, web)
    return chosen, (float(part["f1"] or 0.0), False, web)


def evaluate(rule: Rule, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The rule's metrics on ``records``, per category."""
    row: dict[str, Any] = {"family": FAMILIES[type(rule)], **asdict(rule)}
    results: dict[str, list[tuple[float, bool, bool]]] = {}
    copied: list[float] = []
    for record in records:
        chosen, result = _decided(rule, record)
        results.setdefault(record["category"], []).append(result)
        part = record[chosen or "kb"]
        if not result[1] and part.get("copied") is not None:
            copied.append(float(part["copied"]))
    for category in ("in_kb", "web_only", "unanswerable"):
        got = results.get(category, [])
        n = len(got) or 1
        if category == "unanswerable":
            row["abstention"] = round(sum(a for _, a, _ in got) / n, 3)
            continue
        row[f"{category}_f1"] = round(100 * sum(f for f, _, _ in got) / n, 1)
        row[f"{category}_false_abstention"] = round(sum(a for _, a, _ in got) / n, 3)
        if category == "in_kb":
            row["in_kb_web_search"] = round(sum(w for _, _, w in got) / n, 3)
    row["copied"] = round(sum(copied) / len(copied), 3) if copied else None
    searched = [w for got in results.values() for _, _, w in got]
    row["web_search"] = round(sum(searched) / (len(searched) or 1), 3)
    row["answerable_f1"] = round((row["in_kb_f1"] + row["web_only_f1"]) / 2, 1)
    return row


def feasible(row: dict[str, Any]) -> bool:
    """Whether a rule meets the abstention and cost constraints."""
    return bool(
        row["abstention"] >= MIN_ABSTENTION
        and row["in_kb_false_abstention"] <= MAX_FALSE_ABSTENTION
        and row["in_kb_web_search"] <= MAX_IN_KB_WEB_SEARCH
    )


def rules(answer_checked: bool) -> list[Rule]:
    """Every rule on the grid (lower threshold not above the upper).

    The answer check's threshold varies only when the check's scores were probed.
    """
    answers = [0.0, *GRID] if answer_checked else [0.0]
    grid = itertools.product(GRID, GRID, GRID, answers, (False, True))
    return [Rule(hi, lo, ev, ans, fb) for hi, lo, ev, ans, fb in grid if lo <= hi]


def alternative_rules(answer_checked: bool) -> list[Rule]:
    """Rules of the actions the graph does not take, on the same grid (for comparison only)."""
    graph_rules = rules(answer_checked)
    web_first = [WebFirstRule(**asdict(r)) for r in graph_rules]
    kb_floor = [
        KbFloorRule(**asdict(r), kb_floor=floor)
        for r in graph_rules
        if not r.kb_fallback
        for floor in GRID
        if floor < r.incorrect_threshold
    ]
    # The knowledge base's answer replaces the upper threshold: one rule per lower threshold.
    answer_first = [
        AnswerFirstRule(**asdict(r)) for r in graph_rules if r.correct_threshold == GRID[-1]
    ]
    return [*web_first, *kb_floor, *answer_first]


def checked_answers(records: list[dict[str, Any]]) -> bool:
    """Whether the probe asked the answer check (its threshold is searched only then)."""
    return any(r[n].get("answer_score") is not None for r in records for n in ("kb", "web"))


def choose(records: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The chosen rule's row (``None`` if no rule is feasible) and every rule's row, best first."""
    rows = rank([evaluate(rule, records) for rule in rules(checked_answers(records))])
    return (rows[0] if feasible(rows[0]) else None), rows


def alternatives(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The best rule of each family of actions the graph does not take, best first."""
    best: dict[str, dict[str, Any]] = {}
    for row in rank([evaluate(r, records) for r in alternative_rules(checked_answers(records))]):
        best.setdefault(row["family"], row)
    return rank(list(best.values()))


def rank(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` best first: feasible, then the objective, then the tie-breaks."""
    return sorted(
        rows,
        key=lambda r: (
            feasible(r),
            r["answerable_f1"],
            -(r["in_kb_false_abstention"] + r["web_only_false_abstention"]),
            r["abstention"],
            -r["web_search"],
            r["correct_threshold"],
            r["incorrect_threshold"],
            r["evidence_threshold"],
            -r["answer_threshold"],
            not r["kb_fallback"],
        ),
        reverse=True,
    )


FAMILIES: dict[type[Rule], str] = {
    Rule: "graph",
    WebFirstRule: "web first in the band",
    KbFloorRule: "knowledge base above a floor",
    AnswerFirstRule: "answer first",
}

COLUMNS = [
    ("correct_threshold", "correct"),
    ("incorrect_threshold", "incorrect"),
    ("evidence_threshold", "evidence"),
    ("answer_threshold", "answer"),
    ("kb_fallback", "KB fallback"),
    ("in_kb_f1", "in_kb F1"),
    ("in_kb_false_abstention", "in_kb false abst."),
    ("in_kb_web_search", "in_kb web search"),
    ("web_only_f1", "web_only F1"),
    ("web_only_false_abstention", "web_only false abst."),
    ("abstention", "unanswerable abst."),
    ("web_search", "web search"),
    ("copied", "answers in a document's words"),
    ("answerable_f1", "answerable F1"),
]


def main() -> None:
    """Print and write the replay: the current rule, the chosen one and the best others."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "probe", type=Path, help="probe.jsonl of benchmarks.calibration.evidence_probe"
    )
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/mixed"))
    parser.add_argument(
        "--settings",
        action="store_true",
        help="only print the chosen thresholds as FIELD=VALUE,... (for `crag eval --variant`)",
    )
    args = parser.parse_args()
    records = read_records(args.probe)
    chosen, ranked = choose(records)
    if args.settings:
        if chosen is None:
            sys.exit("No rule meets the constraints on these records; see the full table.")
        print(",".join(f"{f.name}={chosen[f.name]}" for f in fields(Rule)))
        return
    current = evaluate(Rule(*CURRENT), records)
    shown = [
        {"rule": "current", **current},
        *([{"rule": "chosen", **chosen}] if chosen else []),
        *({"rule": "", **r} for r in ranked[1:11]),
    ]
    table = markdown_table(shown, [("rule", "rule"), *COLUMNS])
    counts = {
        c: sum(r["category"] == c for r in records) for c in ("in_kb", "web_only", "unanswerable")
    }
    summary = f"{len(records)} probed calibration questions {counts}; " + (
        f"chosen: {chosen}" if chosen else "no rule meets the constraints"
    )
    others = alternatives(records)
    versus = markdown_table(
        [ranked[0], *others], [("family", "action"), *COLUMNS, ("kb_floor", "KB floor")]
    )
    heading = "Best rule of each action the graph does not take, against the graph's best:"
    print(summary, table, heading, versus, sep="\n\n")
    write_results(
        args.out,
        "decisions",
        summary,
        f"{table}\n\n{heading}\n\n{versus}",
        {"chosen": chosen, "current": current, "top": ranked[:50], "alternatives": others},
    )


if __name__ == "__main__":
    main()
