"""Catalog questions over five folders of real public files, gold answers by code from a manifest.

A catalog question asks about the collection itself ("how many PDFs do I have?", "which of my
files are changelogs?", "what did I change last?"). This set is for fitting and checking, one
folder left out at a time, the confidence of the catalog's answers. Its five folders
(``benchmarks/data/rcatalog/<source>``, see the README there) hold files nobody in this project
had used: Debian package documentation from ``/usr/share/doc`` and files shipped in Python
packages, each folder the shape of a user's folder:

- ``release-notes``: a release-engineering folder, seven changelogs named seven ways (a
  Keep-a-Changelog ``CHANGELOG.md``, ``HISTORY.rst``, GNU ``NEWS.txt``, GCC's
  ``release-notes.html``, git's notes as ``CHANGES.txt``, a Debian changelog, a slide deck of
  point releases), two release tables, a README, ``COPYING.txt`` and a deprecation schedule;
- ``licences``: licence texts (GPL, Apache, MPL, MIT, CC0), Debian ``copyright`` files, a
  ``COPYING.rst``, a licence inventory workbook, a FAQ and a privacy statement;
- ``downloads``: manuals, a specification (the only PDF), READMEs, a FAQ, tips, release notes;
- ``analytics``: tables (CSV, a workbook), data set descriptions, a notebook and notes;
- ``project-docs``: Node.js's documentation folder (README, changelogs, policies, guides).

The split was chosen before any question was written: ``release-notes``, ``licences`` and
``downloads`` are ``calibration``; ``analytics`` and ``project-docs`` are ``test``.

``MANIFEST`` gives each file the date it is ingested as modified (``MODIFIED``), its kinds —
what it is when read, labelled by reading it, not from its name: ``changelog``, ``licence``,
``copyright`` (a Debian copyright file, also a ``licence``), ``readme``, ``table``,
``notes``, ``manual``, ``specification``, ``faq``, ``policy``, ``guide``, ``description`` (of
a data set), ``analysis``, ``glossary`` — and the two or three topics a user would name it by.
The questions are written as users ask them, each with a filter in a small language (``FILTER``)
from which ``build`` computes the gold: a count (``number``) or the file names (``set``; the
newest or oldest file(s) for an order question); a kind or a type the folder lacks has gold 0
or []. The one relative date, "added today" (``rc-today``), means every file: ``run`` ingests
the folder on the day it asks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import DATA
from benchmarks.measurements.tools_questions import q

RCATALOG = DATA / "rcatalog"
SPLIT = {
    "release-notes": "calibration",
    "licences": "calibration",
    "downloads": "calibration",
    "analytics": "test",
    "project-docs": "test",
}
"""Each folder's split, fixed before the questions were written."""


@dataclass(frozen=True)
class Doc:
    """One file of a folder: its name, the day it is modified, its kinds and its topics."""

    name: str
    modified: str
    kinds: frozenset[str]
    topics: tuple[str, ...]


def _docs(*rows: str) -> list[Doc]:
    """Manifest rows ``"name | YYYY-MM-DD | kind kind | topic; topic"`` as ``Doc``s."""
    made = []
    for row in rows:
        name, modified, kinds, topics = (part.strip() for part in row.split("|"))
        made.append(Doc(name, modified, frozenset(kinds.split()), tuple(topics.split("; "))))
    return made


