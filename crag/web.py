"""The offline page at ``/ui/`` and its routes under ``/crag/``, served beside the API.

langgraph.json names ``app`` as the server's custom HTTP app: langgraph-api merges these routes
into its own, on the same port. The page (``crag/ui/``: HTML, CSS and JavaScript, no build
step, nothing from the network) talks to the LangGraph API for assistants, schemas, threads
and streamed runs. The routes here give what that API does not: the server's effective run
settings, a cited chunk's stored text and source (for the citation preview when the run's own
steps do not hold it: a cached answer), and the documents panel's collections and documents,
with file upload (the API takes JSON, not files). Adding web pages and inline documents and
removing documents also work through the API itself: the ``indexer`` graph. Every route here
answers a signed-in user (``crag.auth``), for the collections that user may use; every
request to the server, the API's included, passes ``crag.gate`` first.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from crag import ingest, policy
from crag.allowance import IngestLanes, OcrAllowance
from crag.auth import access, user_of_request
from crag.gate import Gate
from crag.limits import MAX_URLS_PER_RUN
from crag_core.clients.knowledge_base import KnowledgeBase, valid_collection_name
from crag_core.errors import ConfigError, CragError
from crag_core.formats.extract import MAX_FILE_BYTES, Unextractable, configured_ocr
from crag_core.formats.fetch_url import url_problem
from crag_core.formats.page_images import PageImages
from crag_core.schema.context import Context
from crag_core.settings import data_dir
from crag_core.settings import settings as app_settings
from crag_core.text.documents import body, doc_location
from crag_core.text.regions import parse_box
from crag_core.text.sources import is_url, origin_of, public_source
from graph import factory

UI_DIR = Path(__file__).with_name("ui")
log = logging.getLogger(__name__)
HIDDEN = "(set on the server)"
"""What the settings route shows of a value that is the operator's alone (``base_url``)."""
INGEST_WORKERS = 4
"""Threads that read, fetch and write what users add (uploads, web pages, syncs), for each
user's first job under way: a pool of their own, so a slow web server or file holds none of
the threads that serve the routes, and one user's long work holds at most one of them."""
MORE_INGEST_WORKERS = 2
"""Threads for a user's second job under way (``crag.allowance.IngestLanes``)."""
MAX_INGESTS_PER_USER = 2
"""Uploads, page adds and syncs one user may have under way at once (the next gets 429)."""

_pages = PageImages()
_lanes = IngestLanes(INGEST_WORKERS, MORE_INGEST_WORKERS)


@functools.lru_cache(maxsize=1)
def _ocr_allowance() -> OcrAllowance:
    return OcrAllowance(app_settings().api_ocr_pages_per_hour)


async def _ingesting(request: Request, work: Callable[..., Response], *args: Any) -> Response:
    """``work(*args)`` on the ingest lanes, counted against the request's user; 429 past it.

    The count is released when the work ends, not when the request does: a caller who hangs
    up does not free his place while his upload is still being read.
    """
    user = user_of_request(request.scope) or ""
    future = _lanes.submit(user, work, *args)
    if future is None:
        return _error(
            f"{MAX_INGESTS_PER_USER} uploads, page adds or syncs of yours are under way; "
            f"wait for one to end (limit {MAX_INGESTS_PER_USER}).",
            429,
        )
    return cast(Response, await asyncio.wrap_future(future))


Handler = Callable[[Request], Response]


def _refusal(request: Request, collection: str | None = None) -> Response | None:
    """401 for a request nobody signed in to, 403 for a collection its user may not use."""
    user = user_of_request(request.scope)
    if user is None:
        return _error("Sign in: send Authorization: Bearer <token>.", 401)
    if collection is not None and not access().may_use(user, collection):
        return _error(f"You may not use collection {collection!r}.", 403)
    return None


def signed_in(handler: Handler) -> Handler:
    """The route answers a signed-in user, for a ``{collection}`` they may use."""

    @functools.wraps(handler)
    def guarded(request: Request) -> Response:
        refused = _refusal(request, request.path_params.get("collection"))
        return refused or handler(request)

    return guarded


def signed_in_async(handler: Callable[[Request], Awaitable[Response]]) -> Any:
    """``signed_in`` for a route that reads its body on the event loop."""

    @functools.wraps(handler)
    async def guarded(request: Request) -> Response:
        refused = _refusal(request, request.path_params.get("collection"))
        return refused or await handler(request)

    return guarded


