"""Build the mixed benchmark: answers in the knowledge base, only on the web, or nowhere.

Questions come from SQuAD v1.1 dev and the bundled encyclopedia (both CC BY-SA 4.0).

- The knowledge base is every paragraph of the SQuAD dev articles that have no entry in the
  encyclopedia, so a knowledge-base question cannot be answered from the web instead.
- ``in_kb``: questions on those articles (their gold paragraph is in the knowledge base).
- ``web_only``: questions on the other articles whose own encyclopedia summary states a gold
  answer as the answer to the question. Candidates are found mechanically (a summary sentence
  holds a gold answer and shares a content word with the question); each candidate was then
  read by hand, and only those whose sentence really answers the question are kept
  (``REVIEWED_WEB_ONLY``: 62 of 153 candidates; a gold answer merely mentioned, as "BBC" for
  "who released reconstructions of Doctor Who episodes?", was dropped).
- ``unanswerable``: questions on the other articles none of whose gold answers occurs in the
  knowledge base or in any of the 10,033 encyclopedia summaries.

The calibration split's few web-only questions (12) were too few to choose thresholds with:
the test split showed a band of evaluator scores where 13 web-only questions fell and the
calibration split had 2. So the calibration split also takes questions of its own articles
that another encyclopedia entry answers: candidates are the questions whose top 3 offline
search results (what the graph's web search returns for the question) hold an answering
sentence (``--web-candidates`` lists them), and each was read by hand
(``REVIEWED_CROSS_WEB_ONLY``: 11 of 60 kept). The test split is unchanged.

Articles are split, not questions: the calibration split's articles (where thresholds and
prompts are tuned) share nothing with the test split's (what is reported), except that the
knowledge base holds every knowledge-base article for both. The web-only questions are few
(a summary answers few SQuAD questions), so the calibration split takes articles only until
it has ``MIN_CALIBRATION_WEB_ONLY`` of them and the test split keeps the rest.

    .venv/bin/python -m benchmarks.calibration.mixed_dataset --squad \
        ../shared/data/squad-v1.1-dev.json.gz
        --encyclopedia crag_core/clients/resources/wikipedia-vital-articles-en.jsonl.gz \
        --out benchmarks/data
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
from pathlib import Path
from typing import Any

from crag.eval.mixed import CATEGORIES
from crag_core.text.words import STOPWORDS, normalize

SPLITS = ("calibration", "test")
CALIBRATION_SHARE = 0.3
"""Share of each group of articles that goes to the calibration split."""
PER_CATEGORY = {"calibration": 20, "test": 50}
CALIBRATION_EXTRA = {"in_kb": 60, "web_only": 0, "unanswerable": 40}
"""Questions added to the calibration split after both splits were drawn, with their own random
generator, so the test split (and the first calibration questions) stay as first drawn. A
threshold that must keep 95% of knowledge-base questions needs more than 20 of them to be
estimated; every web-only question of the calibration articles is already in."""
CALIBRATION_EXTRA_2 = {"in_kb": 60, "web_only": 0, "unanswerable": 20}
"""A second draw, appended last with a generator of its own (the test split and every earlier
calibration question stay as they were): 80 in_kb questions held only 4 knowledge-base
retrievals scored under 0.45, too few to tell how often such a retrieval still holds the
answer, which is where a threshold trades in_kb false abstention against unanswerable
abstention."""
MIN_CALIBRATION_WEB_ONLY = 10
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def contains(text: str, answer: str) -> bool:
    """Whether normalized ``text`` holds normalized ``answer`` as whole words."""
    needle = normalize(answer)
    return bool(needle) and f" {needle} " in f" {text} "


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` that are not stop words."""
    return {w for w in normalize(text).split() if w not in STOPWORDS and len(w) > 2}


def answering_sentence(summary: str, question: str, answers: list[str]) -> str | None:
    """The summary sentence holding a gold answer and a word of the question (not of the answer).

    This finds candidates; whether the sentence answers the question was judged by hand.
    """
    asked = content_words(question) - {w for a in answers for w in content_words(a)}
    for sentence in _SENTENCE.split(summary):
        norm = f" {normalize(sentence)} "
        if any(contains(norm, a) for a in answers) and asked & content_words(sentence):
            return sentence
    return None