MANIFEST: dict[str, list[Doc]] = {
    "release-notes": _docs(
        "CHANGELOG.md | 2026-10-02 | changelog | python-dotenv; environment variables",
        "README.md | 2026-10-03 | readme | python-dotenv; environment variables",
        "HISTORY.rst | 2025-08-21 | changelog | dateparser; date parsing",
        "NEWS.txt | 2022-02-09 | changelog | gnu make; build tool",
        "release-notes.html | 2022-05-06 | changelog | gcc; compiler",
        "CHANGES.txt | 2022-12-12 | changelog | git; version control",
        "git-2.39-maintenance.pptx | 2024-10-08 | changelog | git; security fixes",
        "sqlite3-changelog.Debian.txt | 2025-09-02 | changelog | sqlite; debian packaging",
        "debian-releases.csv | 2025-08-09 | table | debian releases; release dates",
        "ubuntu-releases.xlsx | 2025-10-10 | table | ubuntu releases; release dates",
        "COPYING.txt | 2023-03-21 | licence | gpl; gnu general public license",
        "feature-removal-schedule.txt | 2024-03-05 | notes | dpkg; deprecations",
    ),
    "licences": _docs(
        "gpl-3.0.txt | 2022-01-18 | licence | gpl; gnu general public license; copyleft",
        "Apache-2.0.txt | 2022-06-30 | licence | apache license",
        "MPL-2.0.txt | 2023-02-14 | licence | mozilla public license",
        "LICENSE-MIT.md | 2024-07-01 | licence | mit license; narwhals",
        "COPYING.rst | 2024-07-19 | licence | docutils; public domain",
        "copyright-zlib.txt | 2023-11-05 | licence copyright | zlib; compression library",
        "curl_copyright.txt | 2025-01-27 | licence copyright | curl",
        "cc0-1.0.docx | 2025-05-12 | licence | creative commons; cc0; public domain",
        "licence-inventory.xlsx | 2026-09-30 | table | python packages; licence inventory",
        "base-files-FAQ.txt | 2023-11-20 | faq | base-files; debian",
        "onnxruntime-privacy.md | 2026-02-03 | policy | privacy; telemetry; onnx runtime",
    ),
    "downloads": _docs(
        "shared-mime-info-spec.pdf | 2024-04-22 | specification | mime types; file types",
        "bc-manual.html | 2023-09-14 | manual | bc; calculator",
        "users-and-groups.html | 2024-04-03 | manual | users and groups; system accounts",
        "libpng-manual.txt | 2022-08-30 | manual | libpng; png images",
        "man-db-FAQ.txt | 2025-12-01 | faq | man pages; man-db",
        "perf-tips.txt | 2026-06-17 | notes | perf; profiling",
        "libsodium-README.md | 2025-03-09 | readme | libsodium; cryptography; encryption",
        "jansson-README.rst | 2025-03-28 | readme | jansson; json",
        "xz-NEWS.txt | 2023-01-15 | changelog | xz; xz utils",
        "LICENSE-BSD.txt | 2022-11-02 | licence | bsd license",
        "xz-file-format.docx | 2026-08-25 | specification | xz; xz file format",
        "script-codes.csv | 2024-12-19 | table | writing systems; iso 15924",
    ),
    "analytics": _docs(
        "msft.csv | 2023-09-19 | table | stock prices; microsoft",
        "monthly-stock-prices.csv | 2024-02-01 | table | stock prices; stock market",
        "README.txt | 2022-03-11 | readme | matplotlib; sample data",
        "linnerud_exercise.csv | 2025-05-06 | table | linnerud; fitness; exercise",
        "linnerud_physiological.csv | 2025-05-06 | table | linnerud; fitness; physiology",
        "linnerud.rst | 2025-05-07 | description | linnerud; fitness; exercise",
        "olivetti_faces.rst | 2022-10-24 | description | face images; olivetti",
        "twenty_newsgroups.rst | 2023-04-02 | description | newsgroups; text classification",
        "network-intrusion-data.docx | 2024-06-11 | description | network intrusion; kdd cup 99",
        "countries.xlsx | 2026-01-15 | table | countries; country codes",
        "currencies.csv | 2026-01-16 | table | currencies; currency codes",
        "timezones.csv | 2026-03-03 | table | time zones",
        "density_relevance.ipynb | 2026-09-08 | analysis | embeddings; retrieval relevance",
        "ieee-754-explained.md | 2024-11-27 | notes | ieee 754; floating point",
    ),
    "project-docs": _docs(
        "README.md | 2026-03-24 | readme | node.js; release types",
        "CHANGELOG.md | 2026-03-25 | changelog | node.js releases",
        "CHANGELOG_V012.md | 2022-04-19 | changelog | node.js 0.12",
        "CONTRIBUTING.md | 2023-06-06 | guide | contributing",
        "SECURITY.md | 2025-11-12 | policy | security; vulnerability reporting",
        "GOVERNANCE.md | 2024-09-30 | policy | governance; technical steering committee",
        "LICENSE.txt | 2022-02-28 | licence | node.js license; third-party licenses",
        "glossary.md | 2025-02-17 | glossary | terms; abbreviations",
        "onboarding.md | 2023-06-20 | guide | onboarding; new collaborators",
        "cpp-style-guide.md | 2022-07-07 | guide | c++ style; coding style",
        "investigating-native-memory-leaks.md | 2024-01-09 | guide | memory leaks; valgrind",
        "punycode.html | 2024-09-02 | manual | punycode",
        "abi-version-registry.csv | 2026-05-21 | table | abi versions; node_module_version",
        "release-process.docx | 2026-10-27 | guide | release process; releases",
    ),
}
"""Each folder's files (``name | modified | kinds | topics``), labelled by reading them."""