def existing_collection(handler: Callable[[Request, KnowledgeBase], Response]) -> Handler:
    """The route answers a signed-in user about an existing ``{collection}`` they may use.

    401 and 403 as ``signed_in``; 404 for a collection that is not there (reading never creates
    one); 503 when the store fails. The handler gets the collection's knowledge base.
    """

    @functools.wraps(handler)
    def guarded(request: Request) -> Response:
        name = request.path_params["collection"]
        refused = _refusal(request, name)
        if refused is not None:
            return refused
        try:
            if name not in factory.collections():
                return _error(f"No collection {name!r}.", 404)
            return handler(request, factory.knowledge_base(name))
        except CragError as exc:
            return _unavailable(exc)

    return guarded


def _visible(request: Request) -> list[str]:
    """The collections the request's user may use."""
    user = user_of_request(request.scope) or ""
    return [name for name in factory.collections() if access().may_use(user, name)]


@signed_in
def settings(request: Request) -> Response:
    """``GET /crag/settings``: the server's run settings, which are locked, and its collections.

    The context schema's defaults are the code's; the server's are those with its ``CRAG_*``
    environment applied, which is what a run gets for a field the page does not send.
    ``locked``: the fields a run from the API may not change (``crag.policy``).
    """
    try:
        context = asdict(Context())
    except ConfigError as exc:  # the operator's environment: its message names the variable
        return _error(str(exc), 503)
    if context["base_url"]:  # the server's model servers' addresses are the operator's
        context["base_url"] = HIDDEN
    try:
        return JSONResponse(
            {
                "context": context,
                "locked": policy.locked_fields(),
                "collections": _visible(request),
            }
        )
    except CragError as exc:
        return _unavailable(exc)


@existing_collection
def show_chunk(request: Request, kb: KnowledgeBase) -> Response:
    """``GET /crag/collections/{collection}/chunks/{chunk_id}``: a stored chunk.

    404 for a collection or chunk that is not there (a web result's id, say): reading never
    creates a collection.
    """
    chunk_id = request.path_params["chunk_id"]
    chunk = kb.chunk(chunk_id)
    if chunk is None:
        return _error(f"No chunk {chunk_id!r} in {kb.name!r}.", 404)
    meta = chunk.metadata
    return JSONResponse(
        {
            "id": chunk_id,
            "text": body(chunk),  # its title and location are fields of their own
            "source": public_source(meta),
            "title": meta.get("title", ""),
            "type": meta.get("type", ""),
            "page": meta.get("page"),
            "box": list(box) if (box := parse_box(meta.get("box"))) else None,
            "location": doc_location(chunk),
        }
    )


@existing_collection
def chunk_page(request: Request, kb: KnowledgeBase) -> Response:
    """``GET /crag/collections/{collection}/chunks/{chunk_id}/page.png``: its page, drawn.

    Drawn from the PDF or the image the chunk came from (pdfium, Pillow; nothing leaves the
    server) in a reader child under its ceiling, once (``PageImages``); 404 when the chunk is
    not from a PDF page or an image, or its file is gone; 422 with the reason for a page that
    cannot be shown (too large, or past the drawing's memory or time).
    """
    chunk_id = request.path_params["chunk_id"]
    chunk = kb.chunk(chunk_id)
    meta = chunk.metadata if chunk is not None else {}
    source = Path(str(meta.get("source", "")))
    pdf = meta.get("type") == "pdf" and meta.get("page") is not None
    if not pdf and meta.get("type") != "image":
        return _error(f"{chunk_id!r} is not a chunk of a PDF page or an image.", 404)
    if origin_of(meta) not in ("file", "upload") or not source.is_file():
        return _error(f"The file {public_source(meta)} is no longer there.", 404)
    page = meta.get("page")
    try:
        png = _pages.png(source, "pdf" if pdf else "image", int(page) if page is not None else None)
    except Unextractable as exc:
        return _error(str(exc), 422)
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=300"})


def _error(detail: str, status: int) -> Response:
    return JSONResponse({"detail": detail}, status_code=status)


