"""The server's access rules (crag.auth): tokens, collections, refusals that never echo a token."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from crag import auth
from crag.cli import app
from crag_core.errors import ConfigError


@pytest.fixture(autouse=True)
def fresh_rules():
    auth.access.cache_clear()
    yield
    auth.access.cache_clear()


def test_tokens_from_the_environment_or_a_file(monkeypatch, tmp_path):
    assert auth.access().open  # nothing set: open local mode
    monkeypatch.setenv("CRAG_API_TOKENS", "alice:tok-a-1, bob:tok-b-2")
    monkeypatch.setenv("CRAG_API_COLLECTIONS", "bob:notes|drafts")
    auth.access.cache_clear()
    rules = auth.access()
    assert not rules.open
    assert rules.user_of("tok-a-1") == "alice" and rules.user_of("tok-b-2") == "bob"
    assert rules.user_of("tok-a-") is None and rules.user_of("") is None
    assert rules.may_use("alice", "anything") and rules.may_use("bob", "drafts")
    assert not rules.may_use("bob", "crag")

    tokens = tmp_path / "tokens"
    tokens.write_text("# the team\ncarol:tok-c-3\n\ndave:tok-d-4\n")
    monkeypatch.setenv("CRAG_API_TOKENS_FILE", str(tokens))
    auth.access.cache_clear()
    assert auth.access().user_of("tok-d-4") == "dave"  # the file wins over the variable
    assert auth.access().user_of("tok-a-1") is None


@pytest.mark.parametrize(
    ("tokens", "message"),
    [
        ("alice:secret-1,secret-2", "item 2 is not user:value"),
        ("alice:same-secret,bob:same-secret", "two users share the token of 'bob'"),
        ("alice:", "item 1 is not user:value"),
    ],
)
def test_a_malformed_token_list_is_refused_without_echoing_a_token(monkeypatch, tokens, message):
    monkeypatch.setenv("CRAG_API_TOKENS", tokens)
    with pytest.raises(ConfigError, match=message) as raised:
        auth.access()
    assert "secret" not in str(raised.value)


def test_an_unreadable_tokens_file_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("CRAG_API_TOKENS_FILE", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="cannot be read"):
        auth.access()


def test_serve_refuses_to_listen_beyond_loopback_without_sign_in(monkeypatch):
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "No sign-in is configured" in result.output and "--insecure" in result.output
    monkeypatch.setenv("CRAG_API_TOKENS", "alice:x")
    auth.access.cache_clear()
    monkeypatch.setattr("os.execv", lambda *a: (_ for _ in ()).throw(SystemExit(0)))
    started = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])  # signed in: it starts
    assert started.exit_code == 0, started.output


def test_serve_picks_the_server_and_says_what_a_shared_one_needs(monkeypatch, tmp_path):
    from crag import serve

    plain = serve.server_command("127.0.0.1", 2024, reload=False, insecure=False)
    assert plain.argv[1:3] == ["dev", "--config"] and "--no-reload" in plain.argv
    assert plain.env == {"BG_JOB_TIMEOUT_SECS": "600"} and plain.warning == ""
    assert plain.argv[plain.argv.index("--n-jobs-per-worker") + 1] == "4"
    loose = serve.server_command("0.0.0.0", 2024, reload=True, insecure=True)
    assert "no sign-in" in loose.warning

    monkeypatch.setenv("CRAG_API_DATABASE_URL", "postgresql://crag@db:5432/crag_api")
    monkeypatch.setattr("crag.serve.importlib.util.find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="make server-env"):
        serve.server_command("127.0.0.1", 2024, reload=False, insecure=False)
    monkeypatch.setattr("crag.serve.importlib.util.find_spec", lambda name: object())
    with pytest.raises(ConfigError, match="CRAG_API_REDIS_URL"):
        serve.server_command("127.0.0.1", 2024, reload=False, insecure=False)
    monkeypatch.setenv("CRAG_API_REDIS_URL", "redis://cache:6379")
    (tmp_path / "pw").write_text("s3cret/with:odd@chars\n")
    monkeypatch.setenv("CRAG_CHECKPOINT_PASSWORD_FILE", str(tmp_path / "pw"))
    shared = serve.server_command("127.0.0.1", 2024, reload=False, insecure=False)
    assert shared.argv[2:4] == ["uvicorn", "crag.shared_server:app"]
    assert shared.env["DATABASE_URI"] == (
        "postgresql://crag:s3cret%2Fwith%3Aodd%40chars@db:5432/crag_api"
    )
    assert shared.env["LANGGRAPH_RUNTIME_EDITION"] == "pg"
    assert shared.env["REDIS_URI"] == "redis://cache:6379"