FILES = {
    source: {d.name: RCATALOG / source / d.name for d in docs} for source, docs in MANIFEST.items()
}
"""Each folder's files: name -> path."""
MODIFIED = {source: {d.name: d.modified for d in docs} for source, docs in MANIFEST.items()}
"""Each folder's files: name -> the day ``run`` sets as modified."""
QUESTIONS = {source: RCATALOG / f"questions-{source}.jsonl" for source in MANIFEST}
"""Each folder's questions file (beside the folders: the folders hold documents only)."""

FILTER = re.compile(r"(!?)(\.\w+(?:\|\.\w+)*)|(kind|about|in|since|before):(\S+)|(newest|oldest)")
"""A question's filter, tokens joined by spaces, all of which a file must meet: ``.csv|.xlsx``
(its type, by extension), ``!.md`` (not that type), ``kind:licence``, ``about:stock+prices``
(a topic, ``+`` for a space), ``in:2025``, ``in:2025-08``, ``in:2024-03..2025-09`` (modified in
that year, month, or months from one to the other), ``since:2025-06-01`` (on or after),
``before:2023-01-01`` (strictly before); ``newest`` or ``oldest`` then keeps the latest or
earliest modified of them. No token: every file."""

ASKED: dict[str, list[tuple[str, str, str]]] = {
    "release-notes": [
        ("total", "", "How many files are in this folder?"),
        ("today", "", "How many files did I add today?"),
        ("type-count", ".md", "How many Markdown files do I have?"),
        ("type-count", ".pptx", "How many slide decks do I have?"),
        ("type-list", ".xlsx", "Which of my files are Excel files?"),
        ("type-list", ".txt", "List the plain text files."),
        ("kind-count", "kind:changelog", "How many changelogs do I have?"),
        ("kind-list", "kind:changelog", "Which files are release notes or change histories?"),
        ("kind-list", "kind:licence", "Which file holds the license?"),
        ("kind-absent", "kind:config", "How many configuration files do I have?"),
        ("type-absent", ".pdf", "How many PDFs do I have?"),
        ("date", "in:2025-08", "Which files did I modify in August 2025?"),
        ("date", "in:2022", "How many files were changed in 2022?"),
        ("date", "since:2025-09-01", "What has been modified since September 2025?"),
        ("date", "before:2023-01-01", "Which files were last modified before 2023?"),
        (
            "date",
            "in:2024-03..2025-09",
            "How many files were modified between March 2024 and September 2025?",
        ),
        ("type-date", ".md in:2026", "Which Markdown files were updated in 2026?"),
        (
            "kind-date",
            "kind:changelog since:2025-01-01",
            "Which release notes did I change after 2025 began?",
        ),
        ("order", "newest", "What did I change last?"),
        ("order", "oldest", "Which is the oldest file here?"),
        ("order", "kind:changelog newest", "Which changelog was updated most recently?"),
        ("topic", "about:git", "Which files are about git?"),
        (
            "topic",
            "about:environment+variables",
            "Which documents talk about environment variables?",
        ),
        ("topic", "about:ubuntu+releases", "Which files cover Ubuntu releases?"),
    ],
    "licences": [
        ("total", "", "How many files do I have in total?"),
        ("kind-count", "kind:licence", "How many licence files do I have?"),
        ("kind-list", "kind:licence", "List the license files."),
        ("kind-list", "kind:copyright", "Which of these are Debian copyright files?"),
        ("type-count", ".txt", "How many .txt files are there?"),
        ("type-count", ".docx", "How many Word documents do I have?"),
        ("type-list", ".csv|.xlsx", "Which files are spreadsheets?"),
        ("type-list", ".rst", "Show me the reStructuredText files."),
        ("type-absent", ".csv", "How many CSV files do I have?"),
        ("type-absent", ".pdf", "Which PDFs are in here?"),
        ("kind-absent", "kind:changelog", "Which of my files are changelogs?"),
        ("kind-absent", "kind:readme", "How many READMEs are in this folder?"),
        ("date", "in:2023-11", "What did I modify in November 2023?"),
        ("date", "in:2024", "How many files were modified in 2024?"),
        ("date", "since:2025-06-01", "Which files have changed since June 2025?"),
        ("date", "before:2023-01-01", "How many files were last modified before 2023?"),
        (
            "date",
            "in:2023-02..2024-07",
            "Which files were modified between February 2023 and July 2024?",
        ),
        ("type-date", ".txt in:2023", "Which .txt files did I change in 2023?"),
        ("kind-date", "kind:licence in:2025", "Which licence texts were modified in 2025?"),
        ("order", "newest", "Which file was modified most recently?"),
        ("order", "kind:licence oldest", "Which licence file did I modify first?"),
        ("topic", "about:privacy", "Which documents are about privacy?"),
        ("topic", "about:public+domain", "Which documents are about the public domain?"),
    ],
    "downloads": [
        ("total", "", "How many files are in my downloads?"),
        ("type-count", ".pdf", "How many PDFs do I have?"),
        ("type-list", ".html", "Which web pages have I saved?"),
        ("type-list", ".txt", "List all the .txt files."),
        ("kind-count", "kind:readme", "How many READMEs did I download?"),
        ("kind-list", "kind:readme", "Which files are readmes?"),
        ("kind-list", "kind:licence", "Which of my downloads are licences?"),
        ("kind-count", "kind:changelog", "How many changelogs or NEWS files are there?"),
        ("kind-absent", "kind:invoice", "Which of my downloads are invoices?"),
        ("type-absent", ".xlsx", "How many Excel spreadsheets did I download?"),
        ("type-absent", ".pptx", "Which presentations are in my downloads?"),
        ("date", "in:2024-04", "Which files were modified in April 2024?"),
        ("date", "in:2025", "How many files were last modified in 2025?"),
        ("date", "since:2024-09-01", "How many files have been modified since September 2024?"),
        ("date", "before:2023-01-01", "Which files were last changed before 2023?"),
        ("date", "in:2023-01..2023-06", "Which files were modified in the first half of 2023?"),
        ("type-date", ".txt before:2024-01-01", "Which .txt files were modified before 2024?"),
        (
            "type-date",
            ".md|.rst in:2025-03",
            "How many Markdown or reStructuredText files were modified in March 2025?",
        ),
        ("kind-date", "kind:readme in:2025", "Which READMEs were changed in 2025?"),
        ("order", "newest", "What's the newest file in my downloads?"),
        ("order", ".html oldest", "Which web page is the oldest?"),
        ("topic", "about:xz", "Which files are about xz?"),
        ("topic", "about:encryption", "Which documents are about encryption?"),
        ("topic", "about:mime+types", "Which files cover MIME types?"),
    ],
    "analytics": [
        ("total", "", "How many files are in my analytics folder?"),
        ("type-count", ".csv", "How many CSV files do I have?"),
        ("type-count", ".csv|.xlsx", "How many spreadsheets are there in total?"),
        ("type-list", ".xlsx", "Which Excel workbooks do I have?"),
        ("type-list", ".ipynb", "List my Jupyter notebooks."),
        ("kind-count", "kind:table", "How many data tables do I have?"),
        ("kind-list", "kind:readme", "Which of my files are READMEs?"),
        ("kind-list", "kind:description", "Which documents describe a data set?"),
        ("kind-absent", "kind:changelog", "How many changelogs are in here?"),
        ("type-absent", ".pdf", "How many PDFs are in this folder?"),
        ("type-absent", ".pptx", "Which slides do I have?"),
        ("date", "in:2025-05", "Which files were modified in May 2025?"),
        ("date", "in:2026", "How many files did I change in 2026?"),
        ("date", "since:2024-11-01", "How many files have been updated since November 2024?"),
        ("date", "before:2024-01-01", "How many files were modified before 2024?"),
        ("date", "in:2024-06..2024-12", "Which files were changed between June and December 2024?"),
        ("type-date", ".csv in:2026", "Which CSV files were modified in 2026?"),
        ("kind-date", "kind:table in:2026-01", "Which tables did I update in January 2026?"),
        ("order", "newest", "What is my most recently modified file?"),
        ("order", ".csv oldest", "Which CSV did I change first?"),
        ("topic", "about:stock+prices", "Which files are about stock prices?"),
        ("topic", "about:fitness", "Which documents are about fitness?"),
        ("topic", "about:currencies", "Which files cover currencies?"),
    ],
    "project-docs": [
        ("total", "", "How many documents does this project have?"),
        ("today", "", "How many files were added today?"),
        ("type-count", ".md", "How many Markdown docs are there?"),
        ("type-list", "!.md", "Which docs are not Markdown?"),
        ("type-list", ".html", "Which web pages are there?"),
        ("kind-count", "kind:changelog", "How many changelogs are there?"),
        ("kind-list", "kind:licence", "Where's the license? List the license files."),
        ("kind-list", "kind:readme", "Which file is the README?"),
        ("kind-absent", "kind:notes", "Which documents are meeting notes?"),
        ("type-absent", ".pdf", "How many PDFs are in the docs?"),
        ("type-absent", ".pptx", "How many slide decks are there?"),
        ("date", "in:2023-06", "Which files were changed in June 2023?"),
        ("date", "in:2024", "How many docs were modified in 2024?"),
        ("date", "since:2025-10-01", "Which files have been modified since October 2025?"),
        ("date", "before:2022-07-01", "How many files were last modified before July 2022?"),
        (
            "date",
            "in:2024-09..2025-02",
            "Which documents were modified between September 2024 and February 2025?",
        ),
        ("type-date", ".md in:2026", "Which Markdown files were updated in 2026?"),
        ("kind-date", "kind:changelog in:2026", "Which changelogs were modified in 2026?"),
        ("order", "newest", "What was the last document I edited?"),
        ("order", ".md oldest", "Which is the oldest Markdown file?"),
        ("topic", "about:memory+leaks", "Which documents are about memory leaks?"),
        ("topic", "about:governance", "Which docs cover the project's governance?"),
        (
            "topic",
            "about:vulnerability+reporting",
            "Which document explains how to report a security vulnerability?",
        ),
        ("topic", "about:coding+style", "Which files are about C++ coding style?"),
    ],
}
"""Each folder's questions: (template, filter, question); "How many…" asks a count, any other
question the names."""


