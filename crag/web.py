"""The offline page at ``/ui/``, served by the ``langgraph dev`` server beside its API.

langgraph.json names ``app`` as the server's custom HTTP app: langgraph-api merges these routes
into its own, on the same port. The page (``crag/ui/``: HTML, CSS and JavaScript, no build
step, nothing from the network) talks to the LangGraph API for assistants, schemas, threads
and streamed runs. The two routes here give what that API does not: the server's effective run
settings and its collections, for the page's settings form, and a cited chunk's stored text
and source, for the citation preview when the run's own steps do not hold it (a cached answer).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from adapters.errors import CragError
from graph.services import collections, knowledge_base
from schema.context import Context

UI_DIR = Path(__file__).with_name("ui")


def settings(request: Request) -> Response:
    """``GET /ui/api/settings``: the server's run settings and its collections.

    The context schema's defaults are the code's; the server's are those with its ``CRAG_*``
    environment applied, which is what a run gets for a field the page does not send.
    """
    try:
        context = asdict(Context())
        return JSONResponse({"context": context, "collections": collections()})
    except CragError as exc:
        return JSONResponse({"detail": str(exc)}, status_code=503)


def show_chunk(request: Request) -> Response:
    """``GET /ui/api/collections/{collection}/chunks/{chunk_id}``: a stored chunk.

    404 for a collection or chunk that is not there (a web result's id, say): reading never
    creates a collection.
    """
    name = request.path_params["collection"]
    chunk_id = request.path_params["chunk_id"]
    try:
        if name not in collections():
            return JSONResponse({"detail": f"No collection {name!r}."}, status_code=404)
        chunk = knowledge_base(name).chunk(chunk_id)
    except CragError as exc:
        return JSONResponse({"detail": str(exc)}, status_code=503)
    if chunk is None:
        return JSONResponse({"detail": f"No chunk {chunk_id!r} in {name!r}."}, status_code=404)
    meta = chunk.metadata
    return JSONResponse(
        {
            "id": chunk_id,
            "text": chunk.page_content,
            "source": meta.get("source", ""),
            "title": meta.get("title", ""),
            "location": meta.get("location", ""),
        }
    )


def to_page(request: Request) -> Response:
    """``/ui`` -> ``/ui/``: the page's relative asset paths need the slash."""
    return RedirectResponse("/ui/", status_code=307)


app = Starlette(
    routes=[
        Route("/ui", to_page),
        Route("/ui/api/settings", settings),
        Route("/ui/api/collections/{collection}/chunks/{chunk_id}", show_chunk),
        Mount("/ui", StaticFiles(directory=UI_DIR, html=True), name="ui"),
    ]
)
