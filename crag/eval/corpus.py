"""Put a dataset's paragraphs into a knowledge base (idempotent: indexed paragraphs are skipped)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from adapters.knowledge_base import KnowledgeBase
from crag.eval.squad import Dataset
from crag.ingest import split_text


def index_paragraphs(
    kb: KnowledgeBase, dataset: Dataset, on_progress: Callable[[int, int], None] | None = None
) -> int:
    """Ingest every paragraph as a document (id = paragraph id); return how many were written."""
    written = 0
    total = len(dataset.paragraphs)
    with kb.write_lock():
        for done, para in enumerate(dataset.paragraphs, start=1):
            content_hash = hashlib.sha256(para.text.encode()).hexdigest()
            if kb.stored_hash(para.id) != content_hash:
                source = f"squad:{para.title}#{para.id.rsplit('-p', 1)[-1]}"
                kb.replace_document(para.id, source, content_hash, split_text(para.text))
                written += 1
            if on_progress:
                on_progress(done, total)
    return written


def paragraph_of(chunk_id: str) -> str:
    """The paragraph (document) id of a chunk id."""
    return chunk_id.split("__c", 1)[0]
