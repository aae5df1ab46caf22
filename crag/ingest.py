"""Ingest files into the knowledge base: idempotent, per-file, with clear errors.

The files of ``crag_core.formats.extract.FILE_TYPES`` and web pages. Each file becomes a
document with id ``<slug>-<hash of its absolute path>`` and chunks ``<doc_id>__c0000``..., so
re-ingesting a file never duplicates it and a changed file replaces its chunks. Every chunk
records the file's title, type, modification time, origin and label (what callers are shown,
``crag_core.text.sources``), and where it sits: its PDF page or its heading path. A file
that cannot be used (missing, unsupported, encrypted, without a text layer, binary, not UTF-8,
empty, too large) is reported with the reason; the others are still ingested. Inside a folder
such a file is *skipped*; named on its own it has *failed*; a damaged or hostile one (its
reader failed or went past a bound) has failed wherever it was.

Crash safety: each file is written to Chroma, then to the keyword index, whose per-file hash is
the commit mark (see ``KnowledgeBase.stored_hash``); a file interrupted anywhere before that
mark is rewritten in full by the next run. Writes to one collection hold its write lock, so
two processes take turns instead of interleaving writes; reading files and fetching pages
happen before, outside the lock, so a slow web server never holds the collection. (Two
ingests of the same source at once write it once: a batch's stored hashes are read again
under the lock before it is written.)
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from langchain_text_splitters import RecursiveCharacterTextSplitter

from crag_core.clients.chroma import NewDocument
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.errors import ConfigError
from crag_core.formats import isolated
from crag_core.formats.extract import (
    FILE_TYPES,
    Damaged,
    Extracted,
    Unextractable,
    file_type,
    read_file,
)
from crag_core.formats.fetch_url import fetch
from crag_core.formats.isolated import read_bounded
from crag_core.formats.ocr import OcrEngine
from crag_core.formats.outbound import Outbound
from crag_core.text.catalog import text_kind
from crag_core.text.documents import context_line, with_context
from crag_core.text.regions import box_text, chunk_lines, lines_text, union
from crag_core.text.sources import (
    READ_AGAIN,
    Origin,
    is_url,
    origin_of,
    public_source,
    without_userinfo,
)
from crag_core.text.words import plural

SUPPORTED_SUFFIXES = frozenset(FILE_TYPES)
Source = Path | str
"""A file, or a web address (``http(s)://``)."""
CHUNK_SIZE = 800
CHUNK_OVERLAP = 120
CHUNKING = 4
"""How files are cut into chunks; part of each stored document's hash, so a store written
another way is re-read by the next ingest or sync (1: chunks alone; 2 to 4: each under a
context line, as it was chosen: docs/benchmarks/chunk-context.md)."""


class SkipFile(Exception):
    """A file that cannot be ingested; the message says why.

    ``damaged``: a file of a type crag reads whose reader failed or went past a bound (a
    damaged or hostile file), reported as failed even inside a folder.
    """

    def __init__(self, reason: str, damaged: bool = False) -> None:
        super().__init__(reason)
        self.damaged = damaged


@dataclass(frozen=True)
class Found:
    """A source to ingest (``reason`` None) or not, and how it is named and where it is from."""

    source: Source
    label: str
    """What listings and answers show: the path below the folder given, the file's name, or
    the address without userinfo (``crag_core.text.sources``)."""
    reason: str | None = None
    in_folder: bool = False
    origin: Origin = "file"


@dataclass
class IngestReport:
    """What an ingest run did, file by file."""

    added: list[Source] = field(default_factory=list)
    replaced: list[Source] = field(default_factory=list)
    unchanged: list[Source] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    """Files named on their own that could not be ingested, with the reason."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """Files found in a folder that could not be ingested, with the reason."""
    removed: list[str] = field(default_factory=list)
    """Sources removed because their files are gone (``sync``)."""
    chunks: int = 0
    labels: dict[str, str] = field(default_factory=dict)
    """Each source's label (what an API caller is shown instead of a path on the server)."""

    def to_json(
        self, collection: str, stored: int, seconds: float, public: bool = False
    ) -> dict[str, Any]:
        """The report as ``crag ingest --json`` prints it; ``public``: as the API shows it.

        The API's callers see each file by its label, never by its path on the server.
        """

        def name(source: Source | str) -> str:
            return self.labels.get(str(source), str(source)) if public else str(source)

        return {
            "collection": collection,
            "added": [name(p) for p in self.added],
            "replaced": [name(p) for p in self.replaced],
            "unchanged": [name(p) for p in self.unchanged],
            "skipped": [{"path": name(p), "reason": r} for p, r in self.skipped],
            "failed": [{"path": name(p), "reason": r} for p, r in self.failed],
            "removed": [name(p) for p in self.removed],
            "chunks_written": self.chunks,
            "chunks_stored": stored,
            "seconds": seconds,
        }


def document_id(source: Source) -> str:
    """Stable id of a file or URL: readable slug plus a hash of its absolute path or the URL."""
    stem, where = _name(source), source if isinstance(source, str) else str(source.resolve())
    slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")[:40] or "doc"
    return f"{slug}-{hashlib.sha1(where.encode()).hexdigest()[:8]}"


def _name(source: Source) -> str:
    """A file's stem; a URL's last path segment without suffix, else its host."""
    if isinstance(source, Path):
        return source.stem
    parts = urlsplit(source)
    return PurePosixPath(parts.path).stem or parts.hostname or "page"


def split_text(text: str) -> list[str]:
    """Split text into overlapping chunks of about ``CHUNK_SIZE`` characters."""
    splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
    return [c for c in splitter.split_text(text) if c.strip()]


def content_hash(data: bytes) -> str:
    """The hash a document is stored with: of its file's bytes and of ``CHUNKING``."""
    return hashlib.sha256(data).hexdigest() + f"-c{CHUNKING}"


def chunk(extracted: Extracted, name: str = "") -> list[tuple[str, dict[str, str | int]]]:
    """The file's chunks, each with where it sits: its PDF page or its heading path.

    Each chunk is stored under its context line (``context``: the file's ``name``, its title
    and the heading path; ``crag_core.text.documents.context_line``, ``with_context``). A
    chunk of a PDF page or an image also records its region on the page (``box``:
    "left,top,right,bottom" as fractions of the page) and its lines' (``lines``), where its
    reader gave the lines' places.
    """
    chunks: list[tuple[str, dict[str, str | int]]] = []
    for section in extracted.sections:
        where: dict[str, str | int] = {}
        if section.page is not None:
            where["page"] = section.page
        if section.heading:
            where["heading"] = section.heading
        if section.ocr:
            where["ocr"] = 1
        if context := context_line(extracted.title, section.heading or "", name):
            where["context"] = context
        for piece in split_text(section.text):
            placed = chunk_lines(piece, section.lines) if section.lines else []
            place: dict[str, str | int] = {}
            if placed:
                box = union([b for _, b in placed])
                place = {"box": box_text(box), "lines": lines_text(placed)}
            chunks.append((with_context(piece, context), where | place))
    return chunks


def discover(paths: Iterable[str], origin: Origin = "file") -> Iterator[Found]:
    """Each file or URL under ``paths``, with the reason when it is not one to ingest.

    Folders are walked recursively without following symlinks (no loops); hidden files and
    folders are left out; every other file is yielded, so one of an unsupported type is
    reported as skipped. A file found in a folder is labelled with its path below the folder's
    parent ("notes/boiler.md"), a file named on its own with its name.
    """
    for raw in paths:
        if is_url(raw):
            yield Found(raw, without_userinfo(raw), origin="url")
            continue
        path = Path(raw).expanduser()
        if path.is_dir():
            top = path.resolve().name
            for root, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(n for n in files if not n.startswith(".")):
                    file = Path(root) / name
                    label = str(PurePosixPath(top, *file.relative_to(path).parts))
                    reason = None if _supported(file) else _unsupported(file)
                    yield Found(file, label, reason, True, origin)
        elif path.is_file():
            reason = None if _supported(path) else _unsupported(path)
            yield Found(path, path.name, reason, origin=origin)
        elif path.is_symlink():
            yield Found(path, path.name, "broken or looping symlink", origin=origin)
        else:
            yield Found(path, path.name, "no such file or directory", origin=origin)


def _supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def _unsupported(path: Path) -> str:
    kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
    return f"unsupported file type {path.suffix or '(none)'!r} (use {kinds})"


PAGES_DEADLINE_S = 120.0
"""The most the web pages of one API request (a page add, a sync, an indexer run) may take
together; each page has at most 30 s of it (``crag_core.formats.fetch_url``)."""
BATCH_CHUNKS = 256
"""Chunks embedded and written together: files are batched, not sent one by one."""


def prepare(
    found: Found,
    stored: dict[str, str],
    outbound: Outbound | None = None,
    deadline: float | None = None,
    already_read: Mapping[str, Extracted] | None = None,
) -> NewDocument | None:
    """The document to write for a file or URL (``None``: stored and unchanged); ``SkipFile``.

    The bytes are read once; an unchanged file (same hash as stored) is not extracted again,
    nor one whose text ``already_read`` holds (by its ``content_hash``: an upload read
    before it took its place, a scan not read by OCR twice).
    A URL is fetched within ``outbound`` when given (a fetch for an API caller) and by
    ``deadline`` (``time.monotonic()``) when given. The file is read within one memory
    ceiling and one deadline (``crag_core.formats.isolated``).
    """
    source = found.source
    try:
        if isinstance(source, str):
            fetched = fetch(source, outbound=outbound, deadline=deadline)
            data, kind, modified = fetched.data, fetched.kind, fetched.modified
            where = without_userinfo(source)
        else:
            kind, data = read_file(source)
            modified, where = int(source.stat().st_mtime), str(source.resolve())
        stored_as = content_hash(data)
        doc_id = document_id(where if isinstance(source, str) else source)
        if stored.get(doc_id) == stored_as:
            return None
        extracted = (already_read or {}).get(stored_as) or read_bounded(data, kind, _name(source))
    except Damaged as exc:
        raise SkipFile(str(exc), damaged=True) from exc
    except Unextractable as exc:
        raise SkipFile(str(exc)) from exc
    except OSError as exc:
        raise SkipFile(f"cannot read: {exc.strerror or exc}") from exc
    pieces = chunk(extracted, _name(source))
    about: dict[str, str | int] = {
        "title": extracted.title,
        "type": extracted.file_type,
        "modified": modified,
        "origin": found.origin,
        "label": found.label,
        "kind": text_kind(extracted.file_type, [(s.heading, s.text) for s in extracted.sections]),
    }
    return NewDocument(
        doc_id,
        where,
        stored_as,
        [text for text, _ in pieces],
        [about | where_in_file for _, where_in_file in pieces],
        label=found.label,
        tables=extracted.tables,
    )


def ingest(
    kb: KnowledgeBase,
    paths: Iterable[str],
    on_progress: Callable[[float, int, str], None] | None = None,
    sync: bool = False,
    outbound: Outbound | None = None,
    origin: Origin = "file",
    deadline: float | None = None,
    already_read: Mapping[str, Extracted] | None = None,
) -> IngestReport:
    """Ingest every supported file under ``paths``.

    ``on_progress(done, total, doing)`` follows it: ``done`` counts the files finished (a file
    read into a batch is finished once the batch is embedded and written; while it is being
    embedded, the batch's files count in proportion to the chunks embedded), ``doing`` says
    what is under way.

    Files are read one by one and written in batches of about ``BATCH_CHUNKS`` chunks (one
    embedding call, one upsert). With ``sync``, documents whose source lies under one of the
    folders in ``paths`` but whose file is gone are removed too, so the collection mirrors
    the folders. URLs are fetched within ``outbound`` when given (for an API caller), all
    by ``deadline`` when given; files are recorded with ``origin`` (``upload`` for the page's
    uploads).
    """
    paths = list(paths)
    removed: list[str] = []
    if sync:
        folders = [Path(p).expanduser().resolve() for p in paths if Path(p).is_dir()]
        with kb.write_lock():
            removed = remove_sources(kb, folders, only_missing=True)
    found = list(discover(paths, origin))
    report = ingest_found(kb, found, on_progress, outbound, deadline, already_read)
    report.removed = removed
    return report


def ingest_found(
    kb: KnowledgeBase,
    items: list[Found],
    on_progress: Callable[[float, int, str], None] | None = None,
    outbound: Outbound | None = None,
    deadline: float | None = None,
    already_read: Mapping[str, Extracted] | None = None,
) -> IngestReport:
    """Ingest ``items`` (``discover``'s, or a sync's stored sources); see ``ingest``.

    Each item is read (or fetched) with no lock held; what is stored is read, and each batch
    written, under the collection's write lock.
    """
    report = IngestReport()
    isolated.warm({file_type(Path(str(f.source))) or "html" for f in items if not f.reason})
    with kb.write_lock():  # quick, and no network: the stores are opened (made) in turns
        stored = kb.stored_hashes()
    batch: list[tuple[Source, NewDocument]] = []
    seen: set[str] = set()
    read = 0

    def progress(doing: str, share: float = 0.0) -> None:
        """``share``: how much of the batch's files the embedding has got through."""
        if on_progress:  # a file waiting in the batch is not finished yet
            on_progress(read - len(batch) * (1 - share), len(items), doing)

    def embedded(done: int, total: int) -> None:
        progress(f"embedding and writing: {done} of {plural(total, 'chunk')}", done / total)

    def flush() -> None:
        if batch:
            with kb.write_lock():
                _write(kb, batch, stored, report, embedded)

    for found in items:
        source = found.source
        shown = without_userinfo(source) if isinstance(source, str) else source
        report.labels[str(shown)] = found.label
        progress(f"reading {shown if isinstance(shown, str) else shown.name}")
        read += 1
        try:
            if found.reason:
                raise SkipFile(found.reason)
            new = _id_of(source) not in seen
            doc = prepare(found, stored, outbound, deadline, already_read) if new else None
        except SkipFile as exc:
            failed = not found.in_folder or exc.damaged
            (report.failed if failed else report.skipped).append((str(shown), str(exc)))
            continue
        if doc is None:
            report.unchanged.append(shown)
            continue
        seen.add(doc.doc_id)
        batch.append((shown, doc))
        if sum(len(d.chunks) for _, d in batch) >= BATCH_CHUNKS:
            flush()
    flush()
    progress("done")
    return report


def _id_of(source: Source) -> str:
    return document_id(without_userinfo(source) if isinstance(source, str) else source)


def _write(
    kb: KnowledgeBase,
    batch: list[tuple[Source, NewDocument]],
    stored: dict[str, str],
    report: IngestReport,
    on_embedded: Callable[[int, int], None] | None = None,
) -> None:
    """Write ``batch`` and record each file as added or replaced; empties the batch.

    The caller holds the write lock. What is stored is read again first: a document another
    ingest wrote with the same content since this one began is left alone (``unchanged``),
    so two ingests of one folder at once write it once.
    """
    now = kb.stored_hashes_of([doc.doc_id for _, doc in batch])
    stored.update(now)
    fresh: list[tuple[Source, NewDocument]] = []
    for path, doc in batch:
        if now.get(doc.doc_id) == doc.content_hash:
            report.unchanged.append(path)
        else:
            fresh.append((path, doc))
    if fresh:
        kb.replace_documents([doc for _, doc in fresh], on_embedded)
    for path, doc in fresh:
        report.chunks += len(doc.chunks)
        (report.replaced if doc.doc_id in stored else report.added).append(path)
    batch.clear()


def find_document(docs: list[dict[str, Any]], given: str) -> list[dict[str, Any]]:
    """The documents ``given`` names: its exact id, else ids starting with it, else file names.

    ``kb.documents()`` entries; more than one means ``given`` is ambiguous.
    """
    exact = [d for d in docs if d.get("doc_id") == given]
    if exact:
        return exact
    started = [d for d in docs if str(d.get("doc_id", "")).startswith(given)]
    if started:
        return started
    names = (given, Path(given).name)
    return [d for d in docs if PurePosixPath(str(d.get("source", ""))).name in names]


def from_sources(docs: list[dict[str, Any]], paths: list[Path]) -> list[dict[str, Any]]:
    """The files' documents (``kb.documents()`` entries) whose source is or lies under a path.

    A document sent inline is never a file, whatever its source says.
    """
    found = []
    for meta in docs:
        if origin_of(meta) not in ("file", "upload"):
            continue
        source = Path(str(meta.get("source", "")))
        if any(source == p or p in source.parents for p in paths):
            found.append(meta)
    return found


def remove_sources(kb: KnowledgeBase, paths: list[Path], only_missing: bool = False) -> list[str]:
    """Remove the documents whose source is one of ``paths`` or lies under one of them.

    With ``only_missing``, only those whose file no longer exists. Each document is removed
    whole (Chroma, then the keyword index); what a removal cut short left in the keyword
    index is removed too. Returns the sources (or leftover ids) removed. The caller holds the
    collection's write lock.
    """
    removed = []
    docs = kb.documents()
    for meta in from_sources(docs, paths):
        source = Path(str(meta.get("source", "")))
        if only_missing and source.exists():
            continue
        kb.remove_document(str(meta["doc_id"]))
        removed.append(str(source))
    for leftover in sorted(kb.doc_ids() - {str(m["doc_id"]) for m in docs}):
        kb.remove_document(leftover)
        removed.append(leftover)
    return removed


def remove(kb: KnowledgeBase, doc_ids: list[str], folder: Path | None = None) -> list[str]:
    """Remove documents by id, and every document of ``folder`` (a file or a folder).

    Under the collection's write lock; an unknown id removes nothing and raises
    ``ConfigError`` naming it. Returns the ids and sources removed.
    """
    removed: list[str] = []
    with kb.write_lock():
        known = kb.doc_ids()
        missing = [d for d in doc_ids if d not in known]
        if missing:
            raise ConfigError(
                f"No document {', '.join(map(repr, missing))} in collection {kb.name!r}."
            )
        for doc_id in doc_ids:
            kb.remove_document(doc_id)
            removed.append(doc_id)
        if folder is not None:
            removed += remove_sources(kb, [folder])
    return removed


def collection_summary(kb: KnowledgeBase) -> dict[str, Any]:
    """A collection at a glance: its documents, chunks and last ingest (epoch s, 0: never)."""
    docs = kb.documents()
    last = max((int(d.get("ingested", 0)) for d in docs), default=0)
    return {"name": kb.name, "documents": len(docs), "chunks": kb.count(), "last": last}


def resync(
    kb: KnowledgeBase, outbound: Outbound | None = None, deadline: float | None = None
) -> IngestReport:
    """Read every stored file and web page again: changed ones replaced, vanished files removed.

    Only what crag itself read is read again (files the CLI was given, uploads, web pages;
    ``crag_core.text.sources``): a document sent inline is left as it is, whatever its
    source says, and a file's source is read as that one file, never walked as a folder.
    Unchanged files and pages are left as they are (their hash is compared); a URL that cannot
    be fetched now (within ``outbound``, when given) is reported and kept.
    """
    docs = [d for d in kb.documents() if origin_of(d) in READ_AGAIN]
    files = [d for d in docs if origin_of(d) != "url"]
    gone = [Path(str(d["source"])) for d in files if not Path(str(d["source"])).is_file()]
    with kb.write_lock():
        removed = remove_sources(kb, gone)
    items = [
        Found(
            str(d["source"]) if origin_of(d) == "url" else Path(str(d["source"])),
            public_source(d),
            origin=origin_of(d),
        )
        for d in docs
        if origin_of(d) == "url" or Path(str(d["source"])).is_file()
    ]
    report = ingest_found(kb, items, outbound=outbound, deadline=deadline)
    report.removed = removed
    report.labels |= {str(Path(str(d["source"]))): public_source(d) for d in files}
    return report


UPLOADS = "uploads"
"""Under the data dir: ``uploads/<collection>/<file>``, the files added through the page."""
MAX_NAME_BYTES = 200
"""The longest uploaded file name kept (file systems take 255 bytes, with a prefix added)."""
UNSEEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories refused in an uploaded file's name: control and escape characters,
format characters (direction overrides, zero-width joiners and spaces), surrogates, private
use, unassigned, line and paragraph separators: what a listing would not show as it is."""


def upload_name(filename: str) -> str:
    """The name an uploaded file is kept under; ``SkipFile`` for one crag cannot read.

    Only the last path component is kept (no directory climbing); hidden names, names over
    ``MAX_NAME_BYTES`` and names with characters a listing would not show (``UNSEEN``) are
    refused.
    """
    name = PurePosixPath(filename.replace("\\", "/")).name.strip()
    if not name or name.startswith("."):
        raise SkipFile(f"not a usable file name: {filename[:80]!r}")
    hidden = sorted({f"U+{ord(c):04X}" for c in name if unicodedata.category(c) in UNSEEN})
    if hidden:
        raise SkipFile(
            "the file name holds control, escape, direction or zero-width characters "
            f"({', '.join(hidden[:5])})"
        )
    if len(name.encode()) > MAX_NAME_BYTES:
        raise SkipFile(f"the file name is longer than {MAX_NAME_BYTES} bytes")
    if Path(name).suffix.lower() not in SUPPORTED_SUFFIXES:
        raise SkipFile(_unsupported(Path(name)))
    return name


def add_upload(
    kb: KnowledgeBase, incoming: Path, final: Path, ocr: OcrEngine | None = None
) -> dict[str, Any]:
    """Ingest an uploaded file received at ``incoming`` as ``final``; what became of it.

    The file is read before it takes its place: one crag cannot use is deleted and reported
    ``skipped`` with the reason, and a file of the same name already there is left untouched.
    If storing it fails, the file that was there before is put back (or the new one removed),
    so ``uploads/`` never keeps a file the collection does not hold.
    ``ocr``: the engine its reading may use (a user's allowance: ``crag.allowance``; default the
    settings'). Returns ``{"name", "status": added|replaced|unchanged|skipped, "reason",
    "doc_id", "chunks", "ocr_pages"}`` (pages read by OCR, counted whatever became of it).
    """
    result: dict[str, Any] = {
        "name": final.name,
        "doc_id": document_id(final),
        "chunks": 0,
        "ocr_pages": 0,
    }
    try:
        kind, data = read_file(incoming)
        extracted = read_bounded(data, kind, final.stem, ocr)
    except Unextractable as exc:
        incoming.unlink(missing_ok=True)
        if "OCR of" in str(exc) and ocr is not None and ocr.pages is not None:
            result["ocr_pages"] = ocr.pages  # OCR ran, then failed: its pages were spent
        return result | {"status": "skipped", "reason": str(exc)}
    result["ocr_pages"] = len({s.page for s in extracted.sections if s.ocr})
    previous = final.with_name(f".previous-{incoming.name}")
    had = final.exists()
    if had:
        os.replace(final, previous)
    os.replace(incoming, final)
    try:
        read = {content_hash(data): extracted}  # not read (by OCR) a second time
        report = ingest(kb, [str(final)], origin="upload", already_read=read)
    except BaseException:
        _put_back(final, previous, had)
        raise
    if report.failed:
        _put_back(final, previous, had)
        return result | {"status": "skipped", "reason": report.failed[0][1]}
    previous.unlink(missing_ok=True)
    status = "added" if report.added else "replaced" if report.replaced else "unchanged"
    return result | {"status": status, "reason": "", "chunks": report.chunks}


def _put_back(final: Path, previous: Path, had: bool) -> None:
    """Undo an upload that was not stored: the earlier file back, or none."""
    if had:
        os.replace(previous, final)
    else:
        final.unlink(missing_ok=True)


def remove_document(kb: KnowledgeBase, doc_id: str, uploads: Path) -> int:
    """Remove document ``doc_id`` (0 chunks: there was none); an uploaded file goes with it."""
    chunks = kb.chunks_of(doc_id)
    if not chunks:
        return 0
    with kb.write_lock():
        removed = kb.remove_document(doc_id)
    source = Path(str(chunks[0].metadata.get("source", "")))
    is_upload = origin_of(chunks[0].metadata) in ("file", "upload")
    if is_upload and source.parent == uploads.resolve() / kb.name:
        source.unlink(missing_ok=True)
    return removed
