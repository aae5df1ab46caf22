"""The embedded model's file: joined from its part wheels once, verified, found again from any
data dir and any models folder; model servers registered where every process finds them."""

from __future__ import annotations

import hashlib
import sys

import pytest

from crag_core.errors import ModelError
from crag_core.runtime import local_model, resident
from crag_core.runtime.local_model import EmbeddedModel, assemble


@pytest.fixture(autouse=True)
def homes(tmp_path, monkeypatch):
    """The user's folder, the models folder and the old default, all in the test's folder."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "user-data"))
    monkeypatch.setattr(local_model, "OLD_FOLDER", tmp_path / "old-default" / "models")
    return tmp_path / "user-data" / "crag" / "models"


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
    return site


def uninstall(parts, *indexes: int) -> None:
    """What `make model` does after joining: the part wheels go."""
    for index in indexes:
        sys.modules.pop(f"fakepart{index}", None)
        (parts / f"fakepart{index}" / "__init__.py").unlink()


def spec(sha256: str = hashlib.sha256(b"hello model").hexdigest()) -> EmbeddedModel:
    return EmbeddedModel("fake", "fake.gguf", "fakepart", 2, sha256, "requirements-fake.txt")


def test_parts_are_joined_once_into_the_models_folder_and_verified(parts, homes):
    path = assemble(spec())
    assert path == homes / "fake.gguf" and path.read_bytes() == b"hello model"
    uninstall(parts, 1, 2)  # the verified file is enough
    assert assemble(spec()) == path


def test_a_wrong_hash_is_refused_and_leaves_no_file(parts, homes):
    with pytest.raises(ModelError, match="Refusing to use it"):
        assemble(spec("0" * 64))
    assert list(homes.iterdir()) == []


def test_every_data_dir_and_models_folder_finds_the_one_file(parts, homes, tmp_path, monkeypatch):
    monkeypatch.setenv("CRAG_MODELS_DIR", str(tmp_path / "elsewhere"))
    first = assemble(spec())  # `CRAG_MODELS_DIR=… make model`
    assert first == tmp_path / "elsewhere" / "fake.gguf"
    uninstall(parts, 1, 2)
    monkeypatch.delenv("CRAG_MODELS_DIR")  # a shell without it (make test's tests)
    for data in ("one", "two"):
        monkeypatch.setenv("CRAG_DATA_DIR", str(tmp_path / data))
        found = assemble(spec())
        assert found == homes / "fake.gguf" and found.resolve() == first.resolve()
    assert not (tmp_path / "one" / "models").exists()  # a data dir holds data only


def test_a_model_joined_by_an_earlier_version_is_found(parts, homes, tmp_path, monkeypatch):
    monkeypatch.setenv("CRAG_DATA_DIR", str(tmp_path / "old-data"))
    old = assemble(spec(), tmp_path / "old-data" / "models")  # where it used to be joined
    uninstall(parts, 1, 2)
    (homes / "fake.gguf").unlink()  # as before this version: nothing in the models folder
    (homes / "fake.gguf.verified").unlink()
    assert assemble(spec()).resolve() == old.resolve()  # the first command after the upgrade
    monkeypatch.setenv("CRAG_DATA_DIR", str(tmp_path / "new-data"))  # then any data dir
    assert assemble(spec()).resolve() == old.resolve()


def test_no_model_and_no_parts_says_what_to_run_and_where_it_looked(homes):
    missing = EmbeddedModel("absent", "absent.gguf", "no_such_part", 1, "0" * 64, "req.txt")
    with pytest.raises(ModelError, match="Run `make model`") as raised:
        assemble(missing)
    assert f"Looked for absent.gguf in {homes}" in str(raised.value)


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


def test_a_registered_model_server_is_used_and_nothing_is_loaded(homes, health_server, monkeypatch):
    import json
    import os

    from crag_core.clients.llm import build_chat_model

    monkeypatch.setattr(resident, "HEALTH_TIMEOUT_S", 30.0)  # a busy test machine
    monkeypatch.setenv("CRAG_MODEL_KEEP_ALIVE_S", "300")  # servers are shared (not so in tests)
    monkeypatch.setattr(local_model, "_servers", {})  # none from earlier tests

    record = homes / "servers" / "qwen2.5-coder-1.5b.json"  # the models folder's, not a data dir's
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"url": health_server, "pid": os.getpid(), "model": "x"}))
    assert resident.running() == health_server
    llm = build_chat_model(
        "local", base_url="", temperature=0, max_tokens=8, timeout_s=5, max_retries=0
    )
    assert str(llm.openai_api_base) == health_server  # type: ignore[attr-defined]
    assert local_model._servers == {}  # no embedded server of its own


def test_a_record_of_a_dead_server_is_removed(homes, health_server):
    import json
    import subprocess

    proc = subprocess.Popen(["sleep", "0"])  # a pid that has exited
    proc.wait()
    record = homes / "servers" / "qwen2.5-coder-1.5b.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"url": health_server, "pid": proc.pid, "model": "x"}))
    assert resident.running() is None and not record.exists()


def test_a_record_whose_port_another_process_answers_is_not_used(homes, health_server):
    """The record's process is alive, but what answers on its port is not it: not used."""
    import json
    import subprocess

    other = subprocess.Popen(["sleep", "30"])  # alive, and holds no port
    try:
        record = homes / "servers" / "qwen2.5-coder-1.5b.json"
        record.parent.mkdir(parents=True)
        record.write_text(json.dumps({"url": health_server, "pid": other.pid, "model": "x"}))
        found = resident.registered()
        assert found is not None and not found.answers  # /health says 200; the port is not its
        assert resident.running() is None
    finally:
        other.kill()
        other.wait()


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
