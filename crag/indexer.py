"""The indexing graph: documents in and out of a collection through the LangGraph API.

LangChain's retrieval template serves an indexing graph beside its question graph, so that the
same API and SDK that ask can also ingest; crag's is ``indexer`` in langgraph.json. Its input
(every key optional):

- ``docs``: documents given inline, as LangChain ``Document``s or ``{"page_content": …,
  "metadata": {…}}`` (the template's form); ``metadata.source`` names one (the same source
  again replaces it; without one, the text's hash does), ``metadata.title`` titles it;
- ``urls``: web pages or files to fetch (bounded as ``crag ingest URL`` is);
- ``remove``: ids of documents to remove;
- ``sync``: read every stored source again (changed replaced, vanished removed).

The collection is the run's context ``collection``, as for questions. Paths on the server are
not taken: the API's callers are not the server's users (upload files through the page's
route, or run ``crag ingest`` there). Inline documents and addresses are held to an upload's
limits (``crag.limits``: 2,000,000 characters a document and a run, 20 web pages). A
document sent inline stays inline: its source is a name (shown as given, never read as a
path, left alone by a sync), and web pages are fetched only where ``crag.policy.outbound``
allows. The output is ``report``: what was added, replaced, left
unchanged, refused (with the reason) and removed, by the names callers see, and the
collection's chunk count.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, TypedDict

from langchain_core.documents import Document
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from crag import ingest, limits, policy
from crag_core.clients.chroma import NewDocument
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.schema.context import Context, context_of
from crag_core.settings import data_dir
from crag_core.text.sources import is_url
from graph import factory

MAX_SOURCE_CHARS = 500
"""The longest name an inline document's ``metadata.source`` may give it."""


class IndexInput(TypedDict, total=False):
    """What to put in or take out of the run's collection."""

    docs: list[Document | dict[str, Any]]
    urls: list[str]
    remove: list[str]
    sync: bool


class IndexOutput(TypedDict, total=False):
    """What the run did."""

    report: dict[str, Any]


class IndexState(IndexInput, IndexOutput):
    """The indexing graph's state: its input and its report."""


def index(state: IndexState, runtime: Runtime[Context]) -> IndexOutput:
    """Remove, re-sync, then add what the input names; one report of it all.

    First the input's limits (``crag.limits``), whatever door the state came in by: the API's
    doors check them before the run, this is the last line.
    """
    try:
        limits.check_index(list(state.get("docs") or []), list(state.get("urls") or []))
    except policy.Refusal as refused:
        raise ValueError(refused.message) from None
    kb = factory.knowledge_base(context_of(runtime).collection)
    removed = [
        doc_id
        for doc_id in state.get("remove") or []
        if ingest.remove_document(kb, doc_id, data_dir() / ingest.UPLOADS)
    ]
    outbound = policy.outbound()
    deadline = time.monotonic() + ingest.PAGES_DEADLINE_S  # the run's pages, sync's included
    sync = state.get("sync")
    done = ingest.resync(kb, outbound, deadline) if sync else ingest.IngestReport()
    urls = [str(u) for u in state.get("urls") or []]
    fetched = ingest.ingest(
        kb, [u for u in urls if is_url(u)], outbound=outbound, deadline=deadline
    )
    inline = _write_inline(kb, [_as_document(d) for d in state.get("docs") or []])
    for part in (fetched, inline):
        done.labels |= part.labels
        done.added += part.added
        done.replaced += part.replaced
        done.unchanged += part.unchanged
        done.failed += part.failed
        done.chunks += part.chunks
    done.failed += [
        (u[:200], "not an http(s) URL (the API reads no server path)")
        for u in urls
        if not is_url(u)
    ]
    done.removed = removed + done.removed
    stored = kb.count() if kb.exists() else 0
    return {"report": done.to_json(kb.name, stored, 0.0, public=True)}


def _as_document(doc: Document | dict[str, Any]) -> Document:
    if isinstance(doc, Document):
        return doc
    if not isinstance(doc, dict) or not isinstance(doc.get("page_content"), str):
        raise ValueError('Each of "docs" needs "page_content" (text) and may have "metadata".')
    return Document(page_content=doc["page_content"], metadata=dict(doc.get("metadata") or {}))


def _write_inline(kb: KnowledgeBase, docs: list[Document]) -> ingest.IngestReport:
    """Store inline documents (one batch); each source is added, replaced or unchanged."""
    report = ingest.IngestReport()
    if not docs:
        return report
    batch: list[NewDocument] = []
    with kb.write_lock():
        stored = kb.stored_hashes()
        for doc in docs:
            text = doc.page_content.strip()
            digest = hashlib.sha256(text.encode()).hexdigest()
            source = str(doc.metadata.get("source") or f"api:{digest[:16]}")
            doc_id = ingest.document_id(source)
            if len(source) > MAX_SOURCE_CHARS:
                report.failed.append(
                    (source[:80] + "…", f"a source of over {MAX_SOURCE_CHARS} characters")
                )
            elif not text:
                report.failed.append((source, "no text"))
            elif stored.get(doc_id) == digest:
                report.unchanged.append(source)
            else:
                title = str(doc.metadata.get("title") or text.splitlines()[0][:80])
                chunks = ingest.split_text(text)
                about: dict[str, str | int] = {
                    "title": title,
                    "type": "text",
                    "origin": "inline",
                    "label": source,
                }
                batch.append(NewDocument(doc_id, source, digest, chunks, [about] * len(chunks)))
                (report.replaced if doc_id in stored else report.added).append(source)
                report.chunks += len(chunks)
        kb.replace_documents(batch)
    return report


builder = StateGraph(
    IndexState, context_schema=Context, input_schema=IndexInput, output_schema=IndexOutput
)
builder.add_node(index)
builder.add_edge(START, "index")
builder.add_edge("index", END)
graph = builder.compile(name="indexer")
