"""A calibration set of prose with incidental tables: R's documentation pages, questions by code.

The tools must cost nothing on documentation: a page's table (of its variables, of its
parameters) is not the answer to a question about the page's prose. This set is 24 HTML
pages of R's ``datasets`` package documentation (``benchmarks/data/rdocs``, see its README),
each with a table of the data set's variables inside its prose, and no spreadsheet beside
them. The questions, by code from each page: how many observations and how many variables
the data set has (said in the prose: "A data frame with 32 observations on 11 variables"),
what one variable measures and which variable gives a measure (both in the page's table), and
the size again of a data set named only by its page's title (``d-hop``: "How many observations
does the data set on Vapor Pressure of Mercury as a Function of Temperature have?" — find the
page by what it is about, then read its size). Asked of these pages beside the R tables (the
``rmixed`` set of ``benchmarks.measurements.tools``), a title's words name the tables'
columns and values by accident ("temperature", "state", "1973"): the question is still the
page's.

Every question is ``calibration``: the set is for choosing how the tools treat a page's
tables, never for reporting.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import DATA
from benchmarks.measurements.tools_questions import numbered, q

RDOCS = DATA / "rdocs"
QUESTIONS = RDOCS / "questions.jsonl"
FILES = {p.name: p for p in sorted(RDOCS.iterdir()) if p.suffix == ".html"}
MODIFIED = {name: f"2025-0{1 + i % 9}-2{i % 8}" for i, name in enumerate(sorted(FILES))}
SEED = 11
_SIZE = re.compile(r"(\d+) observations on (?:the following )?(\d+) variables")
_LEFT_OUT = {"numeric", "factor", "levels", "the", "and", "with", "for", "from", "per", "not"}
_LEFT_OUT |= {"does"}


@dataclass(frozen=True)
class Page:
    """What a documentation page says: its data set, its size, its variables' meanings."""

    name: str
    title: str
    observations: int
    variables: int
    meanings: dict[str, str]


def read_page(path: Path) -> Page | None:
    """The page's data set, size and variables (``None`` when it states no size)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    head = soup.find("table", summary=re.compile("^page for "))
    size = _SIZE.search(" ".join(soup.get_text(" ").split()))
    if head is None or size is None:
        return None
    meanings = {}
    tables = soup.find_all("table", summary="Rd table") if "data frame" in size.string else []
    for table in tables:
        for row in table.find_all("tr"):
            cells = [" ".join(td.get_text(" ").split()) for td in row.find_all("td")]
            if len(cells) >= 3 and cells[1] and _words(cells[-1]):
                meanings[cells[1]] = cells[-1]
    name = str(head.get("summary", "")).removeprefix("page for ")
    heading = soup.find("h2")
    title = " ".join(heading.get_text(" ").split()) if heading else name
    return Page(name, title, int(size.group(1)), int(size.group(2)), meanings)


def _clean(meaning: str) -> str:
    """A meaning as a question says it: no units in brackets, no quotes, no leading "the"."""
    text = re.sub(r"\s*(?:\(.*?\)|\[.*?\])", "", meaning)
    text = re.sub(r"['‘’\"]", "", text).strip().rstrip(".")
    return re.sub(r"^the\s+", "", " ".join(text.split()), flags=re.I)


def _words(text: str) -> list[str]:
    """A meaning's first two words a right answer says (lower case; kinds left out)."""
    found = re.findall(r"[a-z]{3,}", _clean(text).lower())
    return [w for w in found if w not in _LEFT_OUT][:2]


def _page(page: Page, rng: random.Random) -> Iterable[dict[str, Any]]:
    about = f"the {page.name} data set"
    yield q(
        "d-obs",
        f"How many observations does {about} have?",
        "search",
        "simple",
        "number",
        page.observations,
    )
    yield q(
        "d-vars",
        f"How many variables does {about} have?",
        "search",
        "simple",
        "number",
        page.variables,
    )
    on = "the data set on " + re.sub(r"^(?:The|An?) ", lambda m: m.group(0).lower(), page.title)
    yield q(
        "d-hop",
        f"How many observations does {on} have?",
        "search",
        "multi-hop",
        "number",
        page.observations,
    )
    if len(page.meanings) < 2:
        return
    told = [(v, m) for v, m in sorted(page.meanings.items()) if _tells(v, m)]
    if not told:
        return
    variable, meaning = rng.choice(told)
    yield q(
        "d-means",
        f"What does the variable {variable} of {about} measure?",
        "search",
        "simple",
        "summary",
        _words(meaning),
    )
    unique = [v for v, m in page.meanings.items() if len(_words(m)) == 2 and _distinct(v, m, page)]
    if unique:
        variable = rng.choice(sorted(unique))
        meaning = _clean(page.meanings[variable])
        yield q(
            "d-which",
            f"Which variable of {about} gives the {meaning[0].lower() + meaning[1:]}?",
            "search",
            "simple",
            "text",
            variable,
            universe=sorted(page.meanings),
        )


def _tells(variable: str, meaning: str) -> bool:
    """Whether a meaning says more than its variable's name ("speed" for ``speed`` does not)."""
    return any(w not in variable.lower() for w in _words(meaning))


def _distinct(variable: str, meaning: str, page: Page) -> bool:
    """Whether no other variable's meaning shares a word with this one's."""
    words = set(_words(meaning))
    return not any(words & set(_words(m)) for v, m in page.meanings.items() if v != variable)


def build() -> list[dict[str, Any]]:
    """Every question, with an id; all of them ``calibration``; pages in a seeded order."""
    rng = random.Random(SEED)
    pages = [p for p in (read_page(path) for path in FILES.values()) if p is not None]
    rng.shuffle(pages)
    made = sorted((row for p in pages for row in _page(p, rng)), key=lambda r: r["template"])
    return numbered(made, "calibration")


__all__ = ["FILES", "MODIFIED", "QUESTIONS", "build"]
