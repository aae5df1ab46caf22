"""Fit the answer confidence on the calibration split, choose ``min_confidence``, report both.

Fit (calibration split only): the CRAG records of ``crag eval --format mixed`` on
``benchmarks/data/mixed-calibration.json.gz`` carry each answer's ``signals``
(``nodes.shared.confidence.signals``). Every answer that is not "I don't know" is a training
example, labelled right or wrong as the eval judges it (``crag.eval.metrics.verdict``). The model is
a logistic regression with an L2 penalty on standardised features (``FEATURES``, chosen before the
fit), written to ``nodes/shared/confidence.json`` on the raw scale.

The rule that chooses the default ``min_confidence``, fixed here before any test-split run:

    on a 0.05 grid from 0 to 0.95, the threshold that maximises the calibration split's
    truthfulness score when every answer whose confidence is below it becomes "I don't know";
    each record's confidence is cross-validated (the model fitted on the other four of five
    folds), so the choice does not reward the model for having seen the record; ties go to
    the lowest threshold (the one that answers most).

``select`` compares candidate input sets on the calibration split by the rule fixed here before
the records it was first used on existed (the #43 gate: new signals ``type_fits``, ``rank``,
``judges_agree``, and the knowledge base's and the web's ``agree``):

    each set of ``CANDIDATES`` is scored by its cross-validated AUC (right vs wrong answers,
    5 folds in file order) and by the truthfulness its cross-validated confidences reach at the
    threshold the rule above chooses for it. A set replaces the shipped inputs only if its AUC
    is higher by at least ``MIN_GAIN`` and its truthfulness is not lower; of several such sets,
    the highest AUC (ties: fewer inputs). Otherwise the shipped inputs stay (refitted).

``support`` adds the judge's score of the sentence an answer was copied from to records made
before the graph asked for it (the graph's own function on the record's evidence).

Report (any split, from records that carry ``confidence``): a reliability table (answers per
confidence band and how many were right) and a risk-coverage table (for each threshold: share
of questions answered, share of those answers right, truthfulness).

    python -m benchmarks.calibration.confidence support out/cal/crag/predictions.jsonl --out \
        records.jsonl
    python -m benchmarks.calibration.confidence fit out/cal/crag/predictions.jsonl
    python -m benchmarks.calibration.confidence report out/test/crag/predictions.jsonl --name test
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from crag.eval.metrics import record_verdict, truthfulness
from crag.eval.records import read_records
from crag.eval.report import commit
from crag.eval.tables import markdown_table
from nodes.shared.confidence import FIT, features, logistic

BASE = [
    "retrieval_score",
    "retrieval_score:missing",
    "subject_overlap",
    "subject_overlap:missing",
    "support_score",
    "support_score:missing",
    "retries",
]
"""The model's inputs (``nodes.shared.confidence.features``), chosen on the calibration split by the
cross-validated AUC and truthfulness of candidate sets (docs/benchmarks/confidence): the
evaluator's score of the knowledge base, how much of the question the answer's sentence
shares, the judge's score of that sentence, and the retries. The first set fixed before the
fit (every signal) scored lower (AUC 0.852 vs 0.873): it fitted noise."""
CANDIDATES: dict[str, list[str]] = {
    "shipped": BASE,
    "+ type": [*BASE, "type_fits", "type_fits:missing"],
    "+ rank": [*BASE, "rank", "rank:missing"],
    "+ judges agree": [*BASE, "judges_agree", "judges_agree:missing"],
    "+ kb and web agree": [*BASE, "agree"],
    "+ all four": [
        *BASE,
        "type_fits",
        "type_fits:missing",
        "rank",
        "rank:missing",
        "judges_agree",
        "judges_agree:missing",
        "agree",
    ],
    "+ light": [*BASE, "light_score", "light_score:missing"],
    "light for the evaluator": ["light_score", "light_score:missing", *BASE[2:]],
    "web answers by their evidence": ["source_score", "source_score:missing", *BASE[2:]],
}
"""The input sets ``select`` compares: the shipped one, and it with each new signal, and all.
The last two (#73, fixed before the records they are compared on): the light evaluator's
score of the knowledge base beside the pass's ``retrieval_score`` (the light score where it
decided, the model's in its grey zone), and in its place. The last (#73, written before it was
scored): ``source_score`` in ``retrieval_score``'s place, the evidence's score for an answer
copied from web results only (on the light records two right web answers were withheld with
the knowledge base's light score near 0 as their evaluator input)."""
FEATURES = CANDIDATES["shipped"]
"""The inputs ``fit`` writes: the set ``select`` chose."""
MIN_GAIN = 0.01
"""The cross-validated AUC a set must add to replace the shipped inputs."""
L2 = 1.0
"""Penalty on the standardised weights (the intercept is not penalised)."""
FOLDS = 5
GRID = [round(0.05 * i, 2) for i in range(20)]
BANDS = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)]


