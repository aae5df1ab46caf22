"""Ingest .txt and .md files into the knowledge base: idempotent, per-file, with clear errors.

Each file becomes a document with id ``<slug>-<hash of its absolute path>`` and chunks
``<doc_id>__c0000``..., so re-ingesting a file never duplicates it and a changed file replaces
its chunks. A file that cannot be read (missing, binary, not UTF-8, empty, too large,
unsupported) is reported and skipped; the others are still ingested.

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
from pathlib import Path

from langchain_text_splitters import RecursiveCharacterTextSplitter

from adapters.knowledge_base import KnowledgeBase

SUPPORTED_SUFFIXES = frozenset({".txt", ".md", ".markdown"})
MAX_FILE_BYTES = 20 * 1024 * 1024
CHUNK_SIZE = 800
CHUNK_OVERLAP = 120


class SkipFile(Exception):
    """A file that cannot be ingested; the message says why."""


@dataclass
class IngestReport:
    """What an ingest run did, file by file."""

    added: list[Path] = field(default_factory=list)
    replaced: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0


def document_id(path: Path) -> str:
    """Stable id of the file at ``path``: readable slug plus a hash of its absolute path."""
    slug = re.sub(r"[^a-z0-9]+", "-", path.stem.lower()).strip("-")[:40] or "doc"
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
    return f"{slug}-{digest}"


def split_text(text: str) -> list[str]:
    """Split text into overlapping chunks of about ``CHUNK_SIZE`` characters."""
    splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
    return [c for c in splitter.split_text(text) if c.strip()]


def read_text(path: Path) -> str:
    """Read a text file, refusing binary, non-UTF-8, empty and oversized files."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SkipFile(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        data = path.read_bytes()
    except OSError as exc:
        raise SkipFile(f"cannot read: {exc.strerror or exc}") from exc
    if b"\x00" in data:
        raise SkipFile("binary file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkipFile(f"not UTF-8 text (byte {exc.start})") from exc
    if not text.strip():
        raise SkipFile("empty file")
    return text


def discover(paths: Iterable[str]) -> Iterator[tuple[Path, str | None]]:
    """Yield ``(file, None)`` for each file to ingest and ``(path, reason)`` for each refused one.

    Folders are walked recursively without following symlinks (no loops); files of other
    types inside folders are skipped quietly, but a file named explicitly must be supported.
    """
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            for root, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    file = Path(root) / name
                    if file.suffix.lower() in SUPPORTED_SUFFIXES and not name.startswith("."):
                        yield file, None
        elif path.is_file():
            if path.suffix.lower() in SUPPORTED_SUFFIXES:
                yield path, None
            else:
                kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
                yield path, f"unsupported file type {path.suffix or '(none)'!r} (use {kinds})"
        elif path.is_symlink():
            yield path, "broken or looping symlink"
        else:
            yield path, "no such file or directory"


def ingest_file(kb: KnowledgeBase, path: Path, report: IngestReport) -> None:
    """Ingest one file into ``kb``, recording the outcome in ``report``."""
    text = read_text(path)
    content_hash = hashlib.sha256(text.encode()).hexdigest()
    doc_id = document_id(path)
    previous = kb.stored_hash(doc_id)
    if previous == content_hash:
        report.unchanged.append(path)
        return
    chunks = split_text(text)
    kb.replace_document(doc_id, str(path.resolve()), content_hash, chunks)
    report.chunks += len(chunks)
    (report.replaced if previous else report.added).append(path)


def ingest(
    kb: KnowledgeBase,
    paths: Iterable[str],
    on_file: Callable[[Path, int, int], None] | None = None,
) -> IngestReport:
    """Ingest every supported file under ``paths``; ``on_file(path, done, total)`` after each."""
    report = IngestReport()
    items = list(discover(paths))
    with kb.write_lock():
        for done, (path, refused) in enumerate(items, start=1):
            try:
                if refused:
                    raise SkipFile(refused)
                ingest_file(kb, path, report)
            except SkipFile as exc:
                report.failed.append((str(path), str(exc)))
            if on_file:
                on_file(path, done, len(items))
    return report
