"""Put a dataset's paragraphs into a knowledge base (idempotent: indexed paragraphs are skipped)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from crag.eval.squad import Dataset
from crag.ingest import BATCH_CHUNKS, split_text
from crag_core.clients.chroma import NewDocument
from crag_core.clients.knowledge_base import KnowledgeBase


def index_paragraphs(
    kb: KnowledgeBase, dataset: Dataset, on_progress: Callable[[int, int], None] | None = None
) -> int:
    """Ingest every paragraph as a document (id = paragraph id); return how many were written.

    Paragraphs are written in batches of about ``BATCH_CHUNKS`` chunks, as files are.
    """
    written = 0
    total = len(dataset.paragraphs)
    with kb.write_lock():
        stored = kb.stored_hashes()
        batch: list[NewDocument] = []
        for done, para in enumerate(dataset.paragraphs, start=1):
            content_hash = hashlib.sha256(para.text.encode()).hexdigest()
            if stored.get(para.id) != content_hash:
                source = f"squad:{para.title}#{para.id.rsplit('-p', 1)[-1]}"
                batch.append(NewDocument(para.id, source, content_hash, split_text(para.text)))
            if sum(len(d.chunks) for d in batch) >= BATCH_CHUNKS or done == total:
                kb.replace_documents(batch)
                written += len(batch)
                batch = []
            if on_progress:
                on_progress(done, total)
    return written


def paragraph_of(chunk_id: str) -> str:
    """The paragraph (document) id of a chunk id."""
    return chunk_id.split("__c", 1)[0]
