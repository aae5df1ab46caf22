"""Questions about the collection itself: how many documents, which files, of what type, when.

``catalog_query`` reads such a question into a ``CatalogQuery`` — count or list; the file
types it names; a date range on when the files were modified (or ingested), relative dates
resolved against ``today`` in code; a topic ("which documents cover …") — and ``select``
applies it to the documents' stored metadata. Nothing here does I/O.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from crag_core.text.words import STOPWORDS, same_word, says, words_of

FILE_TYPES = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".csv": "csv",
    ".epub": "epub",
    ".ipynb": "notebook",
    ".rst": "rst",
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp"), "image"),
}
"""Supported suffixes and the file type each is recorded as (``crag_core.formats.extract``
reads each type; a question may name a type by its suffix: "the .txt files")."""

COLLECTION_NOUNS = (
    r"documents?|files?|pdfs?|spreadsheets?|workbooks?|csvs?|notebooks?|presentations?|"
    r"(?:web|html) ?pages?|ebooks?|epubs?|changelogs?|licen[cs]es?|readmes?"
)
"""Nouns that name what a collection holds (not "pages" or "notes": a book has those)."""
_OF_THE_COLLECTION = re.compile(
    r"\b(?:my|our|i|we|collection|knowledge base|are there|modified|changed|updated|edited|"
    r"created|ingested|added|uploaded|indexed|imported)\b",
    re.I,
)
"""Words that tie such a noun to the collection ("How many documents did the treaty
include?" asks about the treaty)."""
TYPES: dict[str, tuple[str, ...]] = {
    "pdf": ("pdf",),
    "word": ("docx",),
    "docx": ("docx",),
    "spreadsheet": ("xlsx", "csv"),
    "workbook": ("xlsx",),
    "excel": ("xlsx",),
    "xlsx": ("xlsx",),
    "csv": ("csv",),
    "table": ("xlsx", "csv"),
    "markdown": ("markdown",),
    "html": ("html",),
    "web page": ("html",),
    "html page": ("html",),
    "webpage": ("html",),
    "presentation": ("pptx",),
    "slide": ("pptx",),
    "deck": ("pptx",),
    "pptx": ("pptx",),
    "epub": ("epub",),
    "ebook": ("epub",),
    "notebook": ("notebook",),
    "text file": ("text",),
    "restructuredtext": ("rst",),
}
"""Words for file types, and the types (``FILE_TYPES``' values) they mean."""

_DETERMINERS = r"(?:(?:all|the|my|our|your|of|these|those|any|every)\s+)*"
_COUNT = re.compile(rf"\bhow many\s+{_DETERMINERS}(?:\.?[\w-]+\s+)?(?:{COLLECTION_NOUNS})\b", re.I)
_LIST = re.compile(
    rf"^\s*(?:which|what|list|show(?: me)?|name)\s+{_DETERMINERS}(?:\.?[\w-]+\s+)?"
    rf"(?:{COLLECTION_NOUNS})\b",
    re.I,
)
_WHICH_IS = re.compile(
    rf"^\s*(?:which|what)\s+(?:is|was|are|were)\s+(?:my|our|the)\s+(?:[\w-]+\s+){{0,2}}"
    rf"(?:{COLLECTION_NOUNS})\b",
    re.I,
)
"""A list asked as "What is my newest file?", "Which are the oldest documents?"."""
_NEWEST = re.compile(
    r"\b(?:newest|latest|most recent(?:ly)?|last(?!\s+(?:week|month|year|\d+|few)\b))\b", re.I
)
_OLDEST = re.compile(r"\b(?:oldest|earliest|first|least recent(?:ly)?)\b", re.I)
KINDS = {
    "changelog": r"change ?log|changes|news|history|release[ _-]?notes",
    "licence": r"licen[cs]e|copying|copyright",
    "readme": r"read ?me",
}
"""Kinds of document, and the file names they go by (what they say: ``text_kind``)."""
_KIND_WORDS = {
    "changelog": r"change ?logs?|release notes",
    "licence": r"licen[cs]es?",
    "readme": r"read ?mes?",
}
_TOPIC = re.compile(
    r"\b(?:cover|covers|mention|mentions|discuss|discusses|describe|describes|talk about|"
    r"talks about|are about|is about|deal with|deals with)\s+(.+?)\s*[?.!]*$",
    re.I,
)
_INGESTED = re.compile(r"\b(?:ingested|added|uploaded|indexed|imported|add|upload|import)\b", re.I)
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m} | {
    m.lower(): i for i, m in enumerate(calendar.month_abbr) if m
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))