def _meets(doc: Doc, token: re.Match[str]) -> bool:
    """Whether a file meets one filter token (an order token: every file does)."""
    negated, suffixes, key, value, _ = token.groups()
    if suffixes:
        inside = Path(doc.name).suffix.lower() in suffixes.split("|")
        return inside != bool(negated)
    if key == "kind":
        return value in doc.kinds
    if key == "about":
        return value.replace("+", " ") in doc.topics
    if key == "in":
        first, _, last = value.partition("..")
        return first <= doc.modified[: len(first)] <= (last or first)
    if key == "since":
        return doc.modified >= value
    if key == "before":
        return doc.modified < value
    return True


def gold(docs: list[Doc], kind: str, where: str) -> int | list[str]:
    """A question's gold by its filter: how many files meet it, or their names (sorted)."""
    tokens = list(FILTER.finditer(where))
    if "".join(t.group(0) for t in tokens) != where.replace(" ", ""):
        raise ValueError(f"unread filter: {where!r}")
    kept = [d for d in docs if all(_meets(d, t) for t in tokens)]
    order = [t.group(5) for t in tokens if t.group(5)]
    if order and kept:
        edge = (max if order[0] == "newest" else min)(d.modified for d in kept)
        kept = [d for d in kept if d.modified == edge]
    names = sorted(d.name for d in kept)
    return len(names) if kind == "number" else names


