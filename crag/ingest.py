"""Ingest files into the knowledge base: idempotent, per-file, with clear errors.

Text, Markdown, PDF, HTML and Word files (``crag_core.formats.extract``). Each file becomes a
document with id ``<slug>-<hash of its absolute path>`` and chunks ``<doc_id>__c0000``..., so
re-ingesting a file never duplicates it and a changed file replaces its chunks. Every chunk
records the file's title, type and modification time, and where it sits: its PDF page or its
heading path. A file that cannot be used (missing, unsupported, encrypted, without a text
layer, binary, not UTF-8, empty, too large) is reported with the reason; the others are still
ingested. Inside a folder such a file is *skipped*; named on its own it has *failed*.

Crash safety: each file is written to Chroma, then to the keyword index, whose per-file hash is
the commit mark (see ``KnowledgeBase.stored_hash``); a file interrupted anywhere before that
mark is rewritten in full by the next run. Ingests of one collection hold its write lock, so
two processes take turns instead of interleaving writes.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from langchain_text_splitters import RecursiveCharacterTextSplitter

from crag_core.clients.documents import plural
from crag_core.clients.errors import ConfigError
from crag_core.clients.knowledge_base import KnowledgeBase, NewDocument
from crag_core.formats.extract import (
    FILE_TYPES,
    Extracted,
    Unextractable,
    extract,
    extract_data,
    read_file,
)
from crag_core.formats.fetch_url import fetch, is_url

SUPPORTED_SUFFIXES = frozenset(FILE_TYPES)
Source = Path | str
"""A file, or a web address (``http(s)://``)."""
CHUNK_SIZE = 800
CHUNK_OVERLAP = 120


class SkipFile(Exception):
    """A file that cannot be ingested; the message says why."""


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

    def to_json(self, collection: str, stored: int, seconds: float) -> dict[str, Any]:
        """The report as ``crag ingest --json`` prints it."""
        return {
            "collection": collection,
            "added": [str(p) for p in self.added],
            "replaced": [str(p) for p in self.replaced],
            "unchanged": [str(p) for p in self.unchanged],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "failed": [{"path": p, "reason": r} for p, r in self.failed],
            "removed": self.removed,
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


def chunk(extracted: Extracted) -> list[tuple[str, dict[str, str | int]]]:
    """The file's chunks, each with where it sits: its PDF page or its heading path."""
    chunks: list[tuple[str, dict[str, str | int]]] = []
    for section in extracted.sections:
        where: dict[str, str | int] = {}
        if section.page is not None:
            where["page"] = section.page
        if section.heading:
            where["heading"] = section.heading
        chunks += [(piece, where) for piece in split_text(section.text)]
    return chunks


def discover(paths: Iterable[str]) -> Iterator[tuple[Source, str | None, bool]]:
    """Yield ``(file or URL, reason, in_folder)``: ``reason`` is None for a source to ingest.

    Folders are walked recursively without following symlinks (no loops); hidden files and
    folders are left out; every other file is yielded, so one of an unsupported type is
    reported as skipped.
    """
    for raw in paths:
        if is_url(raw):
            yield raw, None, False
            continue
        path = Path(raw).expanduser()
        if path.is_dir():
            for root, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(n for n in files if not n.startswith(".")):
                    file = Path(root) / name
                    if file.suffix.lower() in SUPPORTED_SUFFIXES:
                        yield file, None, True
                    else:
                        yield file, _unsupported(file), True
        elif path.is_file():
            if path.suffix.lower() in SUPPORTED_SUFFIXES:
                yield path, None, False
            else:
                yield path, _unsupported(path), False
        elif path.is_symlink():
            yield path, "broken or looping symlink", False
        else:
            yield path, "no such file or directory", False


def _unsupported(path: Path) -> str:
    kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
    return f"unsupported file type {path.suffix or '(none)'!r} (use {kinds})"


BATCH_CHUNKS = 256
"""Chunks embedded and written together: files are batched, not sent one by one."""


def prepare(source: Source, stored: dict[str, str]) -> NewDocument | None:
    """The document to write for a file or URL (``None``: stored and unchanged); ``SkipFile``.

    The bytes are read once; an unchanged file (same hash as stored) is not extracted again.
    """
    try:
        if isinstance(source, str):
            fetched = fetch(source)
            data, kind, modified = fetched.data, fetched.kind, fetched.modified
        else:
            kind, data = read_file(source)
            modified = int(source.stat().st_mtime)
        content_hash = hashlib.sha256(data).hexdigest()
        doc_id = document_id(source)
        if stored.get(doc_id) == content_hash:
            return None
        extracted = extract_data(data, kind, _name(source))
    except Unextractable as exc:
        raise SkipFile(str(exc)) from exc
    except OSError as exc:
        raise SkipFile(f"cannot read: {exc.strerror or exc}") from exc
    pieces = chunk(extracted)
    about: dict[str, str | int] = {
        "title": extracted.title,
        "type": extracted.file_type,
        "modified": modified,
    }
    return NewDocument(
        doc_id,
        source if isinstance(source, str) else str(source.resolve()),
        content_hash,
        [text for text, _ in pieces],
        [about | where for _, where in pieces],
    )


def ingest(
    kb: KnowledgeBase,
    paths: Iterable[str],
    on_progress: Callable[[float, int, str], None] | None = None,
    sync: bool = False,
) -> IngestReport:
    """Ingest every supported file under ``paths``.

    ``on_progress(done, total, doing)`` follows it: ``done`` counts the files finished (a file
    read into a batch is finished once the batch is embedded and written; while it is being
    embedded, the batch's files count in proportion to the chunks embedded), ``doing`` says
    what is under way.

    Files are read one by one and written in batches of about ``BATCH_CHUNKS`` chunks (one
    embedding call, one upsert). With ``sync``, documents whose source lies under one of the
    folders in ``paths`` but whose file is gone are removed too, so the collection mirrors
    the folders.
    """
    report = IngestReport()
    paths = list(paths)
    items = list(discover(paths))
    with kb.write_lock():
        if sync:
            folders = [Path(p).expanduser().resolve() for p in paths if Path(p).is_dir()]
            report.removed = remove_sources(kb, folders, only_missing=True)
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
                _write(kb, batch, stored, report, embedded)

        for path, refused, in_folder in items:
            progress(f"reading {path if isinstance(path, str) else path.name}")
            read += 1
            try:
                if refused:
                    raise SkipFile(refused)
                doc = None if document_id(path) in seen else prepare(path, stored)
            except SkipFile as exc:
                (report.skipped if in_folder else report.failed).append((str(path), str(exc)))
                continue
            if doc is None:
                report.unchanged.append(path)
                continue
            seen.add(doc.doc_id)
            batch.append((path, doc))
            if sum(len(d.chunks) for _, d in batch) >= BATCH_CHUNKS:
                flush()
        flush()
        progress("done")
    return report


def _write(
    kb: KnowledgeBase,
    batch: list[tuple[Source, NewDocument]],
    stored: dict[str, str],
    report: IngestReport,
    on_embedded: Callable[[int, int], None] | None = None,
) -> None:
    """Write ``batch`` and record each file as added or replaced; empties the batch."""
    kb.replace_documents([doc for _, doc in batch], on_embedded)
    for path, doc in batch:
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
    """The documents (``kb.documents()`` entries) whose source is one of ``paths`` or under one."""
    found = []
    for meta in docs:
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


def resync(kb: KnowledgeBase) -> IngestReport:
    """Read every stored source again: changed ones replaced, vanished files removed.

    Unchanged files and pages are left as they are (their hash is compared); a URL that cannot
    be fetched now is reported and kept.
    """
    sources = [str(d.get("source", "")) for d in kb.documents()]
    gone = [Path(s) for s in sources if not is_url(s) and not Path(s).exists()]
    with kb.write_lock():
        removed = remove_sources(kb, gone)
    report = ingest(kb, [s for s in sources if is_url(s) or Path(s).exists()])
    report.removed = removed
    return report


UPLOADS = "uploads"
"""Under the data dir: ``uploads/<collection>/<file>``, the files added through the page."""


def upload_name(filename: str) -> str:
    """The name an uploaded file is kept under; ``SkipFile`` for one crag cannot read.

    Only the last path component is kept (no directory climbing), hidden names are refused.
    """
    name = PurePosixPath(filename.replace("\\", "/")).name.strip()
    if not name or name.startswith("."):
        raise SkipFile(f"not a usable file name: {filename!r}")
    if Path(name).suffix.lower() not in SUPPORTED_SUFFIXES:
        raise SkipFile(_unsupported(Path(name)))
    return name


def add_upload(kb: KnowledgeBase, incoming: Path, final: Path) -> dict[str, Any]:
    """Ingest an uploaded file received at ``incoming`` as ``final``; what became of it.

    The file is read before it takes its place: one crag cannot use is deleted and reported
    ``skipped`` with the reason, and a file of the same name already there is left untouched.
    Returns ``{"name", "status": added|replaced|unchanged|skipped, "reason", "doc_id",
    "chunks"}``.
    """
    result: dict[str, Any] = {"name": final.name, "doc_id": document_id(final), "chunks": 0}
    try:
        extract(incoming)
    except Unextractable as exc:
        incoming.unlink(missing_ok=True)
        return result | {"status": "skipped", "reason": str(exc)}
    os.replace(incoming, final)
    report = ingest(kb, [str(final)])
    if report.failed:
        return result | {"status": "skipped", "reason": report.failed[0][1]}
    status = "added" if report.added else "replaced" if report.replaced else "unchanged"
    return result | {"status": status, "reason": "", "chunks": report.chunks}


def remove_document(kb: KnowledgeBase, doc_id: str, uploads: Path) -> int:
    """Remove document ``doc_id`` (0 chunks: there was none); an uploaded file goes with it."""
    chunks = kb.chunks_of(doc_id)
    if not chunks:
        return 0
    with kb.write_lock():
        removed = kb.remove_document(doc_id)
    source = Path(str(chunks[0].metadata.get("source", "")))
    if source.parent == uploads.resolve() / kb.name:
        source.unlink(missing_ok=True)
    return removed