REVIEWED_WEB_ONLY = frozenset(
    {
        "56ddde6b9a695914005b962b",
        "56ddde6b9a695914005b962c",
        "56dde0ba66d3e219004dad76",
        "56df9e2838dc4217001520f8",
        "56e0b94b7aa994140058e6b9",
        "56e0e5f37aa994140058e78b",
        "56e16182e3433e1400422e28",
        "56e16182e3433e1400422e2a",
        "56e17644e3433e1400422f42",
        "56e17e6ee3433e1400422f81",
        "56f7c651aef2371900625bf5",
        "57112686b654c5140001fbd4",
        "57112686b654c5140001fbd7",
        "571155ae2419e31400955591",
        "571a484210f8ca1400304fbd",
        "571a484210f8ca1400304fbe",
        "571a484210f8ca1400304fc1",
        "571bb2269499d21900609caa",
        "571bb2269499d21900609cab",
        "571c3a685efbb31900334db2",
        "571c3a685efbb31900334db3",
        "571c3a685efbb31900334db4",
        "571c3a685efbb31900334db5",
        "571c97e2dd7acb1400e4c11f",
        "5725b33f6a3fe71400b8952d",
        "5725b33f6a3fe71400b89531",
        "5725b81b271a42140099d097",
        "5725b81b271a42140099d099",
        "5725b888ec44d21400f3d456",
        "5725ba5038643c19005acbe7",
        "5726542ff1498d1400e8dc2b",
        "57269e8a5951b619008f77f5",
        "5727580bf1498d1400e8f69e",
        "5727aa413acd2414000de921",
        "5727afa82ca10214002d93c5",
        "5727efabff5b5019007d98e2",
        "5727efabff5b5019007d98e3",
        "5727efabff5b5019007d98e4",
        "5727efabff5b5019007d98e6",
        "5727f3193acd2414000df0a9",
        "5728349dff5b5019007d9eff",
        "57285ed5ff5b5019007da1b7",
        "572860e03acd2414000df977",
        "572860e03acd2414000df978",
        "572860e03acd2414000df979",
        "57287ccb2ca10214002da3dc",
        "57287ccb2ca10214002da3dd",
        "5728dab94b864d1900164f96",
        "5728dab94b864d1900164f98",
        "5728dab94b864d1900164f99",
        "5728eff82ca10214002daadd",
        "572953013f37b31900478250",
        "57296d571d04691400779414",
        "57296d571d04691400779415",
        "57296d571d04691400779416",
        "5729e2316aef0514001550c4",
        "572f5533a23a5019007fc55c",
        "572fe1d404bcaa1900d76e37",
        "572fe41e04bcaa1900d76e4f",
        "573166ede6313a140071cef3",
        "5732b6b5328d981900602021",
        "5733cf61d058e614000b62e9",
    }
)


REVIEWED_CROSS_WEB_ONLY = frozenset(
    {
        "5729fd56af94a219006aa72f",  # removing trees from a forest: Deforestation
        "5725bc7138643c19005acc1e",  # the first person in space's country: Yuri Gagarin
        "5725d01989a1e219009abf29",  # von Braun's employer before NASA: Wernher von Braun
        "5725d403ec44d21400f3d65d",  # the Saturn V's stages: Saturn V
        "573060b48ab72b1400f9c4c9",  # the eastern imperial country: New Imperialism
        "57308cf88ab72b1400f9c578",  # Edward Said's book: Edward Said
        "573092088ab72b1400f9c596",  # the Asante Empire's region: Asante Empire
        "5730b1022461fd1900a9cfa5",  # the area Japan conquered in 1931: Second Sino-Japanese War
        "5730bc308ab72b1400f9c73f",  # the Ottomans' third continent: Ottoman Empire
        "5733140a4776f419006606e1",  # Poland's capital in 1313: Kraków
        "57332b66d058e614000b575a",  # who set up the Second Polish Republic: Józef Piłsudski
    }
)
"""Calibration questions answered by another article's summary (read by hand, see above)."""