@dataclass(frozen=True)
class CatalogQuery:
    """What a question asks of the collection's documents."""

    kind: Literal["count", "list"]
    types: frozenset[str] = frozenset()
    """File types asked for (empty: any)."""
    date_of: Literal["modified", "ingested"] = "modified"
    """Which date the range applies to: the file's own, or when crag read it."""
    start: dt.date | None = None
    end: dt.date | None = None
    """The date range, ``end`` excluded (None: open)."""
    topic: str = ""
    """What the documents must cover ("" : anything)."""
    said: tuple[str, ...] = ()
    """The filter in words, for the answer and the node's line."""
    named: str = ""
    """A kind of document (``KINDS``: changelog, licence, readme): what it says, or its name."""
    order: Literal["", "newest", "oldest"] = ""
    """Only the most recently or the least recently dated document ("" : all of them)."""

    @property
    def where(self) -> str:
        """The filter in crag's ``where`` language (the topic is no metadata: left out)."""
        return where_text(self.types, self.date_of, self.start, self.end)

    def as_json(self) -> dict[str, Any]:
        """The query as JSON values (a run's state holds it): dates ISO-written, sets sorted."""
        fields = asdict(self)
        return fields | {
            "types": sorted(self.types),
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "said": list(self.said),
        }

    @classmethod
    def from_json(cls, fields: Mapping[str, Any]) -> CatalogQuery:
        """The query ``as_json`` wrote."""
        start, end = fields["start"], fields["end"]
        return cls(
            **{
                **fields,
                "types": frozenset(fields["types"]),
                "start": dt.date.fromisoformat(start) if start else None,
                "end": dt.date.fromisoformat(end) if end else None,
                "said": tuple(fields["said"]),
            }
        )


def where_text(
    types: Iterable[str], date_of: str, start: dt.date | None, end: dt.date | None
) -> str:
    """Types and a date range (``end`` excluded) in crag's ``where`` language."""
    kinds = sorted(types)
    conditions = [f"type={'|'.join(kinds)}"] if kinds else []
    if start:
        conditions.append(f"{date_of}>={start.isoformat()}")
    if end:
        conditions.append(f"{date_of}<{end.isoformat()}")
    return ",".join(conditions)


def catalog_query(question: str, today: dt.date) -> CatalogQuery | None:
    """The question as a query of the collection's documents; None when it asks no such thing."""
    kind: Literal["count", "list"]
    if _COUNT.search(question):
        kind = "count"
    elif _LIST.search(question) or _WHICH_IS.search(question):
        kind = "list"
    else:
        return None
    said: list[str] = []
    types = _types(question)
    if not (types or _TOPIC.search(question) or _OF_THE_COLLECTION.search(question)):
        return None
    named = next(
        (k for k, words in _KIND_WORDS.items() if re.search(rf"\b(?:{words})\b", question, re.I)),
        "",
    )
    if named:
        said.append(f"that are {named}s")
    if types:
        said.append("of type " + ", ".join(sorted(types)))
    topic_match = _TOPIC.search(question)
    topic = topic_match.group(1) if topic_match else ""
    before_topic = question[: topic_match.start()] if topic_match else question
    field_: Literal["modified", "ingested"] = (
        "ingested" if _INGESTED.search(before_topic) else "modified"
    )
    start, end, when = date_range(before_topic, today)
    if when:
        said.append(f"{field_} {when}")
    if topic:
        said.append(f"about {topic!r}")
    order: Literal["", "newest", "oldest"] = ""
    if kind == "list" and _NEWEST.search(before_topic):
        order = "newest"
    elif kind == "list" and _OLDEST.search(before_topic):
        order = "oldest"
    if order:
        said.append(f"the {order} by {field_} date")
    return CatalogQuery(
        kind, frozenset(types), field_, start, end, topic, tuple(said), named, order
    )


_SCOPE_PLURALS = (
    "pdfs|spreadsheets|workbooks|csvs|presentations|slides|notebooks|ebooks|epubs|web ?pages"
)
_SCOPE_TYPE = "|".join(sorted((re.escape(w) for w in TYPES), key=len, reverse=True))
_SCOPE = re.compile(
    rf"\b(?:in|from|among|across|within|according to|based on|using)\s+{_DETERMINERS}"
    rf"(?:(?P<plural>{_SCOPE_PLURALS})|(?:(?P<type>{_SCOPE_TYPE}|\.[a-z]{{2,8}})\s+)?"
    r"(?:files?|documents?|docs))\b"
    r"(?:\s+(?:that\s+(?:were|was)\s+)?(?P<verb>modified|changed|updated|edited|created|"
    r"written|ingested|added|uploaded|indexed|imported)\s+(?P<when>[^,?!]+))?",
    re.I,
)


