"""The mixed benchmark format: a knowledge base, and questions of three kinds.

    {"kb": [{"title": str, "paragraphs": [str, ...]}, ...],
     "questions": [{"id": str, "question": str, "answers": [str, ...],
                    "category": "in_kb" | "web_only" | "unanswerable"}, ...]}

``in_kb``: the answer is in the knowledge base; ``web_only``: only web search (the offline
encyclopedia by default) has it; ``unanswerable``: nobody has it, and the right reply is the
no-answer reply (its ``answers``, if any, are the answers nobody has).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from crag.eval.squad import Dataset, Paragraph, Question, paragraph_id
from crag_core.errors import ConfigError

CATEGORIES = ("in_kb", "web_only", "unanswerable")


def _read_json(path: Path) -> Any:
    try:
        opener: Any = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, EOFError) as exc:
        raise ConfigError(f"Cannot read dataset {path}: {exc}") from exc


def _paragraphs(raw: Any, path: Path) -> list[Paragraph]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{path}: 'kb' must be a non-empty list of {{title, paragraphs}}.")
    paragraphs = []
    for n, article in enumerate(raw):
        title = article.get("title") if isinstance(article, dict) else None
        texts = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(title, str) or not isinstance(texts, list):
            raise ConfigError(f"{path}: kb[{n}] needs a 'title' string and a 'paragraphs' list.")
        paragraphs += [
            Paragraph(paragraph_id(title, i), title, str(text))
            for i, text in enumerate(texts)
            if str(text).strip()
        ]
    return paragraphs


def _question(raw: Any, n: int, path: Path) -> Question:
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: questions[{n}] is not an object.")
    missing = [k for k in ("id", "question", "category") if not raw.get(k)]
    if missing:
        raise ConfigError(f"{path}: questions[{n}] lacks {', '.join(missing)}.")
    category = raw["category"]
    if category not in CATEGORIES:
        raise ConfigError(
            f"{path}: questions[{n}] has category {category!r}; use one of {', '.join(CATEGORIES)}."
        )
    answers = raw.get("answers") or []
    if not isinstance(answers, list) or (category != "unanswerable" and not answers):
        raise ConfigError(f"{path}: questions[{n}] ({category}) needs a list of gold answers.")
    return Question(
        id=str(raw["id"]),
        question=str(raw["question"]),
        answers=tuple(dict.fromkeys(str(a) for a in answers)),
        paragraph_id="",
        category=category,
    )


def load_mixed(path: Path) -> Dataset:
    """Read a mixed-format file (``.json`` or ``.json.gz``); a clear error if it is not one."""
    raw = _read_json(path)
    if not isinstance(raw, dict) or "kb" not in raw or "questions" not in raw:
        raise ConfigError(f"{path} is not the mixed format: expected an object with kb, questions.")
    if not isinstance(raw["questions"], list) or not raw["questions"]:
        raise ConfigError(f"{path} holds no questions.")
    questions = [_question(q, n, path) for n, q in enumerate(raw["questions"])]
    return Dataset(_paragraphs(raw["kb"], path), questions)
