"""Threads in PostgreSQL (a real server on loopback) continued across two CLI processes."""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest

from benchmarks.fixtures.serve import free_port
from benchmarks.fixtures.shared_services import Process, chroma_server, postgres_server
from tests.system.conftest import ANSWER, base_env, crag, scripted_env

FIRST = "Who won Super Bowl 50?"
FOLLOW_UP = "What was the score?"
STANDALONE = "What was the score of Super Bowl 50?"  # what the scripted model rewrites it to


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, Process]]:
    work = tmp_path_factory.mktemp("services")
    with postgres_server(work) as postgres, chroma_server(work) as chroma:
        yield postgres, chroma


def test_a_thread_started_through_one_process_continues_through_another(
    services, scripted_llm, tmp_path
):
    postgres, chroma = services
    shared = {"CRAG_CHROMA_URL": chroma.url, "CRAG_CHECKPOINT_URL": postgres.url}
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "sb50.md").write_text(f"Super Bowl 50 was played on February 7, 2016. {ANSWER}\n")
    ingest = crag("ingest", str(corpus), env=base_env(tmp_path / "a", **shared))
    assert ingest.returncode == 0, ingest.stderr

    turns = []
    for data, question in [(tmp_path / "a", FIRST), (tmp_path / "b", FOLLOW_UP)]:
        env = scripted_env(data, scripted_llm, CRAG_WEB_SEARCH="off", **shared)
        done = crag("ask", question, "--thread", "across-1", "--json", "--no-cache", env=env)
        assert done.returncode == 0, done.stderr
        turns.append(json.loads(done.stdout))
    first, second = turns
    assert first["standalone_question"] == FIRST  # a first question needs no rewrite
    assert second["standalone_question"] == STANDALONE  # B read A's turn from PostgreSQL
    assert ANSWER in second["answer"]
    for data in ("a", "b"):
        assert not (tmp_path / data / "threads.sqlite").exists()
    with psycopg.connect(postgres.url, connect_timeout=5) as conn:
        rows = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s", ("across-1",)
        ).fetchone()
    assert rows is not None and rows[0] > 0


def test_an_unreachable_postgres_is_a_clear_error(scripted_llm, sb50_data_dir):
    dead = f"postgresql://crag@127.0.0.1:{free_port()}/postgres"
    env = scripted_env(
        sb50_data_dir, scripted_llm, CRAG_CHECKPOINT_URL=dead, CRAG_SERVICE_TIMEOUT_S="3"
    )
    done = crag("ask", FIRST, "--thread", "t-1", env=env, timeout=60)
    assert done.returncode != 0
    assert "Cannot connect to PostgreSQL at 127.0.0.1" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_a_password_from_a_file_opens_a_guarded_postgres(scripted_llm, sb50_data_dir, tmp_path):
    secret = "pg-secret-93b1e7"
    with postgres_server(tmp_path / "pg", password=secret) as guarded:
        env = scripted_env(
            sb50_data_dir, scripted_llm, CRAG_CHECKPOINT_URL=guarded.url, CRAG_WEB_SEARCH="off"
        )
        refused = crag("ask", FIRST, "--thread", "pw-1", "--no-cache", env=env, timeout=120)
        assert refused.returncode != 0
        assert "Cannot connect to PostgreSQL at 127.0.0.1" in refused.stderr + refused.stdout
        (tmp_path / "pg-password").write_text(secret + "\n")
        env["CRAG_CHECKPOINT_PASSWORD_FILE"] = str(tmp_path / "pg-password")
        done = crag("ask", FIRST, "--thread", "pw-1", "--json", "--no-cache", env=env)
        assert done.returncode == 0, done.stderr
        assert ANSWER in json.loads(done.stdout)["answer"]
        wrong = tmp_path / "wrong"
        wrong.write_text("not-the-password-55\n")
        env["CRAG_CHECKPOINT_PASSWORD_FILE"] = str(wrong)
        denied = crag("ask", FIRST, "--thread", "pw-1", "--no-cache", env=env, timeout=120)
        assert denied.returncode != 0 and "Traceback" not in denied.stderr
        for out in (refused, done, denied):
            assert secret not in out.stdout + out.stderr
            assert "not-the-password-55" not in out.stdout + out.stderr
        assert secret not in guarded.log()
