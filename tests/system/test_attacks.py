"""The trust boundary, tried as an attacker would: a real `crag serve`, signed in and open.

Beside the server, on loopback: an "internal service" holding a secret (never allowed), a
"public site" the operator allow-lists (standing in for the internet, which this machine does
not reach) whose page redirects inward, and a listener standing in for a model provider, which
records every request (and so every key) sent to it. Two users: bob may use only his own
collection 'bobs'; alice has uploaded a file. Every reply is kept; at the end none may hold a
secret, a token or a path on the server, and neither may the server's log.

Each attack is refused with a clear status and message, nothing is written, and the legitimate
use next to it still works.
"""

from __future__ import annotations

import io
import json
import shutil
import threading
import time
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from benchmarks import ROOT
from benchmarks.fixtures.serve import Server, langgraph_dev
from tests.loopback import chat_completion, loopback
from tests.system.conftest import SECRETS, base_env, crag
from tests.system.test_model_servers import model_server

ALICE, BOB = "tok-alice-90c1e7", "tok-bob-5d22af"
INTERNAL_SECRET = "internal secret 4471"
FILE_SECRET = "server file secret 8823"
UPLOAD_SECRET = "alice upload secret 3190"
PUBLIC_PAGE = (
    b"<html><head><title>Gauges</title></head><body><main><h1>Gauges</h1>"
    b"<p>The Velna gauge reads 4.2 m.</p></main></body></html>"
)


class Site:
    """A loopback HTTP server answering from a route table; records each request."""

    def __init__(self, routes: dict[str, tuple[int, dict[str, str], bytes]]) -> None:
        self.routes, self.seen = routes, cast(list[dict[str, Any]], [])
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                site.seen.append({"path": self.path, "headers": dict(self.headers)})
                status, headers, body = site.routes.get(self.path, (404, {}, b""))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value.replace("{internal}", site.internal))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.internal = ""
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def internal() -> Iterator[Site]:
    text = {"Content-Type": "text/plain"}
    site = Site({"/secret.txt": (200, text, INTERNAL_SECRET.encode())})
    yield site
    site.close()


@pytest.fixture(scope="module")
def public(internal: Site) -> Iterator[Site]:
    site = Site(
        {
            "/gauges.html": (200, {"Content-Type": "text/html"}, PUBLIC_PAGE),
            "/inward": (302, {"Location": "{internal}/secret.txt"}, b""),
        }
    )
    site.internal = f"http://127.0.0.1:{internal.port}"
    yield site
    site.close()


@pytest.fixture(scope="module")
def provider() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A listener standing in for a model provider an attacker points the server at."""
    with loopback(lambda method, path, body: (200, chat_completion("yes"))) as (url, seen):
        yield f"{url}/v1", seen


@pytest.fixture(scope="module")
def server_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file on the server outside every collection."""
    folder = tmp_path_factory.mktemp("outside")
    (folder / "secret.md").write_text(f"# Secret\n\n{FILE_SECRET}.")
    return folder


