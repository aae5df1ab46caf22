"""deploy/compose.yaml stays in step with what crag reads (it is not run in tests: no Docker)."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from crag.cli import app
from crag_core.settings import Settings

COMPOSE = Path(__file__).resolve().parents[2] / "deploy" / "compose.yaml"


def test_api_processes_get_the_three_urls_crag_reads():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    fields = Settings.model_fields.values()
    aliases = {f.validation_alias for f in fields if isinstance(f.validation_alias, str)}
    apis = [s for name, s in services.items() if name.startswith("api-")]
    assert len(apis) == 2
    for api in apis:
        env = api["environment"]
        assert {"CRAG_CHROMA_URL", "CRAG_CHECKPOINT_URL"} <= set(env) and set(env) - {
            "CRAG_BASE_URL"
        } <= aliases
        assert env["CRAG_CHROMA_URL"] == "http://chroma-proxy:8000"  # the token check
        assert env["CRAG_CHECKPOINT_URL"].startswith("postgresql://")
        assert ":" not in env["CRAG_CHECKPOINT_URL"].split("//")[1].split("@")[0]  # no password
        assert env["CRAG_API_TOKENS_FILE"].startswith("/run/secrets/")
        assert api["command"][:2] == ["crag", "serve"]
        assert env["CRAG_API_DATABASE_URL"].endswith("/crag_api")  # threads shared, apart
        assert env["CRAG_API_REDIS_URL"].split("//")[1].split(":")[0] in services
        models = [u.split("//")[1].split(":")[0] for u in env["CRAG_BASE_URL"].split(",")]
        assert all(m in services for m in models) and len(models) == 2


def test_the_model_servers_command_is_one_the_cli_has():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    command = services["model-1"]["command"]
    assert command[:2] == ["crag", "model-server"]
    help_text = CliRunner().invoke(app, ["model-server", "--help"]).output
    for option in (c for c in command[2:] if c.startswith("--")):
        assert option in help_text


def test_only_the_api_processes_are_published_and_chroma_is_behind_its_token():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    published = {name for name, s in services.items() if s.get("ports")}
    assert published == {"api-1", "api-2"}
    proxy = services["chroma-proxy"]["environment"]
    assert proxy["CHROMA_UPSTREAM"] == "chroma:8000" and "CRAG_CHROMA_TOKEN" in proxy
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD_FILE"].startswith("/run/")
    help_text = CliRunner().invoke(app, ["serve", "--help"]).output
    for option in (c for c in services["api-1"]["command"][2:] if c.startswith("--")):
        assert option in help_text
