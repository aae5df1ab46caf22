"""Chroma as crag opens it, and what a stored document is.

One client per store, made once; a missing collection read as empty (nothing found, nothing
created). A store is a local folder or a Chroma server's ``http(s)://`` URL (with a bearer
token for a proxy in front of it, docs/deploy.md). A document is stored when all its chunks
are there with one ``content_hash`` (``complete_hash``); ``NewDocument`` is one to write.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from langchain_core.documents import Document

from crag_core.errors import ConfigError, KnowledgeBaseError
from crag_core.text.table_shapes import Table

TABLES_PREFIX = "crag.tables."
"""A shared collection's tables are on the server in the collection of this prefix and its
name (collection names crag makes take no '.')."""
WRITE_BATCH = 1000
"""Chunks one upsert or delete carries: Chroma refuses a batch over its limit (5,461 here)."""

open_lock = threading.RLock()
"""Opening a client or collection is not thread-safe in Chroma: parallel parts of a question
open them at once ("'RustBindingsAPI' object has no attribute 'bindings'")."""


def chroma_client(location: str, timeout_s: float = 30.0, token: str = "") -> Any:
    """The Chroma client for ``location``: a server's ``http(s)://`` URL, else a local dir.

    One per location, timeout and token, made once even when several threads ask at once.
    """
    with open_lock:
        return _open_client(location, timeout_s, token)


@cache
def _open_client(location: str, timeout_s: float, token: str) -> Any:
    if location.startswith(("http://", "https://")):
        return _http_client(location, timeout_s, token)
    import chromadb
    from chromadb.config import Settings

    try:
        Path(location).mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(
            path=location, settings=Settings(anonymized_telemetry=False)
        )
    except Exception as exc:  # permission errors, a corrupt store, ...
        raise KnowledgeBaseError(f"Cannot open the vector store at {location}: {exc}") from exc


def _http_client(url: str, timeout_s: float, token: str) -> Any:
    """A client of the Chroma server at ``url``; every request times out after ``timeout_s``.

    ``token`` (if any) goes with every request as a bearer token.
    """
    import chromadb
    import httpx
    from chromadb.config import Settings

    parts = urlsplit(url)
    if not parts.hostname:
        raise ConfigError(f"CRAG_CHROMA_URL {url!r} names no host; e.g. http://127.0.0.1:8000.")
    ssl = parts.scheme == "https"
    # Chroma's own server checks no token; one in front of it (a proxy) may (docs/deploy.md).
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        # The heartbeat first, with a timeout: the client's own requests have none until set.
        beat = httpx.get(f"{url.rstrip('/')}/api/v2/heartbeat", headers=headers, timeout=timeout_s)
        if beat.status_code in (401, 403):
            said = "refused the token in CRAG_CHROMA_TOKEN" if token else "needs CRAG_CHROMA_TOKEN"
            raise KnowledgeBaseError(f"The Chroma server at {url} {said} ({beat.status_code}).")
        beat.raise_for_status()
        client = chromadb.HttpClient(
            host=parts.hostname,
            port=parts.port or (443 if ssl else 80),
            ssl=ssl,
            headers=headers,
            settings=Settings(anonymized_telemetry=False),
        )
        client._server._session.timeout = httpx.Timeout(timeout_s)  # type: ignore[attr-defined]
    except KnowledgeBaseError:
        raise
    except Exception as exc:  # refused, timed out, not a Chroma server
        raise KnowledgeBaseError(f"Cannot reach the Chroma server at {url}: {exc}") from exc
    return client


class _Missing:
    """A collection not (yet) in the store, read as an empty one: nothing found, nothing created."""

    metadata: dict[str, Any] = {}

    def count(self) -> int:
        return 0

    def get(self, **_: Any) -> dict[str, list[Any]]:
        return {"ids": [], "documents": [], "metadatas": [], "embeddings": []}

    def query(self, **_: Any) -> dict[str, list[list[Any]]]:
        return {"ids": [[]], "documents": [[]], "metadatas": [[]], "distances": [[]]}


MISSING = _Missing()


def collection_names(store: Path | str, timeout_s: float = 30.0, token: str = "") -> list[str]:
    """The collections in ``store``: a local dir or a Chroma server's URL (and its token)."""
    location = str(store)
    if not location.startswith(("http://", "https://")) and not Path(location).exists():
        return []
    names = (c.name for c in chroma_client(location, timeout_s, token).list_collections())
    return sorted(n for n in names if not n.startswith(TABLES_PREFIX))


@dataclass(frozen=True)
class NewDocument:
    """A document to store: its id, source, content hash, chunks and per-chunk metadata.

    ``tables`` (a CSV file's, a workbook's sheets) go to the collection's ``TableStore`` under
    ``label`` (the name callers see).
    """

    doc_id: str
    source: str
    content_hash: str
    chunks: list[str]
    about: list[dict[str, str | int]] | None = None
    label: str = ""
    tables: Sequence[Table] = ()


def complete_hash(metas: list[Any], keyword_hash: str | None) -> str | None:
    """The document's hash if its chunks are all there, agree, and match the keyword index."""
    if not metas or keyword_hash is None:
        return None
    hashes = {m.get("content_hash") for m in metas}
    if len(hashes) != 1 or metas[0].get("chunks") != len(metas):
        return None  # a partial or mixed write: treat as absent so it is rewritten
    chroma_hash = str(hashes.pop())
    return chroma_hash if chroma_hash == keyword_hash else None


def stored_document(cid: str, text: str | None, meta: Any, cosine: float) -> Document:
    """A stored chunk as the graph sees it: its metadata, id and cosine to the query."""
    metadata = dict(meta or {}) | {"id": cid, "score": round(cosine, 4)}
    return Document(id=cid, page_content=text or "", metadata=metadata)


def metadata_by_document(collection: Any) -> dict[str, list[Any]]:
    """Every chunk's metadata in ``collection``, grouped by document (one request)."""
    by_doc: dict[str, list[Any]] = {}
    for meta in collection.get(include=["metadatas"])["metadatas"] or []:
        by_doc.setdefault(str(meta.get("doc_id")), []).append(meta)
    return by_doc