def source_score(measured: dict[str, Any]) -> float | None:
    """A candidate input (#73, not chosen): the evaluator's score of the answer's evidence.

    ``evidence_score`` for an answer copied from web results only, else ``retrieval_score``.
    """
    from_web_only = measured.get("in_web") and not measured.get("in_kb")
    return measured.get("evidence_score") if from_web_only else measured.get("retrieval_score")


def examples(
    records: list[dict[str, Any]], names: list[str] = FEATURES
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Inputs, labels (1 right, 0 wrong) and record indexes of the answered records."""
    rows, labels, kept = [], [], []
    for i, r in enumerate(records):
        judged = record_verdict(r)
        if judged == "unknown":
            continue
        measured = {**r["signals"], "source_score": source_score(r["signals"])}
        rows.append(features(measured, names))
        labels.append(1.0 if judged == "right" else 0.0)
        kept.append(i)
    return np.array(rows, dtype=float), np.array(labels, dtype=float), kept


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method (bounded) on standardised ``x``; raw-scale weights."""
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / std])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-z @ w))
        gradient = z.T @ (p - y) + penalty * w
        hessian = z.T @ (z * (p * (1 - p))[:, None]) + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    weights = w[1:] / std
    return weights, float(w[0] - (w[1:] * mean / std).sum())


def predict(x: np.ndarray, weights: np.ndarray, intercept: float) -> np.ndarray:
    """P(right) for each row of ``x``."""
    return np.asarray(1 / (1 + np.exp(-(x @ weights + intercept))))


def cross_validated(x: np.ndarray, y: np.ndarray, folds: int = FOLDS) -> np.ndarray:
    """Each example's P(right) from the model fitted on the other folds (fixed order)."""
    out = np.zeros(len(y))
    for k in range(folds):
        test = np.arange(len(y)) % folds == k
        weights, intercept = fit(x[~test], y[~test])
        out[test] = predict(x[test], weights, intercept)
    return out


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(a right answer scores above a wrong one), ties counting half (Mann-Whitney)."""
    right, wrong = scores[labels == 1], scores[labels == 0]
    if not len(right) or not len(wrong):
        return float("nan")
    above = (right[:, None] > wrong[None, :]).sum() + 0.5 * (right[:, None] == wrong[None, :]).sum()
    return float(above / (len(right) * len(wrong)))


def gated(records: list[dict[str, Any]], scores: dict[int, float], threshold: float) -> list[str]:
    """Every record's verdict when answers scoring under ``threshold`` become "I don't know"."""
    out = []
    for i, r in enumerate(records):
        judged = record_verdict(r)
        if judged != "unknown" and scores.get(i, 1.0) < threshold:
            judged = "unknown"
        out.append(judged)
    return out


def choose_threshold(records: list[dict[str, Any]], scores: dict[int, float]) -> float:
    """The rule in the module docstring: best truthfulness on the grid, ties to the lowest."""
    best = max(truthfulness(gated(records, scores, t)) for t in GRID)
    return next(t for t in GRID if truthfulness(gated(records, scores, t)) == best)


def reliability(records: list[dict[str, Any]], scores: dict[int, float]) -> list[dict[str, Any]]:
    """Answers per confidence band, how many were right, and the mean confidence."""
    rows = []
    for low, high in BANDS:
        inside = [i for i, s in scores.items() if low <= s < high]
        right = sum(record_verdict(records[i]) == "right" for i in inside)
        mean = sum(scores[i] for i in inside) / len(inside) if inside else None
        rows.append(
            {
                "band": f"{low:.1f}–{min(high, 1.0):.1f}",
                "answers": len(inside),
                "right": right,
                "share_right": f"{100 * right / len(inside):.0f}%" if inside else None,
                "mean_confidence": f"{mean:.2f}" if mean is not None else None,
            }
        )
    return rows


def risk_coverage(records: list[dict[str, Any]], scores: dict[int, float]) -> list[dict[str, Any]]:
    """For each threshold: share answered, share of those right, the counts, truthfulness."""
    rows = []
    for t in GRID:
        judged = gated(records, scores, t)
        right, wrong = judged.count("right"), judged.count("wrong")
        answered = right + wrong
        rows.append(
            {
                "threshold": f"{t:.2f}",
                "answered": f"{100 * answered / len(judged):.0f}%",
                "right_of_answers": f"{100 * right / answered:.0f}%" if answered else None,
                "right": right,
                "unknown": judged.count("unknown"),
                "wrong": wrong,
                "truthfulness": f"{truthfulness(judged):+.1f}%",
            }
        )
    return rows


