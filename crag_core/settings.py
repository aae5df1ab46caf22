"""Process-level settings, read from the environment in one typed place.

Run-level settings (model, collection, thresholds, retries…) are the graph's ``Context``
(``crag_core/schema/context.py``); these are the ones a process has once: where crag keeps
its state, provider credentials and endpoints, the embedded server's context size. The data
crag writes (the Chroma store, caches, thread checkpoints) lives under one data dir:
``CRAG_DATA_DIR`` if set, otherwise ``.crag/`` at the project root. The embedded models live
apart, in one models folder that every data dir shares (``CRAG_MODELS_DIR``, else the
user's ``~/.local/share/crag/models``).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from crag_core.errors import ConfigError

PROJECT_ROOT = Path(__file__).resolve().parents[1]


class Settings(BaseSettings):
    """The environment variables crag reads (``.env`` is loaded by the CLI and the server)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True, env_ignore_empty=True)

    data_dir: Path = Field(
        default=PROJECT_ROOT / ".crag",
        validation_alias="CRAG_DATA_DIR",
        description="Where crag keeps its store, caches and threads (the models live apart).",
    )
    models_dir: Path | None = Field(
        default=None,
        validation_alias="CRAG_MODELS_DIR",
        description=(
            "Where the embedded models are kept (joined from their parts once, verified) for "
            "every data dir and command; default: the user's data folder, "
            "$XDG_DATA_HOME/crag/models or ~/.local/share/crag/models."
        ),
    )
    model_keep_alive_s: float = Field(
        default=300.0,
        ge=0,
        validation_alias="CRAG_MODEL_KEEP_ALIVE_S",
        description=(
            "How long the resident model server that `crag ask` starts (or finds) stays up "
            "without a request, in seconds; 0: each command loads the model itself and uses "
            "no registered server (what measurements need: a prompt cache of their own)."
        ),
    )
    local_n_ctx: int = Field(
        default=8192,
        ge=512,
        validation_alias="CRAG_LOCAL_N_CTX",
        description="Context window of the embedded model server, in tokens.",
    )
    local_n_parallel: int = Field(
        default=1,
        ge=1,
        le=16,
        validation_alias="CRAG_LOCAL_N_PARALLEL",
        description=(
            "Parallel slots of the embedded model server: requests decoded together; each slot "
            "has its own prompt cache and CRAG_LOCAL_N_CTX / slots tokens of context."
        ),
    )
    chroma_url: str = Field(
        default="",
        validation_alias="CRAG_CHROMA_URL",
        description=(
            "A Chroma server (http://host:port, e.g. `chroma run`) holding the knowledge base "
            "that several crag processes share; empty: the local store in the data dir."
        ),
    )
    checkpoint_url: str = Field(
        default="",
        validation_alias="CRAG_CHECKPOINT_URL",
        description=(
            "PostgreSQL URL (postgresql://user@host:port/db) keeping threads that several crag "
            "processes share; empty: SQLite in the data dir."
        ),
    )
    checkpoint_password_file: Path | None = Field(
        default=None,
        validation_alias="CRAG_CHECKPOINT_PASSWORD_FILE",
        description=(
            "A file holding the PostgreSQL password of CRAG_CHECKPOINT_URL (a secret mounted "
            "by the deployment); libpq's PGPASSWORD and PGPASSFILE work too."
        ),
    )
    ocr: bool = Field(
        default=True,
        validation_alias="CRAG_OCR",
        description=(
            "Read scanned PDF pages and image files (.png .jpg .tif .webp .bmp) by OCR "
            "(Tesseract, on the CPU, offline); false: such pages are reported as having no text."
        ),
    )
    tesseract: Path | None = Field(
        default=None,
        validation_alias="CRAG_TESSERACT",
        description=(
            "The tesseract program OCR runs (default: the one `make setup` unpacks into the "
            "venv, else tesseract on the PATH)."
        ),
    )
    service_timeout_s: float = Field(
        default=30.0,
        gt=0,
        validation_alias="CRAG_SERVICE_TIMEOUT_S",
        description="Timeout in seconds of one request to the Chroma server or PostgreSQL.",
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias="OPENAI_API_KEY", description="Key for 'openai:<model>'."
    )
    compatible_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("CRAG_API_KEY", "OPENAI_API_KEY"),
        description="Key for 'openai-compatible:<model>' (CRAG_API_KEY, else OPENAI_API_KEY).",
    )
    openai_base_url: str = Field(
        default="",
        validation_alias="OPENAI_BASE_URL",
        description="Endpoint for 'openai-compatible:<model>' when the context names none.",
    )
    tavily_api_key: SecretStr | None = Field(
        default=None, validation_alias="TAVILY_API_KEY", description="Key for Tavily search."
    )
    tavily_api_base_url: str = Field(
        default="",
        validation_alias="TAVILY_API_BASE_URL",
        description="Tavily endpoint (default: Tavily's own).",
    )
    debug: bool = Field(
        default=False, validation_alias="CRAG_DEBUG", description="Show tracebacks on errors."
    )
    api_tokens: SecretStr | None = Field(
        default=None,
        validation_alias="CRAG_API_TOKENS",
        description=(
            "Who may use the API server: comma-separated user:token pairs (unset, with no "
            "CRAG_API_TOKENS_FILE either: open local mode, loopback only)."
        ),
    )
    api_tokens_file: Path | None = Field(
        default=None,
        validation_alias="CRAG_API_TOKENS_FILE",
        description="A file of user:token lines (# comments), read instead of CRAG_API_TOKENS.",
    )
    api_collections: str = Field(
        default="",
        validation_alias="CRAG_API_COLLECTIONS",
        description=(
            "Collections each user may use, user:c1|c2 pairs separated by commas; a user not "
            "named may use every collection."
        ),
    )
    api_max_question_chars: int = Field(
        default=4000,
        ge=1,
        validation_alias="CRAG_API_MAX_QUESTION_CHARS",
        description="Longest question the API server takes (longer: 413).",
    )
    api_max_runs_per_user: int = Field(
        default=2,
        ge=1,
        validation_alias="CRAG_API_MAX_RUNS_PER_USER",
        description="Runs one signed-in user may have under way at once (more: 429).",
    )
    api_ocr_pages_per_hour: int = Field(
        default=240,
        ge=0,
        validation_alias="CRAG_API_OCR_PAGES_PER_HOUR",
        description=(
            "Pages one user's uploads may have read by OCR in any hour (four 60-page scans); a "
            "file that needs more than are left is refused with the time to wait. 0: no OCR."
        ),
    )
    api_database_url: str = Field(
        default="",
        validation_alias="CRAG_API_DATABASE_URL",
        description=(
            "PostgreSQL URL where `crag serve` keeps the API's threads and runs, so that several "
            "API processes share them and they survive a restart (its own database, not the "
            "one of CRAG_CHECKPOINT_URL); empty: `langgraph dev`, threads in memory."
        ),
    )
    api_redis_url: str = Field(
        default="",
        validation_alias="CRAG_API_REDIS_URL",
        description="Redis URL the shared API processes stream runs through (with the above).",
    )
    api_caller_fields: str = Field(
        default="",
        validation_alias="CRAG_API_CALLER_FIELDS",
        description=(
            "Run settings the server leaves to API callers although they are the operator's by "
            "default (model, grader_model, base_url, web_search, prompt_versions, the "
            "timeouts), comma-separated; e.g. 'model,grader_model' on a server whose users may "
            "pick among the models it can reach. docs/deploy.md says what each one allows."
        ),
    )
    api_fetch_allow: str = Field(
        default="",
        validation_alias="CRAG_API_FETCH_ALLOW",
        description=(
            "Internal hosts the server may fetch web pages from for API callers, "
            "comma-separated: a host name, host:port, a network (10.1.0.0/16) or IP:port. "
            "Empty: public addresses only."
        ),
    )
    api_origins: str = Field(
        default="https://smith.langchain.com",
        validation_alias="CRAG_API_ORIGINS",
        description=(
            "Web origins whose pages may call the API from a browser besides the server's own "
            "page, comma-separated (default: LangGraph Studio's); 'none' for no other."
        ),
    )
    api_hosts: str = Field(
        default="",
        validation_alias="CRAG_API_HOSTS",
        description=(
            "Host names the server answers to besides loopback and the address it listens on "
            "(the names in front of it: a proxy's, a LAN name), comma-separated. Checked in "
            "open mode always, with sign-in when set."
        ),
    )
    api_run_timeout_s: float = Field(
        default=600.0,
        gt=0,
        validation_alias="CRAG_API_RUN_TIMEOUT_S",
        description="Wall-clock budget of one API run, in seconds; a run past it is cancelled.",
    )
    api_run_workers: int = Field(
        default=4,
        ge=1,
        le=64,
        validation_alias="CRAG_API_RUN_WORKERS",
        description=(
            "Runs the API server works on at once (more wait in its queue): one slow run does "
            "not hold up the others."
        ),
    )
    chroma_token: SecretStr | None = Field(
        default=None,
        validation_alias="CRAG_CHROMA_TOKEN",
        description="Token the Chroma server (CRAG_CHROMA_URL) requires, sent as a bearer token.",
    )


def settings() -> Settings:
    """The settings as the environment holds them now (a bad value is a ``ConfigError``)."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"Invalid environment setting: {problems}.") from exc


def default_models_dir() -> Path:
    """The user's models folder: where every command looks first, whatever its settings."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "crag" / "models"


def models_dir() -> Path:
    """Where embedded models are kept: ``CRAG_MODELS_DIR``, else the user's models folder."""
    return (settings().models_dir or default_models_dir()).expanduser()


def data_dir() -> Path:
    """Return the data dir, creating it if needed."""
    path = settings().data_dir.expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"The data dir {path} cannot be created ({exc.strerror or exc}); "
            "set CRAG_DATA_DIR to a writable directory."
        ) from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"The data dir {path} is not writable; set CRAG_DATA_DIR.")
    return path
