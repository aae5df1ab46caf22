"""One notion of a word: ``crag_core.text.words.words_of``, and no other word pattern."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crag_core.text.catalog import named_by
from crag_core.text.whole_document import document_request
from crag_core.text.words import content_words, words_of

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Zürich's rate, 2009", ["zürich", "s", "rate", "2009"]),
        ("units_sold (USD)", ["units", "sold", "usd"]),
        ("Saint-Édouard", ["saint", "édouard"]),
        ("São Paulo", ["são", "paulo"]),
    ],
)
def test_a_word_is_letters_and_digits_of_any_alphabet(text, words):
    assert words_of(text) == words


def test_underscores_join_a_name_when_asked():
    assert words_of("units_sold = 3", underscores=True) == ["units_sold", "3"]
    assert content_words("The units_sold of Zürich") == ["units_sold", "zürich"]


def test_a_name_with_an_accent_is_not_two_ascii_words():
    """Read as ASCII, "Zürich" was ``z`` and ``rich``: a file about the rich was named by it."""
    assert not named_by("Zürich", {"label": "rich.md", "title": "Rich"})
    assert named_by("Zürich", {"label": "zürich-guide.md", "title": ""})
    rich, zurich = {"doc_id": "a", "label": "rich.md"}, {"doc_id": "b", "label": "zürich.md"}
    request = document_request("Summarise zürich.md", [rich, zurich])
    assert request is not None and request.document["doc_id"] == "b"
    assert document_request("Summarise the Zürich notes", [rich]) is None


WORD_PATTERNS = re.compile(r'(?:findall|compile)\(r"(?:\[a-z0-9\]\+|\[a-z\]\+|\\w\+)"')
"""A regex that is nothing but a word (an ASCII class, or ``\\w+``): a rule reading words its own
way instead of ``words_of`` (patterns that read a word inside a larger shape are theirs)."""


def test_no_rule_reads_words_its_own_way():
    found = []
    for top in ("crag", "crag_core", "graph", "nodes"):
        for path in (ROOT / top).rglob("*.py"):
            if path == ROOT / "crag_core" / "text" / "words.py":
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if WORD_PATTERNS.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == [], "words are read by crag_core.text.words.words_of:\n" + "\n".join(found)