SUMMARY_BYTES = 20_000
"""The largest file a summary is asked of: one the default ``context_tokens`` read in one call.
A larger one is read in parts, 2-7 calls of about 6,000 tokens each (over 4 minutes apiece
on 2 cores), too many for a calibration run."""


def summaries(source: str) -> list[dict[str, Any]]:
    """A summary question ("Summarise <file>.") for each small file that is not a table.

    Small: read in one call (``SUMMARY_BYTES``).

    Gold (``summary-any``): the summary names one of the file's topics (``MANIFEST``, labelled
    by reading the file before any summary was asked): it says what the document is about.
    """
    return [
        q("rc-summary", f"Summarise {d.name}.", "document", "summary", "summary-any", [*d.topics])
        | {"id": f"rc-{source}-s{n:02d}", "split": SPLIT[source], "source": source}
        for n, d in enumerate((d for d in MANIFEST[source] if _summarised(source, d)), 1)
    ]


def _summarised(source: str, doc: Doc) -> bool:
    small = (RCATALOG / source / doc.name).stat().st_size <= SUMMARY_BYTES
    return doc.kinds != {"table"} and small


def questions(source: str) -> list[dict[str, Any]]:
    """One folder's questions in the tools set's rows, ids unique across folders.

    The catalog questions, then a summary of each document (``summaries``).
    """
    docs = MANIFEST[source]
    universe = sorted(d.name for d in docs)
    rows = []
    for n, (template, where, question) in enumerate(ASKED[source], 1):
        kind = "number" if question.startswith("How many") else "set"
        value = gold(docs, kind, where)
        row = q(f"rc-{template}", question, "catalog", "collection", kind, value, universe)
        rows.append(row | {"id": f"rc-{source}-{n:02d}", "split": SPLIT[source], "source": source})
    return rows + summaries(source)


def build(source: str | None = None) -> list[dict[str, Any]]:
    """One folder's questions (``source``), or every folder's, in a fixed order."""
    return [row for s in ([source] if source else MANIFEST) for row in questions(s)]


__all__ = ["FILES", "MANIFEST", "MODIFIED", "QUESTIONS", "SPLIT", "build", "gold"]