def _unavailable(exc: CragError) -> Response:
    """503 for a store that failed: the reason in the server's log, never in the reply.

    (A store's errors name its paths and addresses, which are the server's.)
    """
    log.warning("The knowledge base failed: %s", exc)
    return _error("The knowledge base is not available right now; see the server's log.", 503)


def _uploads() -> Path:
    return data_dir() / ingest.UPLOADS


@signed_in
def list_collections(request: Request) -> Response:
    """``GET /crag/collections``: each collection (the user may use) and what it holds."""
    try:
        rows = [ingest.collection_summary(factory.knowledge_base(n)) for n in _visible(request)]
    except CragError as exc:
        return _unavailable(exc)
    return JSONResponse({"collections": rows, "default": Context().collection})


@signed_in_async
async def create_collection(request: Request) -> Response:
    """``POST /crag/collections`` ``{"name": …}``: an empty collection (201; 200 if there)."""
    try:
        body = await request.json()
        name = str(body["name"]).strip()
    except (ValueError, KeyError, TypeError):
        return _error('Send {"name": "<collection>"}.', 400)
    refused = _refusal(request, name) or _invalid_name(name)
    if refused is not None:
        return refused
    return await run_in_threadpool(_create, name)


def _invalid_name(collection: str) -> Response | None:
    """400 for a collection name no store takes, before anything is made on disk."""
    if valid_collection_name(collection):
        return None
    return _error(
        f"{collection[:80]!r} is not a valid collection name: use 3 to 63 letters, digits, "
        "'-' or '_', starting and ending with a letter or digit.",
        400,
    )


def _create(name: str) -> Response:
    try:
        kb = factory.knowledge_base(name)
        existed = kb.exists()
        kb.writable  # noqa: B018 - opening it for writing creates it
        summary = ingest.collection_summary(kb)
    except CragError as exc:
        return _unavailable(exc)
    return JSONResponse(summary, status_code=200 if existed else 201)


@existing_collection
def list_documents(request: Request, kb: KnowledgeBase) -> Response:
    """``GET /crag/collections/{collection}/documents``: each document with its outline.

    Each by its label: a path on the server is never shown.
    """
    documents = [meta | {"source": public_source(meta)} for meta in kb.outlines()]
    for meta in documents:
        meta.pop("label", None)
    return JSONResponse({"collection": kb.name, "documents": documents})


@signed_in_async
async def upload_file(request: Request) -> Response:
    """``PUT /crag/collections/{collection}/files/{name}``: the body is one file to ingest.

    The collection is created if needed. Over ``MAX_FILE_BYTES`` is refused with 413 while
    receiving (nothing is written); a file crag cannot read gets 422 with the reason and is not
    kept. The file is kept under the data dir's ``uploads/<collection>/`` (so re-sync and
    removal work as for any file); the same name again replaces it. The body is held in memory
    (at most the cap) and everything that touches disk runs off the event loop.
    """
    refused = _invalid_name(request.path_params["collection"])
    if refused is not None:
        return refused
    try:
        name = ingest.upload_name(request.path_params["name"])
    except ingest.SkipFile as exc:
        return _error(str(exc), 422)
    too_large = _error(f"{name} is larger than the {MAX_FILE_BYTES >> 20} MiB limit.", 413)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_FILE_BYTES:
        return too_large
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > MAX_FILE_BYTES:
            return too_large
    collection = request.path_params["collection"]
    user = user_of_request(request.scope) or ""
    return await _ingesting(request, _store_upload, user, collection, name, bytes(body))


def _store_upload(user: str, collection: str, name: str, body: bytes) -> Response:
    """Store an upload, its OCR within its user's allowance (``crag.allowance``)."""
    incoming = None
    folder = _uploads() / collection
    made = not folder.exists()
    try:
        kb = factory.knowledge_base(collection)
        folder.mkdir(parents=True, exist_ok=True)
        incoming = folder / f".incoming-{uuid.uuid4().hex[:8]}-{name}"
        incoming.write_bytes(body)
        ocr = _ocr_allowance().engine(user, configured_ocr())
        result = ingest.add_upload(kb, incoming, folder / name, ocr)
        _ocr_allowance().charge(user, result["ocr_pages"])
    except CragError as exc:
        return _unavailable(exc)
    finally:
        if incoming is not None:
            incoming.unlink(missing_ok=True)  # gone already unless something failed
        if made and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()  # a refused upload leaves no folder behind
    return JSONResponse(result, status_code=422 if result["status"] == "skipped" else 200)