RELIABILITY_COLUMNS = [
    ("band", "confidence"),
    ("answers", "answers"),
    ("right", "right"),
    ("share_right", "right %"),
    ("mean_confidence", "mean confidence"),
]
RISK_COLUMNS = [
    ("threshold", "min_confidence"),
    ("answered", "answered"),
    ("right_of_answers", "right of answers"),
    ("right", "right"),
    ("unknown", '"I don\'t know"'),
    ("wrong", "wrong"),
    ("truthfulness", "truthfulness"),
]


def tables(records: list[dict[str, Any]], scores: dict[int, float], title: str) -> str:
    """The reliability and risk-coverage tables of ``records`` scored by ``scores``."""
    return "\n\n".join(
        [
            f"### Reliability ({title})",
            markdown_table(reliability(records, scores), RELIABILITY_COLUMNS),
            f"### Risk and coverage ({title})",
            markdown_table(risk_coverage(records, scores), RISK_COLUMNS),
        ]
    )


def fit_command(predictions: Path, out: Path, write: Path) -> str:
    """Fit on ``predictions``, choose ``min_confidence``, write the model and the report."""
    records = read_records(predictions)
    x, y, kept = examples(records)
    weights, intercept = fit(x, y)
    cv = dict(zip(kept, cross_validated(x, y).tolist(), strict=True))
    threshold = choose_threshold(records, cv)
    model = {
        "features": FEATURES,
        "weights": [round(float(w), 6) for w in weights],
        "intercept": round(intercept, 6),
        "min_confidence": threshold,
        "fitted_on": {
            "records": str(predictions),
            "commit": commit(),
            "questions": len(records),
            "answers": len(kept),
            "right": int(y.sum()),
            "l2": L2,
        },
    }
    write.parent.mkdir(parents=True, exist_ok=True)
    write.write_text(json.dumps(model, indent=2) + "\n")
    fitted = dict(zip(kept, predict(x, weights, intercept).tolist(), strict=True))
    weights_table = markdown_table(
        [{"feature": f, "weight": f"{w:+.3f}"} for f, w in zip(FEATURES, weights, strict=True)]
        + [{"feature": "(intercept)", "weight": f"{intercept:+.3f}"}],
        [("feature", "feature"), ("weight", "weight (raw scale)")],
    )
    report = "\n\n".join(
        [
            f"## Confidence fitted on {len(records)} calibration questions "
            f"({len(kept)} answers, {int(y.sum())} right); min_confidence chosen: {threshold}",
            weights_table,
            tables(records, cv, "calibration, cross-validated: what chose min_confidence"),
            tables(records, fitted, "calibration, the fitted model on its own records"),
        ]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibration.md").write_text(report + "\n")
    return report


def gate_row(
    name: str, inputs: int, area: float, threshold: float, judged: list[str]
) -> dict[str, Any]:
    """One line of the ``select`` table: a model's AUC, its threshold and what it gates to."""
    return {
        "set": name,
        "inputs": inputs,
        "auc": area,
        "threshold": threshold,
        "right": judged.count("right"),
        "unknown": judged.count("unknown"),
        "wrong": judged.count("wrong"),
        "truthfulness": truthfulness(judged),
    }


def select(records: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Every candidate set's cross-validated AUC and gated counts; the set the rule picks."""
    rows = []
    for name, names in CANDIDATES.items():
        x, y, kept = examples(records, names)
        cv = cross_validated(x, y)
        scores = dict(zip(kept, cv.tolist(), strict=True))
        threshold = choose_threshold(records, scores)
        rows.append(
            gate_row(name, len(names), auc(cv, y), threshold, gated(records, scores, threshold))
        )
    shipped = rows[0]
    better = [
        r
        for r in rows[1:]
        if r["auc"] >= shipped["auc"] + MIN_GAIN and r["truthfulness"] >= shipped["truthfulness"]
    ]
    chosen = max(better, key=lambda r: (r["auc"], -r["inputs"]))["set"] if better else "shipped"
    return chosen, rows


def select_command(predictions: Path, out: Path) -> str:
    """The ``select`` table, the shipped model's own scores beside it; names the chosen set."""
    records = read_records(predictions)
    chosen, rows = select(records)
    fit_now = json.loads(FIT.read_text(encoding="utf-8"))
    x, y, kept = examples(records, fit_now["features"])
    shipped = predict(x, np.array(fit_now["weights"]), fit_now["intercept"])
    judged = gated(
        records, dict(zip(kept, shipped.tolist(), strict=True)), fit_now["min_confidence"]
    )
    as_shipped = gate_row(
        "the shipped model as it is (not refitted)",
        len(fit_now["features"]),
        auc(shipped, y),
        fit_now["min_confidence"],
        judged,
    )
    table = markdown_table(
        [
            {
                **r,
                "auc": f"{r['auc']:.3f}",
                "truthfulness": f"{r['truthfulness']:+.1f}%",
                "set": f"**{r['set']}**" if r["set"] == chosen else r["set"],
            }
            for r in [*rows, as_shipped]
        ],
        [
            ("set", "inputs"),
            ("inputs", "n"),
            ("auc", "AUC (cross-validated)"),
            ("threshold", "min_confidence (rule)"),
            ("right", "right"),
            ("unknown", '"I don\'t know"'),
            ("wrong", "wrong"),
            ("truthfulness", "truthfulness"),
        ],
    )
    text = (
        f"## Input sets on {len(records)} calibration questions ({len(kept)} answers, "
        f"{int(y.sum())} right); chosen: {chosen}\n\n{table}"
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "selection.md").write_text(text + "\n")
    return text


def report_command(predictions: Path, out: Path, name: str, rescore: Path | None = None) -> str:
    """Reliability and risk-coverage of a run whose records carry the graph's confidence.

    An answer the graph withheld under ``min_confidence`` carries its guess and confidence
    (``withheld``); the tables score it as the guess, so every threshold can be read.
    ``rescore``: a fitted model (``confidence.json``) scores each answer from its recorded
    ``signals`` instead, as the graph would have with that model; the gated counts at its
    ``min_confidence`` head the tables.
    """
    records = read_records(predictions)
    model = json.loads(rescore.read_text(encoding="utf-8")) if rescore else None
    scores = {}
    for i, r in enumerate(records):
        if r.get("withheld"):
            r = records[i] = {
                **r,
                "prediction": r["withheld"],
                "confidence": r["withheld_confidence"],
            }
        if model is not None and r.get("confidence") is not None:
            r["confidence"] = logistic(model, r["signals"])
        if r.get("confidence") is not None:
            scores[i] = float(r["confidence"])
    text = tables(records, scores, name)
    if model is not None:
        judged = gated(records, scores, model["min_confidence"])
        counts = "/".join(str(judged.count(v)) for v in ("right", "unknown", "wrong"))
        text = (
            f"Rescored by {rescore} (min_confidence {model['min_confidence']}): right / "
            f'"I don\'t know" / wrong {counts}, truthfulness {truthfulness(judged):+.1f}%\n\n'
            + text
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.md").write_text(text + "\n")
    return text


def support_command(predictions: Path, out: Path) -> int:
    """Add the copied sentence's judge score to records made before the graph asked it.

    The score is the graph's own (``nodes.correction.check_hallucination.support_score``, on the
    record's evidence), so a record scored here reads as one the graph scored. Records that have it
    keep it; returns how many were scored.
    """
    from langchain_core.documents import Document

    from crag_core.schema.context import Context
    from graph.factory import chat_model_for
    from nodes.correction.check_hallucination import support_score

    ctx = Context()
    judge = chat_model_for(ctx)
    scored = 0
    lines = []
    for r in read_records(predictions):
        signals = r.setdefault("signals", {})
        if "support_score" not in signals and record_verdict(r) != "unknown":
            docs = [Document(page_content=e["text"]) for e in r.get("evidence") or []]
            state: Any = {"question": r["question"]}
            signals["support_score"], _ = support_score(state, ctx, judge, r["prediction"], docs)
            scored += 1
        lines.append(json.dumps(r, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return scored


def main(argv: list[str] | None = None) -> int:
    """``fit``, ``select``, ``report`` or ``support``; prints the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["fit", "select", "report", "support"])
    parser.add_argument("predictions", type=Path)
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/confidence"))
    parser.add_argument("--name", default="test", help="report: the table's name")
    parser.add_argument("--model", type=Path, default=FIT, help="fit: where the model goes")
    parser.add_argument(
        "--rescore", type=Path, help="report: score the answers by this fitted model's signals"
    )
    args = parser.parse_args(argv)
    if not args.predictions.is_file():
        print(f"No records at {args.predictions}.", file=sys.stderr)
        return 2
    if args.command == "support":
        print(f"{support_command(args.predictions, args.out)} answers scored; wrote {args.out}")
    elif args.command == "select":
        print(select_command(args.predictions, args.out))
    elif args.command == "fit":
        print(fit_command(args.predictions, args.out, args.model))
    else:
        print(report_command(args.predictions, args.out, args.name, args.rescore))
    return 0


if __name__ == "__main__":
    sys.exit(main())
