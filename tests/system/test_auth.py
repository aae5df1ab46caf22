"""Sign-in and ownership on `make serve` with tokens: LangGraph's Auth, through the real server.

Two users: alice may use every collection, bob only 'bobs'. The model is the scripted loopback
model in its own process, slow enough (0.5 s a request) to hold a run open for the run limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import NotFoundError

from benchmarks.fixtures.browser import offline_page
from benchmarks.fixtures.serve import Server, langgraph_dev
from tests.loopback import langsmith_recorder, traced_runs
from tests.system.conftest import ANSWER, SECRETS, base_env
from tests.system.test_model_servers import model_server

ALICE, BOB = "tok-alice-7f3e9a", "tok-bob-2c81d4"
QUESTION = "Which team won Super Bowl 50?"


@pytest.fixture(scope="module")
def slow_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with model_server(tmp_path_factory.mktemp("model"), 0.5) as (url, _, _):
        yield url


@pytest.fixture(scope="module")
def signed_server(
    sb50_data_dir: Path, slow_llm: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with langsmith_recorder() as (traces_url, traced):
        yield from _signed_server(sb50_data_dir, slow_llm, tmp_path_factory, traces_url)
    assert traced_runs(traced), "the runs were traced"
    # langgraph-api reports usage to LangSmith with LangSmith's own key (/v1/metadata/submit):
    # that key goes to its owner. No other secret goes anywhere, and none is in a run's trace.
    for secret in (ALICE, BOB, *SECRETS.values()):
        leaks = [
            (r["method"], r["path"])
            for r in traced
            if secret.encode() in r["raw"]
            and not (r["path"] == "/v1/metadata/submit" and secret == SECRETS["LANGSMITH_API_KEY"])
        ]
        assert leaks == [], leaks


def _signed_server(
    sb50_data_dir: Path, slow_llm: str, tmp_path_factory: pytest.TempPathFactory, traces: str
) -> Iterator[Server]:
    env = base_env(
        sb50_data_dir,
        CRAG_API_TOKENS=f"alice:{ALICE},bob:{BOB}",
        CRAG_API_COLLECTIONS="bob:bobs",
        CRAG_API_MAX_RUNS_PER_USER="1",
        CRAG_API_MAX_QUESTION_CHARS="200",
        CRAG_MODEL="openai-compatible:scripted",
        CRAG_BASE_URL=slow_llm,
        CRAG_WEB_SEARCH="off",
        CRAG_ANSWER_CACHE="false",
        LANGSMITH_TRACING="true",
        LANGSMITH_ENDPOINT=traces,
        LANGSMITH_PROJECT="crag-signed",
        **SECRETS,
    )
    with langgraph_dev(env, tmp_path_factory.mktemp("signed")) as srv:
        yield srv
    log = srv.log_path.read_text(errors="replace")
    for secret in (ALICE, BOB, *SECRETS.values()):
        assert secret not in log  # no token in the server's log


def client(server: Server, token: str) -> Any:
    return get_sync_client(url=server.url, headers={"Authorization": f"Bearer {token}"})


def test_no_token_or_a_wrong_one_is_401_for_the_api_and_the_page_routes(signed_server: Server):
    for headers in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": ALICE}):
        for method, path in [
            ("POST", "/threads/search"),
            ("POST", "/assistants/search"),
            ("GET", "/crag/settings"),
            ("GET", "/crag/collections"),
            ("GET", "/crag/collections/crag/chunks/x"),
        ]:
            reply = httpx.request(
                method, signed_server.url + path, headers=headers, json={}, timeout=30
            )
            assert reply.status_code == 401, (path, headers, reply.text)
            assert ALICE not in reply.text and "not-a-token" not in reply.text
    page = httpx.get(f"{signed_server.url}/ui/", timeout=30)  # the page itself holds no data
    assert page.status_code == 200 and "sign-in" in page.text
    settings = httpx.get(
        f"{signed_server.url}/crag/settings",
        headers={"Authorization": f"Bearer {ALICE}"},
        timeout=30,
    ).json()
    assert ALICE not in str(settings) and BOB not in str(settings)


def test_another_users_thread_is_404_everywhere(signed_server: Server):
    alice, bob = client(signed_server, ALICE), client(signed_server, BOB)
    thread = alice.threads.create()["thread_id"]
    alice.runs.wait(thread, "crag", input={"question": QUESTION})
    assert alice.threads.get_state(thread)["values"]["answer"] == ANSWER
    assert thread in [t["thread_id"] for t in alice.threads.search()]

    assert thread not in [t["thread_id"] for t in bob.threads.search()]
    for attempt in (
        lambda: bob.threads.get(thread),
        lambda: bob.threads.get_state(thread),
        lambda: bob.threads.get_history(thread),
        lambda: bob.runs.list(thread),
        lambda: list(
            bob.runs.stream(
                thread, "crag", input={"question": QUESTION}, context={"collection": "bobs"}
            )
        ),
    ):
        with pytest.raises(NotFoundError):
            attempt()


def test_a_forbidden_collection_is_403_for_runs_and_chunk_reads(signed_server: Server):
    bob = client(signed_server, BOB)
    refused = httpx.post(
        f"{signed_server.url}/runs/wait",
        headers={"Authorization": f"Bearer {BOB}"},
        json={"assistant_id": "crag", "input": {"question": QUESTION}},  # default: 'crag'
        timeout=60,
    )
    assert refused.status_code == 403 and "'crag'" in refused.json()["detail"]
    indexing = httpx.post(
        f"{signed_server.url}/runs/wait",
        headers={"Authorization": f"Bearer {BOB}"},
        json={
            "assistant_id": "indexer",
            "input": {"docs": [{"page_content": "x y z"}]},
            "context": {"collection": "crag"},
        },
        timeout=60,
    )
    assert indexing.status_code == 403
    chunk = httpx.get(
        f"{signed_server.url}/crag/collections/crag/chunks/anything",
        headers={"Authorization": f"Bearer {BOB}"},
        timeout=30,
    )
    assert chunk.status_code == 403 and "'crag'" in chunk.json()["detail"]
    listed = bob.http.get("/crag/collections")
    assert [c["name"] for c in listed["collections"]] == []  # 'crag' is not shown to bob
    ingested = bob.runs.wait(
        None,
        "indexer",
        input={"docs": [{"page_content": "Bob's note.", "metadata": {"source": "note://b"}}]},
        context={"collection": "bobs"},
    )
    assert ingested["report"]["added"] == ["note://b"]  # his own collection is his


def test_limits_answer_413_and_429_with_a_message(signed_server: Server):
    alice = client(signed_server, ALICE)
    long = httpx.post(
        f"{signed_server.url}/runs/wait",
        headers={"Authorization": f"Bearer {ALICE}"},
        json={"assistant_id": "crag", "input": {"question": "why? " * 100}},
        timeout=60,
    )
    assert long.status_code == 413 and "limit is 200" in long.json()["detail"]
    bulky = httpx.post(
        f"{signed_server.url}/runs/wait",
        headers={"Authorization": f"Bearer {ALICE}"},
        json={"assistant_id": "indexer", "input": {"docs": [{"page_content": "x" * (21 << 20)}]}},
        timeout=120,
    )
    assert bulky.status_code == 413 and "limit is 2,000,000 a document" in bulky.json()["detail"]

    first = alice.threads.create()["thread_id"]
    run = alice.runs.create(first, "crag", input={"question": QUESTION})  # under way ~5 s
    second = alice.threads.create()["thread_id"]
    busy = httpx.post(
        f"{signed_server.url}/threads/{second}/runs",
        headers={"Authorization": f"Bearer {ALICE}"},
        json={"assistant_id": "crag", "input": {"question": QUESTION}},
        timeout=60,
    )
    assert busy.status_code == 429 and "limit 1" in busy.json()["detail"]
    alice.runs.join(first, run["run_id"])
    again = alice.runs.wait(second, "crag", input={"question": QUESTION})  # its turn now
    assert again["answer"] == ANSWER


def test_the_page_asks_for_the_token_once_and_works_signed_in(signed_server: Server):
    with offline_page() as view:
        page = view.page
        page.goto(f"{signed_server.url}/ui/")
        page.wait_for_selector("#sign-in[open]")
        page.fill("#token", "wrong-token")
        page.press("#token", "Enter")  # refused: asked again, with the reason
        page.wait_for_function(
            "() => document.querySelector('#sign-in-reason').textContent.includes('not valid')"
        )
        page.fill("#token", ALICE)
        page.press("#token", "Enter")
        page.wait_for_function("() => window.cragPage.readyMs !== null")
        assert page.input_value("#collection") == "crag"
        page.fill("#question", QUESTION)
        page.press("#question", "Enter")
        page.wait_for_selector(".turn[data-status=done]", timeout=120_000)
        assert page.inner_text(".turn .answer") == ANSWER
        page.reload()  # the token is kept for the tab's session: no second sign-in
        page.wait_for_function("() => window.cragPage.readyMs !== null")
        assert not page.is_visible("#sign-in")
        assert view.outside == [], view.outside
        assert [e for e in view.errors if "401" not in e] == [], view.errors