@signed_in_async
async def add_sources(request: Request) -> Response:
    """``POST /crag/collections/{collection}/sources`` ``{"urls": [...]}``: ingest web pages.

    The pages share one deadline (``crag.ingest.PAGES_DEADLINE_S``); each that cannot be used
    is in the report with its reason. An address that does not parse is one of those: the others are
    still added, and the reply is 422 naming it.
    """
    try:
        body = await request.json()
        urls = [str(u).strip() for u in body["urls"]]
    except (ValueError, KeyError, TypeError):
        return _error('Send {"urls": ["https://…"]}.', 400)
    if not urls or not all(is_url(u) for u in urls):
        return _error("Only http(s) URLs can be added here; upload files instead.", 400)
    if len(urls) > MAX_URLS_PER_RUN:
        return _error(f"At most {MAX_URLS_PER_RUN} web pages at a time.", 413)
    refused = _invalid_name(request.path_params["collection"])
    if refused is not None:
        return refused
    return await _ingesting(request, _add_urls, request.path_params["collection"], urls)


def _add_urls(collection: str, urls: list[str]) -> Response:
    unparsed = [u for u in urls if url_problem(u)]
    try:
        kb = factory.knowledge_base(collection)
        deadline = time.monotonic() + ingest.PAGES_DEADLINE_S
        report = ingest.ingest(kb, urls, outbound=policy.outbound(), deadline=deadline)
        reply = report.to_json(kb.name, kb.count(), 0.0, public=True)
    except CragError as exc:
        return _unavailable(exc)
    if unparsed:
        named = ", ".join(repr(u[:100]) for u in unparsed)
        return JSONResponse(reply | {"detail": f"Not valid web addresses: {named}."}, 422)
    return JSONResponse(reply)


@existing_collection
def remove_document(request: Request, kb: KnowledgeBase) -> Response:
    """``DELETE /crag/collections/{collection}/documents/{doc_id}``: one document, whole."""
    doc_id = request.path_params["doc_id"]
    removed = ingest.remove_document(kb, doc_id, _uploads())
    if not removed:
        return _error(f"No document {doc_id!r} in {kb.name!r}.", 404)
    return JSONResponse({"doc_id": doc_id, "chunks_removed": removed})


@signed_in_async
async def resync(request: Request) -> Response:
    """``POST /crag/collections/{collection}/sync``: every source read again (see ingest).

    On the ingest pool, counted against the user; its web pages share one deadline.
    """
    return await _ingesting(request, _resync, request)


@existing_collection
def _resync(request: Request, kb: KnowledgeBase) -> Response:
    deadline = time.monotonic() + ingest.PAGES_DEADLINE_S
    report = ingest.resync(kb, policy.outbound(), deadline)
    return JSONResponse(report.to_json(kb.name, kb.count(), 0.0, public=True))


def to_page(request: Request) -> Response:
    """``/ui`` -> ``/ui/``: the page's relative asset paths need the slash."""
    return RedirectResponse("/ui/", status_code=307)


app = Starlette(
    routes=[
        Route("/ui", to_page),
        Route("/crag/settings", settings),
        Route("/crag/collections", list_collections),
        Route("/crag/collections", create_collection, methods=["POST"]),
        Route("/crag/collections/{collection}/documents", list_documents),
        Route(
            "/crag/collections/{collection}/documents/{doc_id}",
            remove_document,
            methods=["DELETE"],
        ),
        Route("/crag/collections/{collection}/files/{name}", upload_file, methods=["PUT"]),
        Route("/crag/collections/{collection}/sources", add_sources, methods=["POST"]),
        Route("/crag/collections/{collection}/sync", resync, methods=["POST"]),
        Route("/crag/collections/{collection}/chunks/{chunk_id}", show_chunk),
        Route("/crag/collections/{collection}/chunks/{chunk_id}/page.png", chunk_page),
        Mount("/ui", StaticFiles(directory=UI_DIR, html=True), name="ui"),
    ],
    # langgraph-api runs a custom app's middleware around every route, its own included.
    middleware=[Middleware(Gate)],
)
