r"""Fit the light retrieval evaluator on question-paragraph pairs; replay it on the probe.

    python -m benchmarks.calibration.light_evaluator fit --squad SQUAD_DEV \
        --splits benchmarks/data/mixed-calibration.json.gz benchmarks/data/mixed-test.json.gz \
        benchmarks/data/mixed-in-use.json.gz --calibration benchmarks/data/mixed-calibration.json.gz
    python -m benchmarks.calibration.light_evaluator replay --squad SQUAD_DEV \
        docs/benchmarks/mixed/calibration-probe.jsonl --out docs/benchmarks/light-evaluator

``fit``: the pairs are SQuAD v1.1 dev questions of the **calibration split's articles** that no
split asks (``--splits``: none of the calibration, test or in-use questions; the test split's
articles are not read at all). Each question is paired, as crag would meet it, with the four
chunks of its own article closest to it by the encoder (its own paragraph's chunk among them
or not), the two closest chunks of the other calibration articles (a knowledge base without
the answer) and the encyclopedia's first three results (the offline web search). A pair is
positive when the chunk holds one of the gold answers (normalized text). The logistic model
(scikit-learn, L2) is fitted on all pairs and validated leaving one article out: each article's
pairs scored by a model fitted without it (AUC per pair, and per question on its best chunk).
It writes ``nodes/shared/evaluator.json``.

``strips`` (a probe, not shipped): the model grades each grey-zone evidence set of the probe
from the ``STRIPS`` sentences closest to the question by the encoder instead of the whole
documents (the idea: a grading that reads a fifth of the evidence), and the graph's decisions
are replayed with those scores beside the whole documents' (``--out``: ``strips.jsonl``).

``replay``: for each probed calibration question (``evidence_probe``), the light score of the
three evidence sets the probe read (knowledge base, web, both), beside the language model's
recorded score, and whether the set held a gold answer; ``nodes.correction.grade_documents``'s
two bands (``light_correct``, ``light_incorrect``) are chosen there: the graph's decisions are
replayed with each pair of bands (``banded``), and the table prints, beside the model-only
rule, the model gradings a question and the F1 and abstentions of the pairs the rule allows
(``choose_bands``), the chosen one first.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crag.eval.squad import paragraph_id
from crag.eval.tables import markdown_table
from crag.ingest import split_text
from crag_core.clients.embeddings import cosine, default_embeddings
from crag_core.clients.web_providers import EncyclopediaSearch, article_id
from crag_core.text.evidence_signals import sentences_of
from crag_core.text.words import normalize
from nodes.shared import evaluator
from nodes.shared.confidence import features

FEATURES = [
    "cosine",
    "sentence_cosine",
    "coverage",
    "sentence_coverage",
    "pairs",
    "names",
    "names:missing",
    "kind_found",
    "kind_found:missing",
]
OWN_ARTICLE, OTHER_ARTICLES, WEB = 4, 2, 3
PER_PARAGRAPH = 2
"""Questions per paragraph (SQuAD's first ones outside every split): the pairs cover every
paragraph of the calibration articles without one paragraph's questions weighing most."""


def _read(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return dict(json.load(fh))


def holds(text: str, answers: list[str]) -> bool:
    """Whether ``text`` holds one of ``answers`` (normalized, as the benchmarks match)."""
    body = f" {normalize(text)} "
    return any(f" {normalize(a)} " in body for a in answers if normalize(a))


def chunks_of(article: dict[str, Any]) -> list[tuple[str, str]]:
    """(chunk id, text) of an article's paragraphs, as crag's evaluation ingests them."""
    found = []
    for i, paragraph in enumerate(article["paragraphs"]):
        pid = paragraph_id(article["title"], i)
        found += [(f"{pid}__c{j:04d}", c) for j, c in enumerate(split_text(paragraph["context"]))]
    return found


def questions(
    squad: dict[str, Any], titles: set[str], taken: set[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(article title, question) of ``titles``' paragraphs, ``PER_PARAGRAPH`` each, not taken."""
    for article in squad["data"]:
        if article["title"] not in titles:
            continue
        for paragraph in article["paragraphs"]:
            free = [q for q in paragraph["qas"] if q["id"] not in taken][:PER_PARAGRAPH]
            yield from ((article["title"], q) for q in free)


def _nearest(vectors: Any, asked: Any, k: int) -> list[int]:
    return [int(i) for i in (vectors @ asked).argsort()[::-1][:k]]


def pairs(squad: dict[str, Any], titles: set[str], taken: set[str]) -> list[dict[str, Any]]:
    """Every pair's signals, label, article and question id."""
    import numpy as np

    embeddings, web = default_embeddings(), EncyclopediaSearch()
    chunks = {a["title"]: chunks_of(a) for a in squad["data"] if a["title"] in titles}
    vectors = {
        t: np.array(embeddings.embed_documents([c for _, c in cs])) for t, cs in chunks.items()
    }
    rows = []
    for title, q in questions(squad, titles, taken):
        answers = [a["text"] for a in q["answers"]]
        asked = np.array(embeddings.embed_query(q["question"]))
        texts = [chunks[title][i][1] for i in _nearest(vectors[title], asked, OWN_ARTICLE)]
        elsewhere = [
            (float(vectors[t][i] @ asked), chunks[t][i][1])
            for t in sorted(titles - {title})
            for i in _nearest(vectors[t], asked, 1)
        ]
        texts += [text for _, text in sorted(elsewhere, reverse=True)[:OTHER_ARTICLES]]
        docs = [*_documents(texts), *web.search(q["question"], WEB)]
        for kind, doc, signal in zip(
            ["own"] * OWN_ARTICLE + ["other"] * OTHER_ARTICLES + ["web"] * WEB,
            docs,
            evaluator.pair_signals(embeddings, q["question"], docs),
            strict=False,
        ):
            label = holds(doc.page_content, answers)
            rows.append({"id": q["id"], "article": title, "kind": kind, "label": label, **signal})
    return rows


def _documents(texts: list[str]) -> list[Any]:
    from langchain_core.documents import Document

    return [Document(page_content=t) for t in texts]


def _auc(labels: list[bool], scores: list[float]) -> float | None:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores)) if 0 < sum(labels) < len(labels) else None


def _model(rows: list[dict[str, Any]]) -> Any:
    from sklearn.linear_model import LogisticRegression

    x = [features(r, FEATURES) for r in rows]
    return LogisticRegression(C=1.0, max_iter=1000).fit(x, [r["label"] for r in rows])


def validate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Leave one article out: each article's pairs scored by a model fitted without it."""
    scored = []
    for article in sorted({r["article"] for r in rows}):
        held = [r for r in rows if r["article"] == article]
        model = _model([r for r in rows if r["article"] != article])
        p = model.predict_proba([features(r, FEATURES) for r in held])[:, 1]
        scored += [(r, float(s)) for r, s in zip(held, p, strict=True)]
    best: dict[str, tuple[bool, float]] = {}
    for r, s in scored:
        if r["kind"] == "web":
            continue
        label, score = best.get(r["id"], (False, 0.0))
        best[r["id"]] = (label or r["label"], max(score, s))
    return {
        "pairs": len(scored),
        "positive": sum(r["label"] for r, _ in scored),
        "auc_pairs": _auc([r["label"] for r, _ in scored], [s for _, s in scored]),
        "auc_questions_kb": _auc([b[0] for b in best.values()], [b[1] for b in best.values()]),
        "auc_web_pairs": _auc(
            [r["label"] for r, _ in scored if r["kind"] == "web"],
            [s for r, s in scored if r["kind"] == "web"],
        ),
    }


def fit(args: argparse.Namespace) -> int:
    """Fit on the pairs, validate leaving one article out, write the model."""
    squad = _read(args.squad)
    taken = {q["id"] for path in args.splits for q in _read(path)["questions"]}
    calibration = _read(args.calibration)["articles"]
    titles = {t for group in calibration.values() for t in group}
    titles &= {a["title"] for a in squad["data"]}
    rows = pairs(squad, titles, taken)
    checked = validate(rows)
    model = _model(rows)
    out = {
        "features": FEATURES,
        "weights": [round(float(w), 6) for w in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
        "fitted_on": {
            "pairs": "SQuAD v1.1 dev questions of the mixed calibration split's articles "
            "outside every split, each with its 4 closest own-article chunks, 2 chunks of "
            "other articles and 3 encyclopedia results (benchmarks/calibration/light_evaluator.py)",
            "articles": sorted(titles),
            "questions": len({r["id"] for r in rows}),
            "leave_one_article_out": checked,
        },
    }
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(checked, indent=2))
    return 0


BANDS = [0.0, 0.02, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
F1_SLACK = 1.0
ABSTENTION_SLACK = 0.02
"""The bands chosen (fixed before the replay was first run): the pair with the fewest model
gradings a question, subject to the answerable F1 at most ``F1_SLACK`` points and the
unanswerable abstention at most ``ABSTENTION_SLACK`` below the model-only rule's, and the
in_kb false abstention at most ``ABSTENTION_SLACK`` above it; ties to the higher F1."""
GREY = ["model", "ambiguous"]
"""What the grey zone leads to (``light_grey``); ``ambiguous`` was added to the replay after
its first choice, the rule unchanged."""
RULE = (0.6, 0.4, 0.45, 0.0, True)
"""The graph's calibrated thresholds on the model's score (docs/benchmarks/mixed)."""


def _texts(squad: dict[str, Any], web: EncyclopediaSearch) -> dict[str, str]:
    """Chunk id -> text for every SQuAD dev chunk, and ``web:<slug>`` -> article text."""
    found = dict(c for article in squad["data"] for c in chunks_of(article))
    for article in web.articles:
        found.setdefault(article_id(article["title"]), article["text"])
    return found


def light_scores(squad: dict[str, Any], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each record's ``light`` score of its ``kb``, ``web`` and ``union`` evidence sets."""
    from langchain_core.documents import Document

    embeddings = default_embeddings()
    texts = _texts(squad, EncyclopediaSearch())
    for record in records:
        for part in ("kb", "web", "union"):
            docs = [Document(page_content=texts[i]) for i in record[part]["ids"] if i in texts]
            record[part]["light"] = evaluator.light_score(embeddings, record["question"], docs)
    return records


def banded(
    records: list[dict[str, Any]], lo: float, hi: float, rule: Any, grey_zone: str = "model"
) -> tuple[list[dict[str, Any]], float]:
    """``records`` as the graph reads them with the bands, and the model's gradings a question.

    A light score at or above ``hi`` decides "states the answer" (1.0), under ``lo`` "does
    not" (0.0). In between (``light_grey``), ``model``: the model's recorded score stands and
    costs a grading, of the knowledge base and of the evidence the run then reads when it
    searches the web; ``ambiguous``: no grading, the knowledge base is ambiguous (a score
    between the rule's two thresholds) and evidence with web results is answered from (1.0).
    """
    middle = (rule.correct_threshold + rule.incorrect_threshold) / 2
    out, calls = [], 0
    for record in records:
        copy, grey = {**record}, {}
        for part in ("kb", "web", "union"):
            light, score = record[part]["light"], record[part]["score"]
            between = score is not None and lo <= light < hi
            grey[part] = between and grey_zone == "model"
            decided = 1.0 if light >= hi else 0.0
            if between and grey_zone == "ambiguous":
                decided = middle if part == "kb" else 1.0
            copy[part] = {
                **record[part],
                "score": score if grey[part] or score is None else decided,
            }
        kb = copy["kb"]["score"]
        calls += grey["kb"]
        if kb is None or kb < rule.correct_threshold:
            calls += grey["union" if kb is not None and kb >= rule.incorrect_threshold else "web"]
        out.append(copy)
    return out, calls / max(len(records), 1)


def choose_bands(records: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The model-only rule's row, and every band pair's rows (the chosen one first)."""
    from benchmarks.calibration import decisions

    rule = decisions.Rule(*RULE)
    base = {
        **decisions.evaluate(rule, records),
        "calls": round(banded(records, 0.0, 2.0, rule)[1], 2),
    }
    rows = []
    for lo, hi, grey in itertools.product(BANDS, BANDS, GREY):
        if lo <= hi:
            seen, calls = banded(records, lo, hi, rule, grey)
            row = decisions.evaluate(rule, seen)
            band = {"light_incorrect": lo, "light_correct": hi, "light_grey": grey}
            rows.append({**band, "calls": round(calls, 2), **row})
    ok = [
        r
        for r in rows
        if r["answerable_f1"] >= base["answerable_f1"] - F1_SLACK
        and r["abstention"] >= base["abstention"] - ABSTENTION_SLACK
        and r["in_kb_false_abstention"] <= base["in_kb_false_abstention"] + ABSTENTION_SLACK
    ]
    return base, sorted(ok, key=lambda r: (r["calls"], -r["answerable_f1"]))


COLUMNS = [
    ("light_incorrect", "light_incorrect"),
    ("light_correct", "light_correct"),
    ("light_grey", "light_grey"),
    ("calls", "model gradings / q"),
    ("answerable_f1", "answerable F1"),
    ("in_kb_f1", "in_kb F1"),
    ("web_only_f1", "web_only F1"),
    ("abstention", "unanswerable abstention"),
    ("in_kb_false_abstention", "in_kb false abstention"),
    ("web_search", "web search"),
]


def replay(args: argparse.Namespace) -> int:
    """Light-score the probed evidence sets, print and write the bands' table."""
    records = [json.loads(line) for line in args.probe.open(encoding="utf-8")]
    if args.reuse:
        light = {r["id"]: r for r in map(json.loads, args.reuse.open(encoding="utf-8"))}
        for record in records:
            for part in ("kb", "web", "union"):
                record[part]["light"] = light[record["id"]][part]["light"]
    else:
        records = light_scores(_read(args.squad), records)
    base, ok = choose_bands(records)
    args.out.mkdir(parents=True, exist_ok=True)
    kept = [
        {"id": r["id"], "category": r["category"], "question": r["question"]}
        | {p: {k: r[p][k] for k in ("light", "score", "gold_in")} for p in ("kb", "web", "union")}
        for r in records
    ]
    with (args.out / "replay.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in kept)
    table = markdown_table([{**base, "light_incorrect": "model only"}, *ok[:12]], COLUMNS)
    (args.out / "bands-table.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    print("chosen:", {k: ok[0][k] for k, _ in COLUMNS} if ok else None)
    return 0


STRIPS = 3
"""Sentences of the whole evidence set the ``strips`` probe lets the model grade."""


def best_strips(embeddings: Any, question: str, docs: list[Any], k: int = STRIPS) -> list[Any]:
    """The ``k`` sentences of ``docs`` closest to ``question``, by document in their order."""
    from langchain_core.documents import Document

    asked = embeddings.embed_query(question)
    found = []
    for n, doc in enumerate(docs):
        sentences = sentences_of(doc.page_content)[: evaluator.MAX_SENTENCES]
        vectors = embeddings.embed_documents(sentences)
        found += [
            (cosine(asked, v), n, i, s)
            for i, (s, v) in enumerate(zip(sentences, vectors, strict=True))
        ]
    kept: dict[int, list[str]] = {}
    for _, n, _, sentence in sorted(sorted(found, reverse=True)[:k], key=lambda x: x[1:3]):
        kept.setdefault(n, []).append(sentence)
    return [Document(id=docs[n].id, page_content=" … ".join(s)) for n, s in kept.items()]


def _strips_graded(records: list[dict[str, Any]], squad: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's score of each grey-zone evidence set read from its best sentences."""
    from langchain_core.documents import Document

    import graph.factory
    from crag_core.schema.context import Context
    from nodes.shared.prompting import score_on_evidence

    texts = _texts(squad, EncyclopediaSearch())
    ctx = Context(answer_cache=False)
    judge, embeddings = graph.factory.default_services(ctx).judge, default_embeddings()
    rows = []
    for record in records:
        for part in ("kb", "web", "union"):
            light, score = record[part]["light"], record[part]["score"]
            if score is None or not ctx.light_incorrect <= light < ctx.light_correct:
                continue
            ids = [i for i in record[part]["ids"] if i in texts]
            docs = [Document(id=f"S{n + 1}", page_content=texts[i]) for n, i in enumerate(ids)]
            small = best_strips(embeddings, record["question"], docs)
            state = {"question": record["question"]}
            graded, _ = score_on_evidence(state, ctx, judge, "grade_documents", small)
            rows.append(
                {"id": record["id"], "part": part, "gold_in": record[part]["gold_in"]}
                | {"score": score, "strips_score": graded}
                | {"chars": sum(len(d.page_content) for d in small)}
                | {"whole_chars": sum(len(d.page_content) for d in docs)}
            )
    return rows


def strips(args: argparse.Namespace) -> int:
    """Grade the probe's grey-zone evidence sets from their best sentences; replay both."""
    import copy

    from benchmarks.calibration import decisions
    from crag_core.schema.context import Context

    records = [json.loads(line) for line in args.probe.open(encoding="utf-8")]
    light = {r["id"]: r for r in map(json.loads, args.reuse.open(encoding="utf-8"))}
    for record in records:
        for part in ("kb", "web", "union"):
            record[part]["light"] = light[record["id"]][part]["light"]
    rows = _strips_graded(records, _read(args.squad))
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "strips.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    scored = [r for r in rows if r["strips_score"] is not None]
    by_set = {(r["id"], r["part"]): r["strips_score"] for r in scored}
    read = copy.deepcopy(records)
    for record in read:
        for part in ("kb", "web", "union"):
            record[part]["score"] = by_set.get((record["id"], part), record[part]["score"])
    rule = decisions.Rule(*RULE)
    shipped = Context()
    lo, hi = shipped.light_incorrect, shipped.light_correct
    for name, replayed in (("whole documents", records), ("best sentences", read)):
        seen, calls = banded(replayed, lo, hi, rule)
        print(name, {**decisions.evaluate(rule, seen), "gradings": round(calls, 2)})
    gold = [r["gold_in"] for r in scored]
    print(
        f"{len(scored)} grey sets; AUC of 'the gold is in the set': whole documents "
        f"{_auc(gold, [r['score'] for r in scored])}, best sentences "
        f"{_auc(gold, [r['strips_score'] for r in scored])}; characters read "
        f"{sum(r['chars'] for r in scored)} of {sum(r['whole_chars'] for r in scored)}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``fit``, ``replay`` or ``strips``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("fit")
    one.add_argument("--squad", type=Path, required=True)
    one.add_argument("--splits", type=Path, nargs="+", required=True)
    one.add_argument("--calibration", type=Path, required=True)
    one.add_argument("--out", type=Path, default=evaluator.FIT)
    two = sub.add_parser("replay")
    two.add_argument("probe", type=Path)
    two.add_argument("--squad", type=Path)
    two.add_argument("--out", type=Path, required=True)
    two.add_argument("--reuse", type=Path, help="an earlier replay.jsonl: its light scores")
    three = sub.add_parser("strips")
    three.add_argument("probe", type=Path)
    three.add_argument("--squad", type=Path, required=True)
    three.add_argument("--reuse", type=Path, required=True, help="the replay.jsonl's light scores")
    three.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    return {"fit": fit, "replay": replay, "strips": strips}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
