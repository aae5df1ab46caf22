"""API threads in PostgreSQL: one thread continued through two API processes, and after a restart.

`crag serve` from the server environment (`make server-env`: langgraph-api on
langgraph-runtime-pg) on a PostgreSQL that requires a password (given from a file) and a
Redis, both on loopback; signed in, with the scripted model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import NotFoundError

from benchmarks.fixtures.shared_services import postgres_server, redis_server, shared_api_server
from tests.system.conftest import ANSWER, SECRETS, base_env

ALICE, BOB = "tok-alice-pg-41c2", "tok-bob-pg-9d07"
PASSWORD = "pg-api-secret-6f1a"
FIRST = "Which team won Super Bowl 50?"
FOLLOW_UP = "What was the final score?"


@pytest.fixture(scope="module")
def shared_env(
    sb50_data_dir: Path, scripted_llm: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    work = tmp_path_factory.mktemp("api-threads")
    (work / "pg-password").write_text(PASSWORD + "\n")
    with (
        postgres_server(work / "pg", password=PASSWORD) as postgres,
        redis_server(work / "redis") as redis,
    ):
        yield base_env(
            sb50_data_dir,
            CRAG_API_DATABASE_URL=postgres.url,
            CRAG_API_REDIS_URL=redis.url,
            CRAG_CHECKPOINT_PASSWORD_FILE=str(work / "pg-password"),
            CRAG_API_TOKENS=f"alice:{ALICE},bob:{BOB}",
            CRAG_MODEL="openai-compatible:scripted",
            CRAG_BASE_URL=scripted_llm,
            CRAG_WEB_SEARCH="off",
            CRAG_ANSWER_CACHE="false",
            **SECRETS,
        )


def as_user(url: str, token: str) -> Any:
    return get_sync_client(url=url, headers={"Authorization": f"Bearer {token}"})


def test_a_thread_continues_through_another_process_and_after_a_restart(shared_env, tmp_path):
    with (
        shared_api_server(tmp_path / "a", shared_env) as a,
        shared_api_server(tmp_path / "b", shared_env) as b,
    ):
        thread = as_user(a.url, ALICE).threads.create()["thread_id"]
        first = as_user(a.url, ALICE).runs.wait(thread, "crag", input={"question": FIRST})
        assert first["answer"] == ANSWER
        follow = as_user(b.url, ALICE).runs.wait(thread, "crag", input={"question": FOLLOW_UP})
        assert follow["standalone_question"] == "What was the score of Super Bowl 50?"  # A's turn
        bob = as_user(b.url, BOB)  # still each user's own: 404 on every read
        for read in (
            lambda: bob.threads.get(thread),
            lambda: bob.threads.get_state(thread),
            lambda: bob.threads.get_history(thread),
            lambda: bob.runs.list(thread),
        ):
            with pytest.raises(NotFoundError):
                read()
        assert thread not in [t["thread_id"] for t in bob.threads.search()]
        a.stop()
        logs = [a.log_path.read_text(errors="replace")]
        with shared_api_server(tmp_path / "a-again", shared_env) as again:
            state = as_user(again.url, ALICE).threads.get_state(thread)
            assert [t["question"] for t in state["values"]["history"]] == [FIRST, FOLLOW_UP]
            assert thread in [t["thread_id"] for t in as_user(again.url, ALICE).threads.search()]
            logs.append(again.log_path.read_text(errors="replace"))
        logs.append(b.log_path.read_text(errors="replace"))
    for log in logs:
        for secret in (PASSWORD, ALICE, BOB, *SECRETS.values()):
            assert secret not in log
