"""SQuAD v1.1-format datasets: paragraphs to ingest, questions with their gold answers."""

from __future__ import annotations

import gzip
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crag_core.errors import ConfigError


@dataclass(frozen=True)
class Paragraph:
    """One context paragraph; its id is stable across runs (title slug + position)."""

    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Question:
    """One question, the paragraph it was written on, and its gold answers."""

    id: str
    question: str
    answers: tuple[str, ...]
    paragraph_id: str
    """The gold paragraph's id (empty when the dataset names none)."""
    category: str = "in_kb"
    """``in_kb``, ``web_only`` or ``unanswerable`` (see ``crag.eval.mixed``); SQuAD: in_kb."""


@dataclass(frozen=True)
class Dataset:
    """Paragraphs and questions of a SQuAD-format file."""

    paragraphs: list[Paragraph]
    questions: list[Question]

    def sample(
        self, limit: int | None, seed: int, per_category: int | None = None
    ) -> list[Question]:
        """The questions to ask.

        The first ``per_category`` of each category (file order), then ``limit`` of those
        drawn with ``seed`` (all, in order, when ``limit`` is None).
        """
        questions = list(self.questions)
        if per_category is not None:
            seen: dict[str, int] = {}
            kept = []
            for q in questions:
                seen[q.category] = seen.get(q.category, 0) + 1
                if seen[q.category] <= per_category:
                    kept.append(q)
            questions = kept
        if limit is None or limit >= len(questions):
            return questions
        return random.Random(seed).sample(questions, limit)


def paragraph_id(title: str, index: int) -> str:
    """``<title slug>-p<index>``: readable and stable."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "article"
    return f"{slug}-p{index:03d}"


def load_squad(path: Path) -> Dataset:
    """Read a SQuAD v1.1 file (``.json`` or ``.json.gz``); a clear error if it is not one."""
    try:
        opener: Any = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"Cannot read dataset {path}: {exc}") from exc
    try:
        paragraphs, questions = [], []
        for article in raw["data"]:
            title = str(article["title"])
            for i, para in enumerate(article["paragraphs"]):
                pid = paragraph_id(title, i)
                paragraphs.append(Paragraph(pid, title, str(para["context"])))
                for qa in para["qas"]:
                    answers = tuple(dict.fromkeys(str(a["text"]) for a in qa["answers"]))
                    questions.append(Question(str(qa["id"]), str(qa["question"]), answers, pid))
    except (KeyError, TypeError) as exc:
        raise ConfigError(
            f"{path} is not SQuAD v1.1 format (data[].paragraphs[].qas[]): missing {exc}"
        ) from exc
    if not questions:
        raise ConfigError(f"{path} holds no questions.")
    return Dataset(paragraphs, questions)
