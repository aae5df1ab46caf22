"""One notion of a word: ``crag_core.text.words.words_of``, and no other word pattern; one
notion of the same word in either number: ``same_word``, and no plural stripped elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crag_core.text.catalog import named_by
from crag_core.text.whole_document import document_request
from crag_core.text.words import content_words, forms, same_word, says, words_of

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


def lines_matching(pattern: re.Pattern[str]) -> list[str]:
    """The product's lines, outside ``crag_core/text/words.py``, that ``pattern`` finds."""
    found = []
    for top in ("crag", "crag_core", "graph", "nodes"):
        for path in (ROOT / top).rglob("*.py"):
            if path == ROOT / "crag_core" / "text" / "words.py":
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    return found


def test_no_rule_reads_words_its_own_way():
    found = lines_matching(WORD_PATTERNS)
    assert found == [], "words are read by crag_core.text.words.words_of:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("city", "cities"),
        ("box", "boxes"),
        ("class", "classes"),
        ("force", "forces"),
        ("pdf", "pdfs"),
        ("sale", "sales"),
        ("species", "species"),
    ],
)
def test_a_word_is_the_same_word_in_either_number(a, b):
    assert same_word(a, b) and same_word(b, a)


@pytest.mark.parametrize(("a", "b"), [("class", "cla"), ("city", "cite"), ("sale", "sold")])
def test_other_words_are_not_the_same_word(a, b):
    """``rstrip("s")`` made "class" and "clas" one word; a word's forms are its numbers only."""
    assert not same_word(a, b)


def test_forms_are_symmetric():
    words = ["city", "cities", "box", "boxes", "bus", "buses", "gas", "pdf", "analysis", "news"]
    for a in words:
        for b in forms(a):
            assert a in forms(b), (a, b)


def test_a_phrase_is_said_word_for_word_its_last_word_in_either_number():
    words = words_of("Which web pages were modified in 2024?")
    assert says(words, ["web", "page"]) and says(words, ["pages"]) and says(words, ["page"])
    assert not says(words_of("one salary"), ["salaries"])  # one of a plural name is not it
    assert not says(words, ["page", "web"]) and not says(words, ["web", "modified"])
    assert not says(words, [])


PLURAL_STRIPS = re.compile(r'rstrip\("s"\)|removesuffix\("e?s"\)|\}s\?\\b|\+ r"s\?\\b"')
"""A plural stripped or allowed by hand: ``rstrip("s")`` ("class" -> "cla"), ``removesuffix``,
a pattern that puts ``s?`` after a word it is given."""


def test_no_rule_strips_a_plural_its_own_way():
    found = lines_matching(PLURAL_STRIPS)
    assert found == [], "either number is crag_core.text.words.same_word:\n" + "\n".join(found)


def test_the_rules_that_compare_two_words_take_either_number():
    from langchain_core.documents import Document

    from crag_core.text.support import unsupported_terms

    # the support check: "Cities" stands on "city", "Boxes" on "box"
    docs = [Document(page_content="The city ships every box by rail.")]
    assert unsupported_terms("Cities and Boxes", docs) == []
    # a topic names a document by its title's words in either number, not by a clipped one
    assert named_by("sales reports", {"label": "report.md", "title": "Sale figures"})
    assert named_by("annual report", {"label": "reports-annual.md", "title": ""})
    assert not named_by("glass", {"label": "gla.md", "title": ""})