@dataclass(frozen=True)
class Scope:
    """The documents a question that is no look-up of the collection limits itself to."""

    where: str
    """The filter in crag's ``where`` language (``crag_core.text.filters``)."""
    said: str
    """The words that asked for it."""


def question_scope(question: str, today: dt.date) -> Scope | None:
    """The documents a question limits its search to, as a filter; None when it names none.

    "According to the PDFs, …", "in my spreadsheets …", "in the Markdown files …", "in the
    .txt files …" name file types; "in the documents modified in 2024 …", "in files added
    last week …" a date range (relative dates resolved against ``today``). A type is named in
    the plural, or followed by "files"/"documents" ("in other words" is no scope).
    """
    match = _SCOPE.search(question)
    if not match:
        return None
    named = match.group("plural") or match.group("type") or ""
    start, end, _ = date_range(match.group("when") or "", today)
    field_ = "ingested" if _INGESTED.search(match.group("verb") or "") else "modified"
    where = where_text(_types(named) if named else (), field_, start, end)
    return Scope(where, match.group(0).strip()) if where else None


_SUFFIX = re.compile(
    r"(?<![\w.])(?:\.(?P<dotted>[a-z]{2,8})\b|(?P<bare>[a-z]{2,8})\s+(?:files?|documents?)\b)", re.I
)
"""A type named by its file suffix: ".txt" anywhere, or "txt files"."""
_FILE_NAME = re.compile(r"[\w-]+\.[a-z0-9]{1,8}\b", re.I)
"""A file's name ("report.pdf"): no type named ("How many files does report.pdf cite?")."""


def _types(question: str) -> set[str]:
    question = _FILE_NAME.sub(" ", question)
    words = words_of(question)
    found: set[str] = set()
    for word, kinds in TYPES.items():
        if says(words, word.split()):  # "PDFs", "web pages"
            found.update(kinds)
    for match in _SUFFIX.finditer(question):  # ".txt", "md files"
        suffix = "." + (match.group("dotted") or match.group("bare")).lower()
        if suffix in FILE_TYPES:
            found.add(FILE_TYPES[suffix])
    return found


def date_range(question: str, today: dt.date) -> tuple[dt.date | None, dt.date | None, str]:
    """The date range a question names (``end`` excluded) and how it said it.

    Read: "in March 2025", "in 2025", "March 2025", "on 2025-03-14", "since/after …",
    "before …", "between March 2024 and May 2025" (both months in), "today", "yesterday",
    "this/last week|month|year", "in the last N days".
    """
    q = question.lower()
    if re.search(r"\btoday\b", q):
        return today, today + dt.timedelta(days=1), "today"
    if re.search(r"\byesterday\b", q):
        return today - dt.timedelta(days=1), today, "yesterday"
    last_days = re.search(r"\b(?:in the )?(?:last|past) (\d{1,4}) days\b", q)
    if last_days:
        n = int(last_days.group(1))
        return today - dt.timedelta(days=n), today + dt.timedelta(days=1), f"in the last {n} days"
    relative = re.search(r"\b(this|last) (week|month|year)\b", q)
    if relative:
        return (*_relative(relative.group(1), relative.group(2), today), relative.group(0))
    between = re.search(r"\b(?:between|from)\s+(.+?)\s+(?:and|to|until)\s+(.+?)(?:[?.!,]|$)", q)
    first, last = (_period(g) for g in between.groups()) if between else (None, None)
    if first and last and first[0] < last[1]:
        return first[0], last[1], f"between {first[2]} and {last[2]}"
    bound = re.search(r"\b(since|after|before|until)\s+(.+?)(?:[?.!,]|$)", q)
    if bound:
        period = _period(bound.group(2))
        if period:
            if bound.group(1) in ("since", "after"):
                start = period[0] if bound.group(1) == "since" else period[1]
                return start, None, f"{bound.group(1)} {bound.group(2).strip()}"
            return None, period[0], f"{bound.group(1)} {bound.group(2).strip()}"
    period = _period(q)
    if period:
        return period[0], period[1], f"in {period[2]}"
    return None, None, ""


