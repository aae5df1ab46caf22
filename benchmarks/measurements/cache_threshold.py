"""Answer-cache threshold: how similar must a question be to reuse a stored answer?

Pairs from SQuAD v1.1 dev, embedded with the product's MiniLM:
- *paraphrases* (should hit): each sampled question rewritten by the embedded model ("the
  same question in other words"), a sample of which is printed to be read;
- *different questions* (must not hit): two questions on the same paragraph, the hardest
  case there is (same topic, same words, another answer).
The threshold is chosen on the first half of the pairs (the lowest similarity at which at
most ``MAX_FALSE_HITS`` of the different-question pairs would hit) and reported on the
second half, which played no part in choosing it.

    .venv/bin/python -m benchmarks.measurements.cache_threshold --dataset \
        ../shared/data/squad-v1.1-dev.json.gz
"""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks import write_results  # noqa: E402
from crag.eval.squad import Question, load_squad  # noqa: E402
from crag.eval.tables import markdown_table  # noqa: E402
from crag_core.text.words import normalize

MAX_FALSE_HITS = 0.01
PARAPHRASE = (
    "Rewrite the question below in other words, so that it asks exactly the same thing. "
    "Reply with the rewritten question only.\n\nQuestion: {question}"
)
COLUMNS = [
    ("split", "pairs"),
    ("threshold", "threshold"),
    ("paraphrase_hits", "paraphrases that hit"),
    ("false_hits", "different questions that hit"),
    ("pairs", "paraphrase pairs (100 different-question pairs per half)"),
]


def sample_pairs(dataset: Path, n: int, seed: int) -> list[tuple[Question, Question]]:
    """``n`` pairs of different questions on the same paragraph."""
    data = load_squad(dataset)
    by_paragraph: dict[str, list[Question]] = {}
    for q in data.questions:
        by_paragraph.setdefault(q.paragraph_id, []).append(q)
    groups = [qs for qs in by_paragraph.values() if len(qs) >= 2]
    rng = random.Random(seed)
    rng.shuffle(groups)
    return [tuple(rng.sample(qs, 2)) for qs in groups[:n]]  # type: ignore[misc]


def paraphrases(questions: list[str]) -> list[str]:
    """Each question rewritten by the embedded model (temperature 0)."""
    from langchain_core.messages import HumanMessage

    from crag_core.schema.context import Context
    from graph.factory import chat_model_for

    llm = chat_model_for(Context(max_tokens=64))
    out = []
    for i, question in enumerate(questions):
        reply = llm.invoke([HumanMessage(PARAPHRASE.format(question=question))])
        text = str(reply.content).strip().splitlines()[0].removeprefix("Question:").strip()
        out.append(text or question)
        if i % 20 == 0:
            print(f"{i}/{len(questions)}: {question!r} -> {out[-1]!r}")
    return out


def similarities(pairs: list[tuple[str, str]]) -> list[float]:
    """Cosine similarity of each pair (MiniLM, normalised)."""
    from crag_core.clients.embeddings import cosine, default_embeddings

    model = default_embeddings()
    left = model.embed_documents([a for a, _ in pairs])
    right = model.embed_documents([b for _, b in pairs])
    return [cosine(u, v) for u, v in zip(left, right, strict=True)]


def choose(negatives: list[float]) -> float:
    """The lowest threshold (2 decimals) at which at most MAX_FALSE_HITS of negatives hit."""
    for t in [i / 100 for i in range(50, 101)]:
        if sum(s >= t for s in negatives) <= MAX_FALSE_HITS * len(negatives):
            return t
    return 1.0


def row(split: str, t: float, pos: list[float], neg: list[float]) -> dict[str, Any]:
    """Hit rates at threshold ``t``."""
    return {
        "split": split,
        "threshold": f"{t:.2f}",
        "paraphrase_hits": f"{100 * sum(s >= t for s in pos) / len(pos):.1f}%",
        "false_hits": f"{100 * sum(s >= t for s in neg) / len(neg):.1f}%",
        "pairs": len(pos),
    }


def main() -> None:
    """Sample, paraphrase, embed, choose on one half, report on the other."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    parser.add_argument(
        "--reuse", type=Path, default=None, help="cache.json of an earlier run: its paraphrases"
    )
    args = parser.parse_args()
    pairs = sample_pairs(args.dataset, args.pairs, args.seed)
    originals = [a.question for a, _ in pairs]
    if args.reuse:
        stored = {
            e["question"]: e["paraphrase"]
            for e in json.loads(args.reuse.read_text())["paraphrases"]
        }
        rewritten = [stored[q] for q in originals]
    else:
        rewritten = paraphrases(originals)
    # A "paraphrase" equal to its question is the exact-repeat case (always a hit): left out.
    kept = [
        i
        for i, (q, p) in enumerate(zip(originals, rewritten, strict=True))
        if normalize(q) != normalize(p)
    ]
    pos_all = similarities(list(zip(originals, rewritten, strict=True)))
    pos = [pos_all[i] for i in kept]
    neg = similarities([(a.question, b.question) for a, b in pairs])
    half = len(pairs) // 2
    pos_half = sum(i < half for i in kept)
    threshold = choose(neg[:half])
    rows = [
        row("choosing half", threshold, pos[:pos_half], neg[:half]),
        row("held-out half", threshold, pos[pos_half:], neg[half:]),
    ]
    for t in (0.85, 0.90, 0.95):
        rows.append(row(f"choosing half at {t:.2f}", t, pos[:pos_half], neg[:half]))
        rows.append(row(f"held-out half at {t:.2f}", t, pos[pos_half:], neg[half:]))
    table = markdown_table(rows, COLUMNS)
    summary = (
        f"{len(pairs)} SQuAD v1.1 dev paragraphs with two or more questions (seed {args.seed}): "
        "a paraphrase of one question by the embedded model (should hit; "
        f"{len(pairs) - len(kept)} paraphrases equal to their question left out) and another "
        "question on the same paragraph (must not). Threshold: the lowest at which at most "
        f"{MAX_FALSE_HITS:.0%} of the choosing half's different-question pairs hit."
    )
    print(f"\n{summary}\n\n{table}")
    examples = [
        {"question": q, "paraphrase": p, "similarity": round(s, 3)}
        for q, p, s in zip(originals, rewritten, pos_all, strict=True)
    ]
    data = {"threshold": threshold, "rows": rows, "paraphrases": examples}
    write_results(args.out, "cache", summary, table, data)


if __name__ == "__main__":
    main()