@pytest.fixture(scope="module")
def data_dir(sb50_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("attacks") / "data"
    shutil.copytree(sb50_data_dir, copy)
    return copy


class Replies:
    """Every reply the attacker got, to search for what must not be in any."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.echoes: list[str] = []
        """What the attacker sent himself (a planted path is his name for his document)."""

    def keep(self, reply: httpx.Response) -> None:
        reply.read()
        self.texts.append(f"{reply.status_code} {dict(reply.headers)} {reply.text}")


@pytest.fixture(scope="module")
def replies() -> Replies:
    return Replies()


@pytest.fixture(scope="module")
def signed(
    data_dir: Path,
    scripted_llm: str,
    public: Site,
    server_files: Path,
    replies: Replies,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    env = base_env(
        data_dir,
        CRAG_API_TOKENS=f"alice:{ALICE},bob:{BOB}",
        CRAG_API_COLLECTIONS="bob:bobs",
        CRAG_API_MAX_RUNS_PER_USER="2",
        CRAG_API_FETCH_ALLOW=f"127.0.0.1:{public.port}",
        CRAG_MODEL="openai-compatible:scripted",
        CRAG_BASE_URL=scripted_llm,
        CRAG_WEB_SEARCH="off",
        OPENAI_API_KEY="sk-server-own-key-61f0",
        **SECRETS,
    )
    with langgraph_dev(env, tmp_path_factory.mktemp("signed-attacks")) as srv:
        yield srv
    log = srv.log_path.read_text(errors="replace")
    forbidden = [ALICE, BOB, "sk-server-own-key-61f0", *SECRETS.values(), FILE_SECRET]
    forbidden += [INTERNAL_SECRET, UPLOAD_SECRET, "hunter2"]
    for text in [log]:
        leaks = [s for s in forbidden if s in text]
        assert leaks == [], f"in the server's log: {leaks}"
    paths = [str(data_dir), str(server_files), str(ROOT)]
    for reply in replies.texts:
        for echo in sorted(replies.echoes, key=len, reverse=True):
            reply = reply.replace(echo, "")
        leaked = [s for s in [*forbidden, *paths] if s in reply]
        assert leaked == [], f"{leaked} in a reply: {reply[:300]}"


def user(server: Server, token: str, replies: Replies) -> httpx.Client:
    return httpx.Client(
        base_url=server.url,
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
        event_hooks={"response": [replies.keep]},
    )


def run(client: httpx.Client, graph: str, given: dict[str, Any], **extra: Any) -> httpx.Response:
    return client.post("/runs/wait", json={"assistant_id": graph, "input": given} | extra)


def test_an_inline_source_never_makes_the_server_read_its_files(
    signed: Server, server_files: Path, data_dir: Path, replies: Replies
):
    alice, bob = user(signed, ALICE, replies), user(signed, BOB, replies)
    uploaded = alice.put(
        "/crag/collections/alices/files/plans.md", content=f"# Plans\n\n{UPLOAD_SECRET}."
    )
    assert uploaded.json()["status"] == "added"
    planted = [
        str(server_files / "secret.md"),  # a file outside every collection
        str(data_dir / "uploads" / "alices"),  # another user's uploads, as a folder
        str(data_dir / "uploads" / "alices" / "plans.md"),
    ]
    replies.echoes += planted
    docs = [
        {"page_content": f"Bob's note {n}.", "metadata": {"source": s}}
        for n, s in enumerate(planted)
    ]
    added = run(bob, "indexer", {"docs": docs}, context={"collection": "bobs"})
    assert sorted(added.json()["report"]["added"]) == sorted(planted)  # names, as he sent them
    synced = run(bob, "indexer", {"sync": True}, context={"collection": "bobs"}).json()["report"]
    assert synced["added"] == synced["replaced"] == synced["removed"] == []
    routed = bob.post("/crag/collections/bobs/sync").json()
    assert routed["added"] == routed["replaced"] == []
    documents = bob.get("/crag/collections/bobs/documents").json()["documents"]
    assert len(documents) == 3
    for doc in documents:
        chunk = bob.get(f"/crag/collections/bobs/chunks/{doc['doc_id']}__c0000").json()
        assert chunk["text"].startswith("Bob's note")  # what he sent, never the file
    assert bob.get("/crag/collections/alices/documents").status_code == 403
    theirs = alice.get("/crag/collections/alices/documents").json()["documents"]
    assert [d["source"] for d in theirs] == ["plans.md"]  # her file, by its name only


def test_the_servers_key_goes_nowhere_a_caller_points(
    signed: Server, provider: tuple[str, list[dict[str, Any]]], replies: Replies
):
    url, seen = provider
    bob = user(signed, BOB, replies)
    question = {"question": "Which team won Super Bowl 50?"}
    for context, field in [
        ({"model": "openai-compatible:x", "base_url": url}, "model"),
        ({"base_url": url}, "base_url"),
        ({"grader_model": "openai:gpt-4o-mini"}, "grader_model"),
        ({"model": "local", "base_url": url}, "model"),
        ({"web_search": "tavily"}, "web_search"),
    ]:
        context = {"collection": "bobs"} | context
        for sent in ({"context": context}, {"config": {"configurable": context}}):
            refused = run(bob, "crag", question, **sent)
            assert refused.status_code == 403, refused.text
            assert field in refused.json()["detail"] and "operator" in refused.json()["detail"]
    made = bob.post("/assistants", json={"graph_id": "crag", "context": {"base_url": url}})
    assert made.status_code == 403
    assert seen == []  # not one request reached the listener
    fine = run(bob, "crag", question, context={"collection": "bobs", "top_k": 8})
    assert fine.status_code == 200 and fine.json()["answer"]  # a caller's own fields work


def test_url_sources_reach_no_internal_service(
    signed: Server, internal: Site, public: Site, replies: Replies
):
    bob = user(signed, BOB, replies)
    port = internal.port
    spellings = [
        f"http://127.0.0.1:{port}/secret.txt",
        f"http://2130706433:{port}/secret.txt",
        f"http://0x7f.1:{port}/secret.txt",
        f"http://127.1:{port}/secret.txt",
        f"http://[::ffff:127.0.0.1]:{port}/secret.txt",
        f"http://localhost:{port}/secret.txt",
        f"http://127.0.0.1:{public.port}/inward",  # an allowed host that redirects inward
        "http://127.0.0.1:9/closed",  # a closed port reads the same
    ]
    report = bob.post("/crag/collections/bobs/sources", json={"urls": spellings}).json()
    reasons = {f["reason"] for f in report["failed"]}
    assert len(report["failed"]) == len(spellings) and len(reasons) == 1, report
    assert "no public web server" in reasons.pop()
    indexed = run(bob, "indexer", {"urls": spellings[:3]}, context={"collection": "bobs"})
    assert len(indexed.json()["report"]["failed"]) == 3
    assert internal.seen == []  # not one request reached the internal service

    allowed = f"http://bob:hunter2@127.0.0.1:{public.port}/gauges.html"
    added = bob.post("/crag/collections/bobs/sources", json={"urls": [allowed]}).json()
    assert added["added"] == [f"http://127.0.0.1:{public.port}/gauges.html"]
    assert "Authorization" not in public.seen[-1]["headers"]  # userinfo dropped, not sent
    listed = bob.get("/crag/collections/bobs/documents").json()["documents"]
    assert any(d["title"] == "Gauges" for d in listed)


def test_the_cli_fetches_what_its_user_can(data_dir: Path, internal: Site):
    done = crag(
        "ingest",
        f"http://127.0.0.1:{internal.port}/secret.txt",
        "--collection",
        "ops",
        env=base_env(data_dir),
    )
    assert done.returncode == 0 and "1 added" in done.stdout, done.stderr


def test_every_run_is_bounded(signed: Server, replies: Replies):
    bob = user(signed, BOB, replies)
    question = {"question": "Which team won Super Bowl 50?"}
    context: dict[str, Any] = {"collection": "bobs"}
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"top_k": 500}, 422, "top_k may be at most 20"),
        ({"context_tokens": 10**6}, 422, "context_tokens may be at most"),
        ({"max_tokens": 10**5}, 422, "max_tokens may be at most"),
        ({"web_results": 100}, 422, "web_results may be at most"),
        ({"llm_timeout_s": 100000}, 403, "llm_timeout_s"),
        ({"cache_threshold": 0}, 422, "may not be set below"),
        ({"prompt_versions": {"generate": "../../../README"}}, 422, "has no version"),
    ]
    for sent, status, words in cases:
        refused = run(bob, "crag", question, context=context | sent)
        assert refused.status_code == status and words in refused.json()["detail"], refused.text
    deep = run(bob, "crag", question, context=context, config={"recursion_limit": 10**6})
    assert deep.status_code == 422
    hooked = run(bob, "crag", question, context=context, webhook="https://example.org/hook")
    # langgraph-api refuses a host it cannot resolve (422, as here: no DNS); crag any other (403)
    assert hooked.status_code in (403, 422), hooked.text
    many = run(
        bob, "indexer", {"urls": [f"https://example.org/{n}" for n in range(21)]}, context=context
    )
    assert many.status_code == 413
    history = [{"type": "human", "content": "x" * 10_000}, {"type": "ai", "content": "ok"}]
    chat = {"messages": [*history, {"type": "human", "content": "Why?"}]}
    long_chat = run(bob, "crag", chat, context=context)
    assert long_chat.status_code == 413  # an earlier message is a question in the prompt too
    batch = [{"assistant_id": "crag", "input": question, "context": context}] * 3
    refused = bob.post("/runs/batch", json=batch)
    assert refused.status_code == 429 and "limit is 2" in refused.json()["detail"]
    accepted = bob.post("/runs/batch", json=batch[:2])
    assert accepted.status_code == 200 and len(accepted.json()) == 2


def test_the_lesser_findings_are_closed(signed: Server, replies: Replies):
    alice, bob = user(signed, ALICE, replies), user(signed, BOB, replies)
    thread = bob.post("/threads", json={}).json()["thread_id"]
    patched = bob.patch(f"/threads/{thread}", json={"metadata": {"owner": "alice", "x": 1}})
    assert patched.status_code == 200 and patched.json()["metadata"]["owner"] == "bob"
    assert thread not in [t["thread_id"] for t in alice.post("/threads/search", json={}).json()]
    assert thread in [t["thread_id"] for t in bob.post("/threads/search", json={}).json()]

    token_in_url = httpx.get(f"{signed.url}/crag/collections?token={BOB}", timeout=30)
    assert token_in_url.status_code == 400
    for path in ("/metrics", "/docs", "/openapi.json", "/info"):
        assert httpx.get(f"{signed.url}{path}", timeout=30).status_code == 401
        assert bob.get(path).status_code == 200
    assert httpx.get(f"{signed.url}/ok", timeout=30).status_code == 200  # health stays open
    settings = bob.get("/crag/settings").json()
    assert (
        "base_url" in settings["locked"]
        and settings["context"]["base_url"] == "(set on the server)"
    )


def word_bomb() -> bytes:
    """A .docx just past the real bound: 65 MiB of paragraphs in about 100 KB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", b"<w:p>" + b" " * (65 << 20) + b"</w:p>")
    return out.getvalue()


def test_hostile_uploads_are_refused_with_a_reason_and_not_kept(
    signed: Server, data_dir: Path, replies: Replies
):
    bob = user(signed, BOB, replies)
    for name, body, words in [
        ("bomb.docx", word_bomb(), "unpacks to 65.0 MiB"),
        ("broken.pptx", b"PK\x03\x04" + b"\x00" * 64, "unreadable pptx"),
    ]:
        reply = bob.put(f"/crag/collections/bobs/files/{name}", content=body)
        assert reply.status_code == 422 and words in reply.json()["reason"], reply.text
    # The Markdown that took 154 s to read: 160 KB of unclosed fences, or of spaces.
    for name, body in [
        ("fences.md", b"```x\n" * 32_000 + b"The Velna gauge reads 4.2 m.\n"),
        ("spaces.md", b"# gauge" + b" " * 160_000 + b"x\n\nThe Velna gauge reads 4.2 m.\n"),
    ]:
        started = time.monotonic()
        reply = bob.put(f"/crag/collections/bobs/files/{name}", content=body)
        assert reply.json()["status"] == "added" and time.monotonic() - started < 30
    kept = sorted(p.name for p in (data_dir / "uploads" / "bobs").iterdir())
    assert kept == ["fences.md", "spaces.md"]  # the refused ones were not kept


SLOW_CALL_S, RUN_BUDGET_S = 3.0, 5


@pytest.fixture(scope="module")
def open_server(sb50_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``make serve`` with no sign-in, on a model that takes 3 s a call and a 5 s run budget."""
    work = tmp_path_factory.mktemp("open-attacks")
    shutil.copytree(sb50_data_dir, work / "data")  # a store of its own: one process each
    with model_server(work, SLOW_CALL_S) as (slow, _, _):
        env = base_env(
            work / "data",
            CRAG_WEB_SEARCH="off",
            CRAG_MODEL="openai-compatible:scripted",
            CRAG_BASE_URL=slow,
            CRAG_ANSWER_CACHE="false",
            CRAG_API_RUN_TIMEOUT_S=str(RUN_BUDGET_S),
            **SECRETS,
        )
        with langgraph_dev(env, work) as srv:
            yield srv


def test_runs_work_side_by_side_and_end_within_their_budget(open_server: Server):
    """A slow model holds no other run up (several workers), and no run outlives its budget."""
    api = httpx.Client(base_url=open_server.url, timeout=30)
    started = time.monotonic()
    runs = [
        api.post(
            "/runs",
            json={"assistant_id": "crag", "input": {"question": q}, "on_completion": "keep"},
        ).json()
        for q in ("Which team won Super Bowl 50?", "Who did the Broncos beat?")
    ]
    statuses: list[list[str]] = []
    while time.monotonic() - started < 30:
        now = [
            api.get(f"/threads/{r['thread_id']}/runs/{r['run_id']}").json().get("status", "gone")
            for r in runs
        ]
        statuses.append(now)
        if all(s not in ("pending", "running") for s in now):
            break
        time.sleep(0.5)
    ended = time.monotonic() - started
    print(f"two runs on a {SLOW_CALL_S:g} s/call model: {statuses[-1]} after {ended:.1f} s")
    assert ["running", "running"] in statuses, statuses  # both at once, not one after the other
    assert ended < RUN_BUDGET_S + 2 * SLOW_CALL_S, (ended, statuses[-1])
    assert statuses[-1] == ["timeout", "timeout"], statuses[-1]  # cut off, not finished


def test_open_mode_answers_only_its_own_host_origin_and_json(open_server: Server):
    url = open_server.url
    port = url.rsplit(":", 1)[1]
    rebound = httpx.get(f"{url}/crag/collections", headers={"Host": f"attacker.test:{port}"})
    assert rebound.status_code == 403
    foreign = httpx.get(f"{url}/crag/collections", headers={"Origin": "http://attacker.test"})
    assert foreign.status_code == 403
    simple = httpx.post(
        f"{url}/runs/wait",
        content=json.dumps({"assistant_id": "indexer", "input": {"docs": [{"page_content": "x"}]}}),
        headers={"Content-Type": "text/plain"},
    )
    assert simple.status_code == 415
    own = httpx.get(f"{url}/crag/collections", headers={"Origin": url})
    assert own.status_code == 200 and own.headers.get("access-control-allow-origin") != "*"
    studio = httpx.options(
        f"{url}/threads/search",
        headers={"Origin": "https://smith.langchain.com", "Access-Control-Request-Method": "POST"},
    )
    assert studio.headers["access-control-allow-origin"] == "https://smith.langchain.com"


ATTACK_PAGE = """<!doctype html><html><body><script>
window.results = {};
const target = "%s";
const body = JSON.stringify({assistant_id: "indexer", context: {collection: "pwned"},
  input: {docs: [{page_content: "planted by a web page"}]}});
async function attempt(name, request) {
  try {
    const r = await request();
    window.results[name] = r.type === "opaque" ? "opaque" : r.status + " " + (await r.text());
  } catch (e) { window.results[name] = "error " + e.message; }
}
(async () => {
  await attempt("read", () => fetch(target + "/crag/collections"));
  await attempt("simple-post", () => fetch(target + "/runs/wait", {method: "POST", body,
    headers: {"Content-Type": "text/plain"}}));
  await attempt("no-cors-post", () => fetch(target + "/runs/wait", {method: "POST", body,
    mode: "no-cors", headers: {"Content-Type": "text/plain"}}));
  await attempt("json-post", () => fetch(target + "/runs/wait", {method: "POST", body,
    headers: {"Content-Type": "application/json"}}));
  window.done = true;
})();
</script></body></html>"""


def test_a_page_on_another_origin_cannot_drive_the_open_server(open_server: Server):
    from benchmarks.fixtures.browser import offline_page

    attacker = Site(
        {"/": (200, {"Content-Type": "text/html"}, (ATTACK_PAGE % open_server.url).encode())}
    )
    try:
        with offline_page() as view:
            view.page.goto(f"http://127.0.0.1:{attacker.port}/")
            view.page.wait_for_function("() => window.done === true", timeout=60_000)
            results = view.page.evaluate("window.results")
    finally:
        attacker.close()
    assert all(r.startswith(("error", "opaque")) for r in results.values()), results
    collections = httpx.get(f"{open_server.url}/crag/collections").json()["collections"]
    assert "pwned" not in [c["name"] for c in collections]  # nothing was written
