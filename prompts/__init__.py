"""Prompts as data: one file per prompt per version, loaded by name and version.

Layout: ``prompts/<name>/<version>.md``. Each file starts with a front-matter block::

    ---
    description: what the prompt is for
    variables: [question, documents]
    ---
    The template, with {question} and {documents} as f-string placeholders.

The declared variables must be exactly the template's placeholders (checked on load), and
``render`` refuses missing or extra values, so a prompt can never silently drop an input.
Versions sort naturally (v2 < v10); the latest is used unless the context names another.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.prompts import PromptTemplate

PROMPTS_DIR = Path(__file__).resolve().parent
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.DOTALL)


class PromptError(ValueError):
    """A prompt is missing, malformed, or rendered with the wrong variables."""


@dataclass(frozen=True)
class RenderedPrompt:
    """A prompt filled in and ready to send, with the name and version that produced it."""

    name: str
    version: str
    messages: list[BaseMessage]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Extra trace metadata recorded with the LLM call that sends this prompt."""

    @property
    def text(self) -> str:
        """The rendered text of the (single) message."""
        return "\n".join(str(m.content) for m in self.messages)


@dataclass(frozen=True)
class Prompt:
    """One version of one prompt."""

    name: str
    version: str
    description: str
    variables: frozenset[str]
    template: PromptTemplate

    def render(self, **values: str) -> RenderedPrompt:
        """Fill the template; every declared variable must be given, and nothing else."""
        given = set(values)
        if given != self.variables:
            missing = sorted(self.variables - given)
            extra = sorted(given - self.variables)
            raise PromptError(
                f"prompt {self.name}:{self.version} rendered with missing={missing} extra={extra}"
            )
        text = self.template.format(**values)
        return RenderedPrompt(self.name, self.version, [HumanMessage(content=text)])


def _version_key(version: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", version)
    return (int(digits) if digits else 0, version)


def names() -> list[str]:
    """All prompt names in the registry."""
    return sorted(p.name for p in PROMPTS_DIR.iterdir() if p.is_dir() and any(p.glob("v*.md")))


def versions(name: str) -> list[str]:
    """All versions of prompt ``name``, oldest first."""
    if name not in names():  # never a path from an unknown name ("../x")
        raise PromptError(f"no prompt named {name!r}; known: {', '.join(names())}")
    return sorted((p.stem for p in (PROMPTS_DIR / name).glob("v*.md")), key=_version_key)


@cache
def load(name: str, version: str | None = None) -> Prompt:
    """Load prompt ``name`` at ``version`` (default: the latest)."""
    known = versions(name)  # a path is only ever built from a known name and version
    version = version or known[-1]
    if version not in known:
        raise PromptError(
            f"prompt {name!r} has no version {version!r}; versions: {', '.join(known)}"
        )
    return load_file(PROMPTS_DIR / name / f"{version}.md", name, version)


def load_file(path: Path, name: str, version: str) -> Prompt:
    """Load a prompt file from anywhere (e.g. a benchmark's candidate) as ``name:version``."""
    match = _FRONT_MATTER.match(path.read_text(encoding="utf-8"))
    if not match:
        raise PromptError(f"{path}: missing the '---' front-matter block")
    meta = yaml.safe_load(match.group(1)) or {}
    declared = frozenset(meta.get("variables") or [])
    template = PromptTemplate.from_template(match.group(2).strip() + "\n")
    if set(template.input_variables) != declared:
        raise PromptError(
            f"{path}: declares {sorted(declared)} but uses {sorted(template.input_variables)}"
        )
    return Prompt(name, version, str(meta.get("description", "")), declared, template)