def web_candidates(questions: list[dict[str, Any]], k: int = 3) -> list[dict[str, Any]]:
    """Questions whose top ``k`` offline search results hold an answering sentence."""
    from crag_core.clients.web_providers import EncyclopediaSearch

    search = EncyclopediaSearch()
    found = []
    for q in questions:
        for doc in search.search(q["question"], k):
            sentence = answering_sentence(doc.page_content, q["question"], q["answers"])
            if sentence:
                found.append(q | {"entry": doc.metadata["title"], "sentence": sentence})
                break
    return found


def load(squad: Path, encyclopedia: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """SQuAD articles, and the encyclopedia's summaries by normalized title."""
    with gzip.open(squad, "rt", encoding="utf-8") as fh:
        articles = json.load(fh)["data"]
    with gzip.open(encyclopedia, "rt", encoding="utf-8") as fh:
        entries = [json.loads(line) for line in fh if line.strip()]
    return articles, {e["title"].replace(" ", "_").lower(): e["text"] for e in entries}


def split_articles(titles: list[str], rng: random.Random) -> dict[str, list[str]]:
    """``titles`` shuffled and cut into calibration and test."""
    shuffled = sorted(titles)
    rng.shuffle(shuffled)
    cut = max(1, round(len(shuffled) * CALIBRATION_SHARE))
    return {"calibration": shuffled[:cut], "test": shuffled[cut:]}


def split_by_web_only(
    titles: list[str], web_only: dict[str, int], rng: random.Random
) -> dict[str, list[str]]:
    """``titles`` shuffled; calibration takes articles until it has enough web-only questions."""
    shuffled = sorted(titles)
    rng.shuffle(shuffled)
    calibration: list[str] = []
    while shuffled and sum(web_only[t] for t in calibration) < MIN_CALIBRATION_WEB_ONLY:
        calibration.append(shuffled.pop(0))
    return {"calibration": calibration, "test": shuffled}


def questions_of(article: dict[str, Any]) -> list[dict[str, Any]]:
    """Every question of a SQuAD article with its distinct gold answers."""
    return [
        {
            "id": qa["id"],
            "question": qa["question"].strip(),
            "answers": list(dict.fromkeys(a["text"] for a in qa["answers"])),
        }
        for para in article["paragraphs"]
        for qa in para["qas"]
    ]


def build(squad: Path, encyclopedia: Path, seed: int) -> dict[str, dict[str, Any]]:
    """Both splits: ``{split: {"kb": [...], "questions": [...]}}``."""
    rng = random.Random(seed)
    articles, summaries = load(squad, encyclopedia)
    by_title = {a["title"]: a for a in articles}
    kb_titles = [t for t in by_title if t.lower() not in summaries]
    other_titles = [t for t in by_title if t.lower() in summaries]
    kb = [
        {
            "title": t.replace("_", " "),
            "paragraphs": [p["context"] for p in by_title[t]["paragraphs"]],
        }
        for t in sorted(kb_titles)
    ]
    kb_text = " " + " ".join(normalize(p) for a in kb for p in a["paragraphs"]) + " "
    everywhere = kb_text + " ".join(normalize(s) for s in summaries.values()) + " "
    web_only = {
        t: [q for q in questions_of(by_title[t]) if q["id"] in REVIEWED_WEB_ONLY]
        for t in other_titles
    }
    kb_split = split_articles(kb_titles, rng)
    other_split = split_by_web_only(other_titles, {t: len(qs) for t, qs in web_only.items()}, rng)
    out: dict[str, dict[str, Any]] = {}
    pools_by_split: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for split in SPLITS:
        pools: dict[str, list[dict[str, Any]]] = {c: [] for c in CATEGORIES}
        for title in kb_split[split]:
            pools["in_kb"] += questions_of(by_title[title])
        for title in other_split[split]:
            pools["web_only"] += web_only[title]
            pools["unanswerable"] += [
                q
                for q in questions_of(by_title[title])
                if not any(contains(everywhere, a) for a in q["answers"])
            ]
        out[split] = {
            "description": (
                f"crag mixed benchmark, {split} split: in_kb / web_only / unanswerable questions "
                "from SQuAD v1.1 dev (CC BY-SA 4.0) against the bundled encyclopedia; "
                "built by benchmarks/calibration/mixed_dataset.py"
            ),
            "articles": {"kb": sorted(kb_split[split]), "other": sorted(other_split[split])},
            "kb": kb,
            "questions": _draw(pools, PER_CATEGORY[split], rng),
        }
        pools_by_split[split] = pools
    calibration = out["calibration"]["questions"]
    calibration += _draw_more(
        calibration, pools_by_split["calibration"], CALIBRATION_EXTRA, random.Random(seed + 1)
    )
    calibration += [
        q | {"category": "web_only"}
        for title in sorted(other_split["calibration"])
        for q in questions_of(by_title[title])
        if q["id"] in REVIEWED_CROSS_WEB_ONLY
    ]
    calibration += _draw_more(
        calibration, pools_by_split["calibration"], CALIBRATION_EXTRA_2, random.Random(seed + 2)
    )
    return out


def _draw_more(
    drawn: list[dict[str, Any]],
    pools: dict[str, list[dict[str, Any]]],
    counts: dict[str, int],
    rng: random.Random,
) -> list[dict[str, Any]]:
    """``counts`` more questions per category from ``pools``, none of them in ``drawn``.

    Categories are drawn in order, each excluding what the earlier ones added.
    """
    added: list[dict[str, Any]] = []
    for category, n in counts.items():
        taken = {q["id"] for q in [*drawn, *added]}
        pool = [q for q in pools[category] if q["id"] not in taken]
        added += _draw({category: pool}, n, rng)
    return added


def _draw(
    pools: dict[str, list[dict[str, Any]]], per_category: int, rng: random.Random
) -> list[dict[str, Any]]:
    """Up to ``per_category`` questions of each pool, by id order then ``rng``, labelled."""
    questions = []
    for category, pool in pools.items():
        ordered = sorted(pool, key=lambda q: q["id"])
        picked = rng.sample(ordered, min(per_category, len(ordered)))
        questions += [q | {"category": category} for q in picked]
    return questions


def _print_web_candidates(squad: Path, encyclopedia: Path, seed: int) -> None:
    """The cross-summary web-only candidates of the calibration split's articles."""
    built = build(squad, encyclopedia, seed)
    articles, _ = load(squad, encyclopedia)
    by_title = {a["title"]: a for a in articles}
    taken = {q["id"] for split in built.values() for q in split["questions"]} | REVIEWED_WEB_ONLY
    questions = [
        q
        for title in built["calibration"]["articles"]["other"]
        for q in questions_of(by_title[title])
        if q["id"] not in taken
    ]
    for candidate in web_candidates(questions):
        print(json.dumps(candidate, ensure_ascii=False))


def main() -> None:
    """Write ``mixed-calibration.json.gz`` and ``mixed-test.json.gz``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad", type=Path, required=True)
    parser.add_argument("--encyclopedia", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data"))
    parser.add_argument(
        "--web-candidates",
        action="store_true",
        help="print the calibration split's unreviewed questions that another encyclopedia "
        "entry may answer (JSON lines, for reading by hand) and write nothing",
    )
    args = parser.parse_args()
    if args.web_candidates:
        _print_web_candidates(args.squad, args.encyclopedia, args.seed)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    for split, data in build(args.squad, args.encyclopedia, args.seed).items():
        path = args.out / f"mixed-{split}.json.gz"
        with gzip.GzipFile(path, "wb", mtime=0) as fh:
            fh.write(json.dumps(data, ensure_ascii=False, indent=1).encode())
        counts = {c: sum(q["category"] == c for q in data["questions"]) for c in CATEGORIES}
        print(f"{path}: {len(data['kb'])} KB articles, questions {counts}")


if __name__ == "__main__":
    main()
