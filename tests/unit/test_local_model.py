"""The embedded model's file: joined from its part wheels once, verified, found again."""

from __future__ import annotations

import hashlib
import sys

import pytest

from crag_core.clients import local_model
from crag_core.clients.errors import ModelError
from crag_core.clients.local_model import EmbeddedModel, assemble


@pytest.fixture
def parts(tmp_path, monkeypatch):
    """Two installed 'part wheels' holding b"hello " and b"model" (as the real parts do)."""
    site = tmp_path / "site"
    for index, data in ((1, b"hello "), (2, b"model")):
        package = site / f"fakepart{index}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{index:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(local_model, "DEFAULT_MODELS", tmp_path / "default-models")
    return site


def spec(sha256: str = hashlib.sha256(b"hello model").hexdigest()) -> EmbeddedModel:
    return EmbeddedModel("fake", "fake.gguf", "fakepart", 2, sha256, "requirements-fake.txt")


def test_parts_are_joined_once_and_verified(parts, tmp_path):
    path = assemble(spec(), tmp_path / "models")
    assert path.read_bytes() == b"hello model"
    for index in (1, 2):  # `make model` uninstalls the parts: the verified file is enough
        sys.modules.pop(f"fakepart{index}", None)
        (parts / f"fakepart{index}" / "__init__.py").unlink()
    assert assemble(spec(), tmp_path / "models") == path


def test_a_wrong_hash_is_refused_and_leaves_no_file(parts, tmp_path):
    with pytest.raises(ModelError, match="Refusing to use it"):
        assemble(spec("0" * 64), tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_another_data_dir_uses_the_model_make_model_joined(parts, tmp_path):
    first = assemble(spec(), local_model.DEFAULT_MODELS)
    (parts / "fakepart1" / "__init__.py").unlink()
    sys.modules.pop("fakepart1", None)
    assert assemble(spec(), tmp_path / "other-data" / "models") == first
    assert not (tmp_path / "other-data" / "models" / "fake.gguf").exists()  # no second copy


def test_no_model_and_no_parts_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setattr(local_model, "DEFAULT_MODELS", tmp_path / "default-models")
    missing = EmbeddedModel("absent", "absent.gguf", "no_such_part", 1, "0" * 64, "req.txt")
    with pytest.raises(ModelError, match="Run `make model`"):
        assemble(missing, tmp_path / "models")


@pytest.fixture
def health_server():
    """A loopback server answering GET /health with 200, as llama.cpp's server does."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Health(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server interface
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def test_a_registered_model_server_is_used_and_nothing_is_loaded(
    data_dir, health_server, monkeypatch
):
    import json
    import os

    from crag_core.clients.llm import build_chat_model

    monkeypatch.setattr(local_model, "HEALTH_TIMEOUT_S", 30.0)  # a busy test machine
    monkeypatch.setattr(local_model, "_servers", {})  # none from earlier tests

    record = data_dir / "model-servers" / "qwen2.5-coder-1.5b.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"url": health_server, "pid": os.getpid(), "model": "x"}))
    assert local_model.running() == health_server
    llm = build_chat_model(
        "local", base_url="", temperature=0, max_tokens=8, timeout_s=5, max_retries=0
    )
    assert str(llm.openai_api_base) == health_server  # type: ignore[attr-defined]
    assert local_model._servers == {}  # no embedded server of its own


def test_a_record_of_a_dead_server_is_removed(data_dir, health_server):
    import json
    import subprocess

    proc = subprocess.Popen(["sleep", "0"])  # a pid that has exited
    proc.wait()
    record = data_dir / "model-servers" / "qwen2.5-coder-1.5b.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"url": health_server, "pid": proc.pid, "model": "x"}))
    assert local_model.running() is None and not record.exists()


def test_the_embedded_server_starts_with_the_first_request_not_before(data_dir, monkeypatch):
    from crag_core.clients.llm import build_chat_model

    started: list[int] = []

    class Refused(local_model.LocalServer):
        def __init__(self, path, **kwargs):
            started.append(kwargs["port"])
            raise ModelError("the model failed to start (test)")

    monkeypatch.setattr(local_model, "LocalServer", Refused)
    monkeypatch.setattr(local_model, "assemble", lambda model: data_dir / "m.gguf")
    monkeypatch.setattr(local_model, "_servers", {})
    llm = build_chat_model(
        "local", base_url="", temperature=0, max_tokens=8, timeout_s=5, max_retries=0
    )
    assert started == []  # built, nothing loaded: a cached answer never pays for the model
    with pytest.raises(Exception) as raised:
        llm.invoke("hello")
    chain = [raised.value, raised.value.__cause__, raised.value.__context__]
    assert any(isinstance(e, ModelError) for e in chain) and len(started) == 1