def _relative(which: str, unit: str, today: dt.date) -> tuple[dt.date, dt.date]:
    if unit == "week":
        start = today - dt.timedelta(days=today.weekday())
        if which == "last":
            start -= dt.timedelta(days=7)
        return start, start + dt.timedelta(days=7)
    if unit == "month":
        start = today.replace(day=1)
        if which == "last":
            start = (start - dt.timedelta(days=1)).replace(day=1)
        return start, _next_month(start)
    year = today.year - (which == "last")
    return dt.date(year, 1, 1), dt.date(year + 1, 1, 1)


def _next_month(day: dt.date) -> dt.date:
    return dt.date(day.year + day.month // 12, day.month % 12 + 1, 1)


def _period(text: str) -> tuple[dt.date, dt.date, str] | None:
    """The first day, month or year ``text`` names: (start, end excluded, as said)."""
    iso = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", text)
    if iso:
        try:
            day = dt.date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
        except ValueError:
            return None
        return day, day + dt.timedelta(days=1), day.isoformat()
    month = re.search(rf"\b({_MONTH})\.?,?\s+(\d{{4}})\b", text)
    if month:
        start = dt.date(int(month.group(2)), _MONTHS[month.group(1)], 1)
        return start, _next_month(start), start.strftime("%B %Y")
    year = re.search(r"\b(19\d{2}|20\d{2})\b", text)
    if year:
        y = int(year.group(1))
        return dt.date(y, 1, 1), dt.date(y + 1, 1, 1), str(y)
    return None


def select(query: CatalogQuery, documents: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The documents (stored metadata: ``type``, ``modified``, ``ingested``…) the query keeps.

    A document with no date of the asked kind is left out of a dated query, or one asked for
    the newest or oldest (which keeps that one, and any dated the same day).
    """
    kept = []
    for doc in documents:
        if query.types and doc.get("type") not in query.types:
            continue
        if query.named and not is_kind(query.named, doc):
            continue
        if query.start or query.end:
            stamp = doc.get(query.date_of)
            if stamp is None:
                continue
            day = dt.datetime.fromtimestamp(int(stamp)).date()
            if (query.start and day < query.start) or (query.end and day >= query.end):
                continue
        kept.append(doc)
    if query.order:
        dated = [d for d in kept if d.get(query.date_of) is not None]
        if not dated:
            return []
        days = [dt.datetime.fromtimestamp(int(d[query.date_of])).date() for d in dated]
        chosen = max(days) if query.order == "newest" else min(days)
        return [d for d, day in zip(dated, days, strict=True) if day == chosen]
    return kept


_LICENCE_TEXT = re.compile(
    r"permission is hereby granted,? free of charge|gnu (?:lesser |library |affero )?general "
    r"public licen[cs]e|redistribution and use in source and binary forms|licensed under the "
    r"apache licen[cs]e|apache licen[cs]e,?\s+version|mozilla public licen[cs]e|creative commons"
    r"|this program is free software|provided (?:by the copyright holders and contributors )?"
    r"\W?as is\W?,? (?:and|without)|^format: https?://www\.debian\.org/doc/packaging-manuals/"
    r"copyright-format|\bcc0\b|public domain dedication",
    re.I | re.M,
)
"""Sentences only a licence (or a Debian copyright file) says."""
_VERSION_HEADING = re.compile(
    r"[#*=> -]*(?:[\w.+-]+ (?=v\d))?(?:(?:noteworthy )?changes in(?: (?:release|version))?"
    r"|version|release|what's new in)? ?\[?v?\d+\.\d+(?:\.\w+)*\]? ?(?:[-:] ?)?"
    r"(?:\(?\d{4}-\d{2}-\d{2}\)?|\([^)]*\))? ?(?:\[[^\]]*\])?"
    r"|\S+ \(\d[^)]*\) [\w-]+(?: [\w-]+)*; urgency=.*",
    re.I,
)
"""A line that opens a release's entry, its spaces squeezed: "## [1.2.0] - 2024-05-01",
"Version 4.4", "* Noteworthy changes in release 5.4.0", a Debian changelog's "pkg (1.2-3)
unstable; urgency=…"."""
HEADING_CHARS = 200
"""A line longer than this opens no release (and is not matched: bounded work per line)."""
RELEASES = 2
"""Version headings in a text's opening that make it a changelog."""
_TEXT_TYPES = frozenset({"markdown", "text", "rst", "html", "docx", "pdf", "pptx", "epub"})


def text_kind(file_type: str, sections: Iterable[tuple[str, str]]) -> str:
    """The kind (``KINDS``) a document is by what it says, or "": read from its opening.

    ``sections``: its (heading path, text) pairs in order. A licence says a licence's
    sentences ("Permission is hereby granted, free of charge", "GNU General Public License", a
    Debian copyright file's format line); a changelog's headings or lines open ``RELEASES`` or
    more releases' entries by their version alone ("[1.2.0] - 2024-05-01", "Git v2.39.1",
    "Version 4.4", "1.5.0 (2026-11-04)": a numbered section, "0.1. Notices", is none). Tables
    are neither.
    """
    if file_type not in _TEXT_TYPES:
        return ""
    pairs = list(sections)
    headings = dict.fromkeys(part for heading, _ in pairs for part in heading.split(" > ") if part)
    opening = "\n".join([*headings, *(text for _, text in pairs)])[:6000]
    lines = (" ".join(line.split()) for line in opening.splitlines())
    releases = sum(
        1 for line in lines if len(line) <= HEADING_CHARS and _VERSION_HEADING.fullmatch(line)
    )
    if releases >= RELEASES:
        return "changelog"
    if _LICENCE_TEXT.search(opening[:3000]):
        return "licence"
    return ""


def is_kind(kind: str, doc: Mapping[str, Any]) -> bool:
    """Whether a document is of ``kind`` (``KINDS``): by what it says or by its file's name.

    What it says is read once, when it is ingested (``text_kind``, the stored ``kind``);
    its name is enough ("HISTORY.rst", "COPYING").
    """
    if doc.get("kind") == kind:
        return True
    name = str(doc.get("label") or doc.get("doc_id") or "").rsplit("/", 1)[-1]
    stem = re.sub(r"\.\w+$", "", name.lower())
    return re.fullmatch(rf"(?:{KINDS[kind]})(?:[ ._-].*)?", stem) is not None


def named_by(topic: str, doc: Mapping[str, Any]) -> bool:
    """Whether every word of ``topic`` (but short ones) is in the document's title or name."""
    words = [w for w in words_of(topic) if len(w) > 2 and w not in STOPWORDS]
    name = " ".join(str(doc.get(k) or "") for k in ("title", "label")).lower()
    have = words_of(name)
    return bool(words) and all(any(same_word(w, h) for h in have) for w in words)


_READ_WORDS = frozenset(
    """how many which what list show name give tell count number total all every any
    document documents doc docs file files pdf pdfs spreadsheet spreadsheets workbook workbooks
    csv csvs notebook notebooks presentation presentations slide slides deck decks web html
    page pages webpage webpages ebook ebooks epub epubs changelog changelogs change log logs
    release notes licence licences license licenses readme readmes read word excel xlsx docx
    table tables markdown text restructuredtext pptx collection knowledge base modified changed
    updated edited created ingested added uploaded indexed imported add upload import since
    after before until today yesterday week month year years days last past newest latest
    recent recently oldest earliest first least cover covers mention mentions discuss discusses
    describe describes talk talks deal deals type types kind kinds store stored keep kept""".split()
)
"""Words the catalog's reading reads (``catalog_query``), besides stopwords, months and years."""


def unread(question: str, query: CatalogQuery) -> list[str]:
    """The question's words the catalog's reading left unused: a condition it may have missed.

    Every word but stopwords, the words ``catalog_query`` reads (its nouns, file types, kinds,
    date and order words), month names, numbers, and the topic's words. "Which files
    document the API's breaking changes?" leaves "document", "api", "breaking".
    """
    topic = set(words_of(query.topic))
    return [
        w
        for w in words_of(question)
        if w not in STOPWORDS
        and w not in _READ_WORDS
        and w not in _MONTHS
        and w not in topic
        and not w.isdigit()
        and not any(same_word(w, r) for r in ("document", "file", "page"))
    ]


def catalog_answer(query: CatalogQuery, labels: Sequence[str], limit: int = 20) -> str:
    """The answer: a count, or the documents' names (``limit`` at most), or that none is."""
    if query.kind == "count":
        return str(len(labels))
    if not labels:
        what = " ".join(query.said) or "at all"
        return f"None: the collection holds no document {what}."
    more = len(labels) - limit
    return ", ".join(labels[:limit]) + (f" (and {more} more)" if more > 0 else "")
