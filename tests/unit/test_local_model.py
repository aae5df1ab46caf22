"""The embedded model's file: joined from its part wheels once, verified, found again."""

from __future__ import annotations

import hashlib
import sys

import pytest

from adapters import local_model
from adapters.errors import ModelError
from adapters.local_model import EmbeddedModel, assemble


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
